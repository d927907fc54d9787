function keys = coopsim_keys(folder)
%COOPSIM_KEYS  CurveZMQ keys for a simulation started with --keys (docs/protocol.md).
%   KEYS = COOPSIM_KEYS() reads $COOPSIM_SERVER_KEY (a certificate file, or the 40-character
%   key itself) and $COOPSIM_CLIENT_KEY (a secret certificate file), as a run sets them for the
%   controllers it launches; KEYS is a struct with fields server, public and secret (Z85
%   text), or [] when neither variable is set.
%   COOPSIM_KEYS(FOLDER) points those two variables at a client folder (server.key and
%   client.key_secret, as 'coopsim keys' makes in DIR/clients/NAME) for this session, so every
%   connection made afterwards uses its keys, and returns them.
%   coopsim_connect calls it for every socket; a problem raises error 'coopsim:keys'.
  if nargin > 0
    setenv('COOPSIM_SERVER_KEY', fullfile(folder, 'server.key'));
    setenv('COOPSIM_CLIENT_KEY', fullfile(folder, 'client.key_secret'));
  end
  server = getenv('COOPSIM_SERVER_KEY');
  client = getenv('COOPSIM_CLIENT_KEY');
  keys = [];
  if isempty(server) && isempty(client)
    return
  elseif isempty(server) || isempty(client)
    error('coopsim:keys', ['COOPSIM_SERVER_KEY and COOPSIM_CLIENT_KEY must both be set ' ...
          '(a Curve client needs both)']);
  end
  if nargin == 0 && numel(server) == 40 && ~exist(server, 'file')
    keys.server = server;     % the variable holds the key itself
  else
    keys.server = certificate_key(server, 'public-key');
  end
  keys.public = certificate_key(client, 'public-key');
  keys.secret = certificate_key(client, 'secret-key');
end

function key = certificate_key(path, field)
  % The Z85 key on the FIELD line of a ZeroMQ certificate file.
  [fid, msg] = fopen(path, 'r');
  if fid < 0
    error('coopsim:keys', '%s: %s', path, msg);
  end
  text = fread(fid, [1, Inf], 'char=>char');
  fclose(fid);
  found = regexp(text, ['^\s*' field '\s*=\s*"([^"]{40})"'], 'tokens', 'lineanchors', 'once');
  if isempty(found)
    error('coopsim:keys', '%s: no well-formed %s line (not a ZeroMQ certificate?)', path, field);
  end
  key = found{1};
end
