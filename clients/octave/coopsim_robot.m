function bot = coopsim_robot(name, nameserver)
%COOPSIM_ROBOT  Open robot NAME (e.g. 'robot1'): a socket on its server and its command table.
%   BOT = COOPSIM_ROBOT(NAME, NAMESERVER) returns a struct with fields name ('/robot1'), sock,
%   ids and commands (from coopsim_commands, fetched once, after a hello with
%   coopsim_version()). Pass BOT to coopsim_request with a
%   command name ('motors.set_speeds') and to coopsim_close. NAMESERVER is as in coopsim_port.
  if nargin < 2, nameserver = ''; end
  bot.name = ['/' name];
  bot.sock = coopsim_port(bot.name, nameserver);
  try
    coopsim_request(bot.sock, 0, '', coopsim_version());   % hello: error 7 from another version
    [bot.ids, bot.commands] = coopsim_commands(bot.sock);
  catch err
    coopsim_close(bot.sock);
    rethrow(err);
  end
end
