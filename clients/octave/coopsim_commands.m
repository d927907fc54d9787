function [ids, rows] = coopsim_commands(target, module)
%COOPSIM_COMMANDS  A robot's command table (command 3, `commands`), keyed by name.
%   [IDS, ROWS] = COOPSIM_COMMANDS(TARGET, MODULE): TARGET is a socket on a robot server (from
%   coopsim_port) or a robot from coopsim_robot; MODULE (optional) keeps one module's commands.
%   IDS is a containers.Map from 'module.name' (just 'name' for the commands every robot has,
%   such as 'detach') to the command id. ROWS is a struct array with fields id, name, module,
%   params ([min max]), data ([min max]), text, kind and doc, one element per line of the
%   reply `id name module params_min params_max data_min data_max text kind doc` ('-' = empty
%   word; doc, one sentence, is the rest of the line).
%   Plain MATLAB/Octave apart from the request itself.
  if nargin < 2, module = ''; end
  reply = coopsim_request(target, 3, module);
  rows = struct('id', {}, 'name', {}, 'module', {}, 'params', {}, 'data', {}, ...
                 'text', {}, 'kind', {}, 'doc', {});
  lines = strsplit(reply.text, sprintf('\n'));
  for k = 1:numel(lines)
    if ~isempty(strtrim(lines{k}))
      rows(end + 1) = parse_line(lines{k}); %#ok<AGROW> a table has a few dozen lines
    end
  end
  ids = containers.Map('KeyType', 'char', 'ValueType', 'double');
  for c = rows
    ids(command_key(c.module, c.name)) = c.id;
  end
end

function c = parse_line(line)
  words = strsplit(strtrim(line), ' ');
  w = words(1:min(9, end));
  n = str2double(w);
  if numel(w) ~= 9 || any(isnan(n([1 4 5 6 7])))
    error('coopsim:badreply', 'malformed line in a command table: ''%s''', line);
  end
  % the doc is the rest of the line (it holds spaces); protocol 1 lines have none
  c = struct('id', n(1), 'name', w{2}, 'module', blank(w{3}), 'params', n(4:5), ...
             'data', n(6:7), 'text', blank(w{8}), 'kind', blank(w{9}), ...
             'doc', blank(strjoin(words(10:end), ' ')));
end

function w = blank(w)
  if strcmp(w, '-')
    w = '';
  end
end

function key = command_key(module, name)
  if isempty(module)
    key = name;
  else
    key = [module '.' name];
  end
end
