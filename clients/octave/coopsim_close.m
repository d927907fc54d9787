function coopsim_close(target)
%COOPSIM_CLOSE  Close a socket made by coopsim_connect or coopsim_port, or a robot made by
%   coopsim_robot.
  if isstruct(target)
    target = target.sock;
  end
  zmq_close(target);
end
