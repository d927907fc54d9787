function x = coopsim_big_endian(x)
%COOPSIM_BIG_ENDIAN  Swap each element's bytes on a little-endian machine, as is on a
%   big-endian one: msgpack numbers are big-endian, so this turns a native array into its
%   wire order and a wire-order array (typecast from the bytes) back. The machine's byte
%   order is asked once (`computer` costs about as much as decoding a number).
  persistent little
  if isempty(little)
    [~, ~, endian] = computer;
    little = endian == 'L';
  end
  if little
    x = swapbytes(x);
  end
end
