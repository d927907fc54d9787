"""A controller that sends garbage to its robot: bytes that are no message, unknown command
ids, wrong arities and values."""

import os

import msgpack
import zmq

from coopsim.client import Client

with Client() as client:
    endpoint = client.robot(os.environ.get("COOPSIM_ROBOT", "robot1")).endpoint
sock = zmq.Context.instance().socket(zmq.REQ)
sock.setsockopt(zmq.LINGER, 0)
sock.connect(endpoint)
junk = [b"\x00\xffnot msgpack", msgpack.packb([0, "", 9999, [], []]),
        msgpack.packb([0, "", 100, [], ["fast"]]), msgpack.packb(["hello"]),
        msgpack.packb([0, "", 100, [], [1e9, 1e9]])]
for i in range(200):
    sock.send(junk[i % len(junk)])
    if not sock.poll(5000):
        break
    sock.recv()
