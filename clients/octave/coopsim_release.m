function reply = coopsim_release(bot)
%COOPSIM_RELEASE  Give robot BOT up (it also leaves lockstep): another connection may drive it.
%   REPLY.params(1) is 1 when this connection owned it. Raises 'coopsim:owned' (error 11) when
%   another connection owns it.
  reply = coopsim_request(bot, 5);
end
