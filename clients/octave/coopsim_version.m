function v = coopsim_version()
%COOPSIM_VERSION  The protocol version this client speaks, sent in every hello (command 0).
%   A server of another version answers error 7 naming both (docs/protocol.md, Changelog).
  v = 14;
end
