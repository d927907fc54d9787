function reply = coopsim_request(sock, command, text, params, data, timeout_ms)
%COOPSIM_REQUEST  Send one request and return the reply struct (see coopsim_unpack).
%   REPLY = COOPSIM_REQUEST(SOCK, COMMAND, TEXT, PARAMS, DATA, TIMEOUT_MS); all but SOCK and
%   COMMAND may be omitted (timeout 5000 ms). An error reply raises error 'coopsim:remote' with
%   the code and sentence; no reply in time raises 'coopsim:timeout', after which SOCK is no
%   longer usable (a REQ socket waits for its reply): close it and open a new one.
  if nargin < 3, text = ''; end
  if nargin < 4, params = []; end
  if nargin < 5, data = []; end
  if nargin < 6, timeout_ms = 5000; end
  zmq_send(sock, coopsim_pack(command, text, params, data));
  if ~zmq_poll(sock, timeout_ms)
    error('coopsim:timeout', 'error 9: no reply within %d ms', timeout_ms);
  end
  reply = coopsim_unpack(zmq_recv(sock, 1048576));   % replies are far below 1 MiB
  if reply.error ~= 0
    error('coopsim:remote', 'error %d: %s', reply.error, reply.text);
  end
end
