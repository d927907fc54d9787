function wander(robot, steps)
%WANDER  Drive forward, turn away from whatever the sonar sees (the Octave/MATLAB twin of
%   clients/python/wander.py).
%   WANDER(ROBOT, STEPS): ROBOT defaults to $COOPSIM_ROBOT or 'robot1', STEPS to forever
%   (both may be strings, as in the command syntax `wander robot1 300`). In lockstep every loop
%   iteration is one simulation step and one round trip: an exchange sends the speeds and brings
%   back the sonar of the step that used them.
  if nargin < 1 || isempty(robot)
    robot = getenv('COOPSIM_ROBOT');
  end
  if isempty(robot)
    robot = 'robot1';
  end
  if nargin < 2
    steps = Inf;
  elseif ischar(steps)
    steps = str2double(steps);
  end
  bot = coopsim_robot(robot);                       % fetches its command table once
  done = onCleanup(@() finish(bot));  %#ok<NASGU> runs on return, error or Ctrl-C
  % the first distances by a read; then one exchange a step: the speeds go out and the sonar
  % of the step that used them comes back (lockstep: after the step)
  sonar = coopsim_request(bot, 'sonar.read');       % 11 distances, index 1 = right side
  d = sonar.data;
  i = 0;
  while i < steps
    [reads, ~, ~, reply] = coopsim_exchange(bot, 'motors.set_speeds', wander_speeds(d), ...
                                            {'sonar.read'});
    coopsim_await_step(reply);                        % queued (paused): one iteration a step
    d = reads{1};
    i = i + 1;
  end
end

function finish(bot)
  % Stop the wheels and leave lockstep so the run does not wait for us; an error here only
  % means the simulation is gone already.
  try
    coopsim_request(bot, 'motors.stop');
    coopsim_request(bot, 'detach');
  catch
  end
  coopsim_close(bot);
end

function speeds = wander_speeds(d)
  cruise = 0.35;                                      % m/s
  safe = 0.6;                                         % m: nearer obstacles make it turn
  right = min(d(1:5));
  left = min(d(7:11));
  ahead = min(d(4:8));
  if ahead < safe
    turn = 2 * (right < left) - 1;                    % turn towards the more open side
    speeds = [-0.2 * turn, 0.2 * turn];
  else
    steer = 0.25 * (min(right, 2) - min(left, 2));    % drift away from near walls
    speeds = [cruise + steer, cruise - steer];
  end
end
