function sock = coopsim_port(name, nameserver)
%COOPSIM_PORT  A socket on the server behind port NAME (e.g. '/robot1').
%   NAMESERVER defaults to $COOPSIM_NAMESERVER, else 'tcp://127.0.0.1:10000'. The name server
%   answers the look-up (command 1) with the endpoint in its text.
  if nargin < 2 || isempty(nameserver)
    nameserver = getenv('COOPSIM_NAMESERVER');
  end
  if isempty(nameserver)
    nameserver = 'tcp://127.0.0.1:10000';
  end
  names = coopsim_connect(nameserver);
  try
    reply = coopsim_request(names, 1, name);
  catch err
    coopsim_close(names);
    rethrow(err);
  end
  coopsim_close(names);
  sock = coopsim_connect(reply.text);
end
