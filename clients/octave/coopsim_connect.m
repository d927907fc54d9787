function sock = coopsim_connect(endpoint)
%COOPSIM_CONNECT  A ZeroMQ REQ socket connected to ENDPOINT (e.g. 'tcp://127.0.0.1:10000').
%   With CurveZMQ keys (see coopsim_keys) the socket is a Curve client with them.
%   One of the three files that call ZeroMQ (with coopsim_request and coopsim_close): a MATLAB
%   user replaces these with another ZeroMQ binding; see README.md.
  if exist('OCTAVE_VERSION', 'builtin')
    pkg load zeromq
    % A simulator ends its controllers with SIGTERM; without this Octave would answer by
    % dumping its workspace into a file 'octave-workspace' in the current folder.
    crash_dumps_octave_core(false);
  end
  keys = coopsim_keys();
  sock = zmq_socket(ZMQ_REQ);
  if ~isempty(keys)
    zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, keys.server);
    zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, keys.public);
    zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, keys.secret);
  end
  if ~zmq_connect(sock, endpoint)
    error('coopsim:connect', 'cannot connect to %s', endpoint);
  end
end
