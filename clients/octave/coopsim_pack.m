function bytes = coopsim_pack(command, text, params, data)
%COOPSIM_PACK  Pack a coopsim request: the msgpack array [0, text, command, params, data].
%   BYTES = COOPSIM_PACK(COMMAND, TEXT, PARAMS, DATA) returns a uint8 row vector, one ZeroMQ
%   frame. TEXT, PARAMS (integers) and DATA (numbers, sent as float64) may be omitted.
%   Plain MATLAB/Octave: no toolbox needed. See docs/protocol.md.
  if nargin < 2, text = ''; end
  if nargin < 3, params = []; end
  if nargin < 4, data = []; end
  t = unicode2native(char(text), 'UTF-8');
  t = uint8(t(:)');
  bytes = [uint8(149), uint8(0), str_header(numel(t)), t, pack_int(command), ...
           array_header(numel(params))];
  for p = params(:)'
    bytes = [bytes, pack_int(p)]; %#ok<AGROW> params are few
  end
  n = numel(data);
  doubles = reshape(big_endian(double(data(:)')), 8, n);
  bytes = [bytes, array_header(n), reshape([repmat(uint8(203), 1, n); doubles], 1, [])];
end

function b = pack_int(v)
  if v >= 0 && v <= 127
    b = uint8(v);                                   % positive fixint
  else
    b = [uint8(211), big_endian(int64(v))];          % int64
  end
end

function b = str_header(n)
  if n < 32
    b = uint8(160 + n);                             % fixstr
  elseif n < 256
    b = uint8([217, n]);                            % str8
  elseif n < 65536
    b = [uint8(218), big_endian(uint16(n))];        % str16
  else
    b = [uint8(219), big_endian(uint32(n))];        % str32
  end
end

function b = array_header(n)
  if n < 16
    b = uint8(144 + n);                             % fixarray
  elseif n < 65536
    b = [uint8(220), big_endian(uint16(n))];        % array16
  else
    b = [uint8(221), big_endian(uint32(n))];        % array32
  end
end

function b = big_endian(x)
  % msgpack is big-endian: the bytes of x in wire order
  b = typecast(coopsim_big_endian(x), 'uint8');
end
