function id = coopsim_id(bot, key)
%COOPSIM_ID  The id robot BOT (from coopsim_robot) declares for command KEY, 'module.name'
%   ('motors.set_speeds'), or 'name' for the commands every robot has ('detach'). A name the
%   robot lacks raises error 'coopsim:unknownname', 'error 5: ...' saying what it has.
  if isKey(bot.ids, key)
    id = bot.ids(key);
    return
  end
  dot = find(key == '.', 1);
  if isempty(dot)
    module = '';
    name = key;
  else
    module = key(1:dot - 1);
    name = key(dot + 1:end);
  end
  labels = unique({bot.commands.module}, 'stable');
  labels = labels(~cellfun(@isempty, labels));
  if ~isempty(module) && ~any(strcmp(labels, module))
    error('coopsim:unknownname', 'error 5: %s has no module ''%s'' (it has: %s)', ...
          bot.name, module, strjoin(labels, ', '));
  end
  names = {bot.commands(strcmp({bot.commands.module}, module)).name};
  if isempty(module)
    module = 'it';
  end
  error('coopsim:unknownname', 'error 5: %s has no command ''%s'' (%s has: %s)', ...
        bot.name, key, module, strjoin(names, ', '));
end
