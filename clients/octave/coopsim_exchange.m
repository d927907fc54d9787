function [reads, step, time, reply] = coopsim_exchange(bot, motion, data, names)
%COOPSIM_EXCHANGE  One motion command and the reads of the step that used it, in one round trip
%   (robot command 6, docs/protocol.md section 3, "Exchange"; protocol 13).
%   [READS, STEP, TIME, REPLY] = COOPSIM_EXCHANGE(BOT, MOTION, DATA, NAMES): MOTION a motion
%   command's name ('motors.set_speeds'), DATA its numbers, NAMES a cell array of up to 16 read
%   names ({'sonar.read'}). Returns when the motion's reply would (in lockstep after the step):
%   READS a cell array with each read's numbers (a row) in the order named, STEP the step and
%   TIME the simulated time (s) they were measured at, REPLY the reply itself (for
%   coopsim_await_step). Errors as coopsim_request.
  if numel(names) > 16
    error('coopsim:remote', 'error 4: an exchange carries at most 16 reads');
  end
  ids = zeros(1, 1 + numel(names));
  ids(1) = coopsim_id(bot, motion);
  for k = 1:numel(names)
    ids(k + 1) = coopsim_id(bot, names{k});
  end
  reply = coopsim_request(bot, 6, '', ids, data);
  step = reply.params(1);
  time = reply.data(1);
  reads = cell(1, numel(names));
  at = 2;                                             % data(1) is the time
  for k = 1:numel(names)
    n = double(reply.params(2 * k));
    reads{k} = reshape(reply.data(at:at + n - 1), 1, []);
    at = at + n;
  end
end
