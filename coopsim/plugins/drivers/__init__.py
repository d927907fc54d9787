"""Built-in drivers: controllers written once, hosted in-process (``driver LABEL`` in a robot
section) or over the network (``coopsim drive LABEL ROBOT``, or the scripts in clients/python).
They import only the model layer, so a network controller needs neither pymunk nor zmq's
simulator side."""
