"""The net layer: the wire protocol and every server of a run (ZeroMQ).

``protocol.py`` is the wire (five-item msgpack messages, the servers' command tables);
``server.py`` the server base that decodes, checks and answers every request, whatever it holds.
The robots' endpoints share one ROUTER socket in ``robothub.py``, served by the stepper's own
thread while it waits between steps (``robotport.py``: what one robot answers; ``hubreads.py``:
reads during a long step; ``offload.py``: inverse kinematics off the stepper; ``imagereads.py``:
camera images within their budgets; ``exchange.py``: a motion command and its reads in one
request). The other servers run a thread each: the name server (``nameserver.py``), ``/sim``
(``simserver.py``), the state stream (``statestream.py``), squads (``squads.py``,
``steerowners.py``), external poses (``posechannel.py``) and the JSON-lines gateway
(``gateway*.py``). ``network.py`` starts them together; ``security.py`` is CurveZMQ and the
bind policy, ``ports.py`` the port ranges, ``liveness.py`` whether a client's connection is up.
The Python client uses only ``protocol.py``, ``liveness.py``, ``security.py``'s client keys and
``statestream.py``'s decoder.
"""
