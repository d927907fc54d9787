function conformance()
%CONFORMANCE  The Octave client's transcript runner (docs/protocol.md section 10).
%   coopsim conformance NAMESERVER --client "octave-cli --no-init-file --eval conformance"
%   (run in clients/octave) reads one request per line on stdin and writes the reply on stdout:
%     request:  CONN \t PORT \t COMMAND \t TEXT_HEX \t P1,P2,... \t D1,D2,...
%     reply:    ERROR \t COMMAND \t TEXT_HEX \t P1,... \t D1,...
%   It sends with this client's own functions (coopsim_port, coopsim_pack, coopsim_unpack: the
%   steps of coopsim_request, without turning an error reply into an Octave error, so the
%   whole reply is seen). Each CONN (1 or 2) has its own sockets, one per server.
  nameserver = getenv('COOPSIM_NAMESERVER');
  socks = struct();
  names = coopsim_connect(nameserver);
  while true
    try
      line = input('', 's');   % fgetl(stdin) on a pipe waits for more than a line
    catch
      break;                   % end of input
    end
    f = strsplit(line, "\t", 'CollapseDelimiters', false);
    [sock, socks] = socket_for(socks, names, f{1}, f{2}, nameserver);
    text = native2unicode(uint8(sscanf(f{4}, '%2x')'), 'UTF-8');
    zmq_send(sock, coopsim_pack(str2double(f{3}), text, numbers(f{5}), numbers(f{6})));
    if zmq_poll(sock, 10000)
      r = coopsim_unpack(zmq_recv(sock, 1048576));
    else
      r = struct('error', 9, 'text', 'no reply within 10000 ms', 'command', str2double(f{3}), ...
                 'params', [], 'data', []);
    end
    printf("%d\t%d\t%s\t%s\t%s\n", r.error, r.command, ...
           lower(reshape(dec2hex(unicode2native(r.text, 'UTF-8'), 2)', 1, [])), ...
           joined(r.params, '%d'), joined(r.data, '%.17g'));
    fflush(stdout);
  end
  for k = fieldnames(socks)'
    coopsim_close(socks.(k{1}));
  end
  coopsim_close(names);
end

function [sock, socks] = socket_for(socks, names, conn, port, nameserver)
  % The socket of PORT for connection CONN (all of a robot's module names share one).
  if strcmp(port, '/nameserver'), sock = names; return; end
  parts = strsplit(port, '/');
  key = matlab.lang.makeValidName(['c' conn '_' parts{2}]);
  if ~isfield(socks, key)
    socks.(key) = coopsim_port(port, nameserver);
  end
  sock = socks.(key);
end

function v = numbers(s)
  if isempty(s), v = []; else, v = str2double(strsplit(s, ',')); end
end

function s = joined(v, fmt)
  s = strjoin(arrayfun(@(x) sprintf(fmt, x), v, 'UniformOutput', false), ',');
end
