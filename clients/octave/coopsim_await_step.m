function coopsim_await_step(reply, nameserver)
%COOPSIM_AWAIT_STEP  After a lockstep motion reply answered queued, wait for the step that uses it.
%   COOPSIM_AWAIT_STEP(REPLY, NAMESERVER): REPLY a motion command's reply (coopsim_request) or an
%   exchange's (the fourth output of coopsim_exchange). When its text starts with 'lockstep:
%   queued' (the run is paused, or its first step waits for other controllers) it waits until
%   /sim's status (asked every 0.25 s) shows another step than REPLY.params(1), the run was
%   reset, or it has finished (its state document, asked every 1 s, names why it ended); any
%   other reply returns at once. Called after each iteration's motion command, it keeps a loop's
%   iterations one a step while the run is paused and stepped by hand, as Python's Robot.loop
%   does. NAMESERVER is as in coopsim_port. Errors as coopsim_request.
  if nargin < 2, nameserver = ''; end
  if isempty(reply.params) || ~strncmp(reply.text, 'lockstep: queued', 16)
    return
  end
  step = reply.params(1);
  sim = coopsim_port('/sim', nameserver);
  done = onCleanup(@() coopsim_close(sim));  %#ok<NASGU>
  polls = 0;
  while true
    status = coopsim_request(sim, 1);
    if isempty(status.params) || status.params(1) ~= step
      return                                          % used, or the run was reset
    end
    if mod(polls, 4) == 0
      state = coopsim_request(sim, 23);
      if isempty(strfind(state.text, '"finished": ""'))
        return                                        % it ended: no step will use it
      end
    end
    polls = polls + 1;
    pause(0.25);
  end
end
