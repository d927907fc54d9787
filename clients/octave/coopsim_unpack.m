function msg = coopsim_unpack(bytes)
%COOPSIM_UNPACK  Unpack a coopsim reply into a struct with fields
%   error, text, command, params (row of doubles) and data (row of doubles).
%   Decodes the msgpack types a five-item message uses. Plain MATLAB/Octave.
  bytes = uint8(bytes(:)');
  [items, pos] = next_item(bytes, 1);
  if ~iscell(items) || numel(items) ~= 5 || pos ~= numel(bytes) + 1
    error('coopsim:badreply', 'the reply is not a five-item msgpack array');
  end
  msg = struct('error', items{1}, 'text', items{2}, 'command', items{3}, ...
               'params', cell2mat(items{4}), 'data', cell2mat(items{5}));
end

function [v, pos] = next_item(b, pos)
  t = double(b(pos));
  pos = pos + 1;
  if t <= 127                                       % positive fixint
    v = t;
  elseif t >= 224                                   % negative fixint
    v = t - 256;
  elseif t >= 160 && t <= 191                       % fixstr
    [v, pos] = take_str(b, pos, t - 160);
  elseif t >= 144 && t <= 159                       % fixarray
    [v, pos] = take_array(b, pos, t - 144);
  else
    [v, pos] = next_tagged(b, pos, t);
  end
end

function [v, pos] = next_tagged(b, pos, t)
  sizes = [1 2 4 8];
  switch t
    case 192, v = [];                               % nil
    case {194, 195}, v = double(t == 195);          % false, true
    case 202, [v, pos] = take_num(b, pos, 4, 'single');
    case 203, [v, pos] = take_num(b, pos, 8, 'double');
    case {204, 205, 206, 207}                       % uint8..uint64
      [v, pos] = take_num(b, pos, sizes(t - 203), sprintf('uint%d', 8 * sizes(t - 203)));
    case {208, 209, 210, 211}                       % int8..int64
      [v, pos] = take_num(b, pos, sizes(t - 207), sprintf('int%d', 8 * sizes(t - 207)));
    case {217, 218, 219}                            % str8, str16, str32
      [n, pos] = take_num(b, pos, sizes(t - 216), sprintf('uint%d', 8 * sizes(t - 216)));
      [v, pos] = take_str(b, pos, n);
    case {220, 221}                                 % array16, array32
      [n, pos] = take_num(b, pos, 2 * (t - 219), sprintf('uint%d', 16 * (t - 219)));
      [v, pos] = take_array(b, pos, n);
    otherwise
      error('coopsim:badreply', 'unexpected msgpack type 0x%02x', t);
  end
end

function [v, pos] = take_num(b, pos, n, cls)
  v = double(coopsim_big_endian(typecast(b(pos:pos + n - 1), cls)));
  pos = pos + n;
end

function [v, pos] = take_str(b, pos, n)
  v = native2unicode(b(pos:pos + n - 1), 'UTF-8');
  v = v(:)';
  pos = pos + n;
end

function [v, pos] = take_array(b, pos, n)
  last = pos + 9 * n - 1;
  if n > 1 && last <= numel(b) && all(b(pos:9:last) == 203)
    % n float64s in a row (a reading's data): one typecast for them all, the same numbers
    x = reshape(b(pos:last), 9, n);
    v = num2cell(double(coopsim_big_endian(typecast(reshape(x(2:9, :), 1, []), 'double'))));
    pos = last + 1;
    return
  end
  v = cell(1, n);
  for i = 1:n
    [v{i}, pos] = next_item(b, pos);
  end
end
