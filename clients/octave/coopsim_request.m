function reply = coopsim_request(target, command, text, params, data, timeout_ms)
%COOPSIM_REQUEST  Send one request and return the reply struct (see coopsim_unpack).
%   REPLY = COOPSIM_REQUEST(TARGET, COMMAND, TEXT, PARAMS, DATA, TIMEOUT_MS); all but TARGET and
%   COMMAND may be omitted (timeout 5000 ms). TARGET is a robot from coopsim_robot, with COMMAND
%   a name such as 'motors.set_speeds' (see coopsim_id) or an id; or a socket from coopsim_port,
%   with COMMAND an id. An error reply raises error 'coopsim:remote' with the code and sentence
%   ('coopsim:owned' for error 11: another connection owns the robot; see coopsim_claim);
%   no reply in time raises 'coopsim:timeout', after which the socket is no longer usable (a REQ
%   socket waits for its reply): close it and open a new one.
  if nargin < 3, text = ''; end
  if nargin < 4, params = []; end
  if nargin < 5, data = []; end
  if nargin < 6, timeout_ms = 5000; end
  [sock, command] = resolve(target, command);
  % Without waiting: a socket whose connection was refused at the CurveZMQ handshake (no keys,
  % keys the server does not list) has nowhere to send, and a blocking send would wait forever.
  if zmq_send(sock, coopsim_pack(command, text, params, data), ZMQ_DONTWAIT) < 0
    error('coopsim:timeout', ['error 9: no connection to the server (refused at the CurveZMQ ' ...
          'handshake? see docs/protocol.md section 8)']);
  end
  if ~zmq_poll(sock, timeout_ms)
    error('coopsim:timeout', 'error 9: no reply within %d ms', timeout_ms);
  end
  reply = coopsim_unpack(zmq_recv(sock, 1048576));   % replies are far below 1 MiB
  if reply.error == 11   % another connection owns the robot; the text names it
    error('coopsim:owned', 'error %d: %s', reply.error, reply.text);
  elseif reply.error ~= 0
    error('coopsim:remote', 'error %d: %s', reply.error, reply.text);
  end
end

function [sock, command] = resolve(target, command)
  % The socket to send on, and the id a command name stands for on that robot.
  if ~isstruct(target)
    sock = target;
    if ischar(command)
      error('coopsim:unknownname', ['command ''%s'': a command name needs a robot from ' ...
            'coopsim_robot, not a socket'], command);
    end
    return
  end
  sock = target.sock;
  if ischar(command)
    command = coopsim_id(target, command);
  end
end
