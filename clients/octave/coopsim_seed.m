function s = coopsim_seed(robot, fallback)
%COOPSIM_SEED  The seed of ROBOT's random stream in the run that launched this controller.
%   S = COOPSIM_SEED(ROBOT, FALLBACK) is $COOPSIM_ROBOT_SEED, else the CRC-32 (zlib's) of the
%   text '<$COOPSIM_SEED>/<ROBOT>', else FALLBACK (started by hand without a seed). Seed
%   Octave's generator with it, rand('twister', S), so the same scenario and seed give the
%   same run (docs/protocol.md, "Launched controllers").
  own = getenv('COOPSIM_ROBOT_SEED');
  run = getenv('COOPSIM_SEED');
  if ~isempty(own)
    s = str2double(own);
  elseif ~isempty(run)
    s = crc32_text([run '/' robot]);
  else
    s = fallback;
  end
end

function crc = crc32_text(text)
  crc = uint32(4294967295);
  poly = uint32(3988292384);  % 0xEDB88320, reflected
  for byte = uint32(unicode2native(text, 'UTF-8'))
    crc = bitxor(crc, byte);
    for k = 1:8
      if bitand(crc, uint32(1))
        crc = bitxor(bitshift(crc, -1), poly);
      else
        crc = bitshift(crc, -1);
      end
    end
  end
  crc = double(bitxor(crc, uint32(4294967295)));
end
