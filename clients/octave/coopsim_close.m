function coopsim_close(sock)
%COOPSIM_CLOSE  Close a socket made by coopsim_connect or coopsim_port.
  zmq_close(sock);
end
