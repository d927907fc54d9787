function reply = coopsim_claim(bot, force)
%COOPSIM_CLAIM  Own robot BOT: its motion commands are this connection's alone until released.
%   REPLY = COOPSIM_CLAIM(BOT) claims the robot from coopsim_robot; REPLY.text says how the
%   simulator names this connection. COOPSIM_CLAIM(BOT, 1) takes it from another owner (for
%   operators). When another connection owns it (and FORCE is 0) this raises 'coopsim:owned'
%   with error 11 and the owner's name (docs/protocol.md section 3, "Ownership").
  if nargin < 2, force = 0; end
  reply = coopsim_request(bot, 4, '', double(logical(force)));
end
