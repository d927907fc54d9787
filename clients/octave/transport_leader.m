function transport_leader(robot, color, speed, steps)
%TRANSPORT_LEADER  Lead a bar-carrying team2 to the target of a colour by attractor dynamics
%   (the Octave/MATLAB twin of coopsim's transport_leader driver,
%   coopsim/plugins/drivers/transport.py, with its default parameters).
%   TRANSPORT_LEADER(ROBOT, COLOR, SPEED, STEPS): ROBOT defaults to $COOPSIM_ROBOT or
%   'team1_leader', COLOR to 'magenta', SPEED (cruising speed, m/s) to 0.3, STEPS to until the
%   run ends; each may be a string (command syntax: `transport_leader team1_leader magenta 0.32`).
%
%   Heading: dphi/dt = attract * sin(bearing of the target) + the sonar's repellers, each
%   beta1 * exp(-d / beta2) strong over the angle the obstacle subtends. Speed: relaxes at rate
%   accel to min(speed, 0.5 m/s per m to go, clearance ahead / contact) * max(0, cos(bearing)).
%   It stops when the bar's centre (reach m behind its support, along the bar) is within
%   arrived of the target, or has passed its closest point on the last stretch.
  if nargin < 1 || isempty(robot), robot = getenv('COOPSIM_ROBOT'); end
  if isempty(robot), robot = 'team1_leader'; end
  if nargin < 2 || isempty(color), color = 'magenta'; end
  if nargin < 3, speed = 0.3; elseif ischar(speed), speed = str2double(speed); end
  if nargin < 4, steps = Inf; elseif ischar(steps), steps = str2double(steps); end
  p = struct('speed', speed, 'arrived', 0.15, 'reach', 0.6, 'attract', 1.5, 'contact', 2.0, ...
             'accel', 2.0, 'beta1', 4.0, 'beta2', 0.35, 'radius', 0.4, 'max_turn', 1.2);
  bot = coopsim_robot(robot);
  done_cleanup = onCleanup(@() finish(bot));  %#ok<NASGU> runs on return, error or Ctrl-C
  v = 0; last = NaN; now = 0; closest = Inf; done = false; i = 0;
  while i < steps
    dt = 0; if ~isnan(last), dt = now - last; end
    last = now;
    tgt = coopsim_request(bot, 'target.read_color', color);   % distance (m), bearing (rad)
    sonar = coopsim_request(bot, 'sonar.read');               % 11 distances, right to left
    sup = coopsim_request(bot, 'support.read');               % bar angle (rad), force (N)
    [left, right, v, closest, done] = control(p, tgt.data, sonar.data, sup.data(1), v, dt, ...
                                              closest, done);
    try
      r = coopsim_request(bot, 'motors.set_speeds', '', [], [left right]);
    catch err
      if ~isempty(strfind(err.message, 'finished')), break; end   % the run has ended
      rethrow(err);
    end
    now = r.data(1);                                          % sim time after the step, s
    i = i + 1;
  end
end

function [left, right, v, closest, done] = control(p, tgt, d, bar, v, dt, closest, done)
  distance = tgt(1); bearing = tgt(2);
  % the bar's centre lies reach behind the support, along the bar
  to_go = hypot(distance * cos(bearing) + p.reach * cos(bar), ...
                distance * sin(bearing) + p.reach * sin(bar));
  final = distance < p.reach;                                 % the last stretch: straight on
  done = done || to_go < p.arrived || (final && to_go > closest + 0.05);
  closest = min(closest, to_go);
  if done
    v = 0; left = 0; right = 0;
    return
  end
  turn = avoid(p, d);
  if ~final, turn = turn + p.attract * sin(bearing); end
  wanted = min([p.speed, 0.5 * to_go, min(d(3:9)) / p.contact]);
  if ~final, wanted = wanted * max(0, cos(bearing)); end
  v = wanted + (v - wanted) * exp(-p.accel * max(dt, 0));
  turn = max(-p.max_turn, min(p.max_turn, turn));
  half = max(-0.6, min(0.6, turn * 0.34 / 2));               % wheels 0.34 m apart, 0.6 m/s
  room = 0.6 - abs(half);
  forward = max(-room, min(room, v));
  left = forward - half; right = forward + half;
end

function rate = avoid(p, d)
  % repellers of what the sonar sees (readings from 1.99 m on mean nothing there)
  angles = deg2rad(-90:18:90);
  rate = 0;
  for k = 1:11
    if d(k) >= 1.99, continue; end
    strength = p.beta1 * exp(-d(k) / p.beta2);
    sigma = atan(tan(deg2rad(9)) + p.radius / (p.radius + max(d(k), 0)));
    rate = rate - strength * angles(k) * exp(-angles(k)^2 / (2 * sigma^2));
  end
  % repellers that cancel dead ahead leave the heading on an unstable point: nudge it
  if abs(rate) < 0.05 && min(d(5:7)) < 3 * p.radius
    if sum(d(7:11)) >= sum(d(1:5)), rate = rate + 0.3; else, rate = rate - 0.3; end
  end
end

function finish(bot)
  % Stop the wheels and leave lockstep; an error here means the run is over already.
  try
    coopsim_request(bot, 'motors.stop');
    coopsim_request(bot, 'detach');
  catch
  end
  coopsim_close(bot);
end
