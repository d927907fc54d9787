// coopsim.js: a small Node.js client for the coopsim wire protocol (docs/protocol.md).
//
// A message is one ZeroMQ frame holding a msgpack array of five items:
//   [error_code, text, command, params (integers), data (numbers)]
// Requests go out on ZeroMQ REQ sockets (one per endpoint); every call has a timeout and every
// error reply rejects with a RemoteError carrying the protocol's error code.
import { decode, encode } from "@msgpack/msgpack";
import * as zmq from "zeromq";

export const PROTOCOL_VERSION = 1;
export const DEFAULT_NAMESERVER = "tcp://127.0.0.1:10000";
export const TIMEOUT = 9; // error code of a request that got no reply in time

/** A non-zero error code in a reply (see docs/protocol.md section 2). */
export class RemoteError extends Error {
  constructor(code, text, command) {
    super(`error ${code}: ${text}`);
    this.code = code;
    this.text = text;
    this.command = command;
  }
}

/** Pack a request: [0, text, command, params, data]. */
export function pack(command, text = "", params = [], data = []) {
  // A whole number such as 1.0 goes out as a msgpack integer; the servers accept that.
  return encode([0, text, command, params, data]);
}

/** Unpack a reply into {error, text, command, params, data}; throws on a malformed one. */
export function unpack(frame) {
  const items = decode(frame);
  if (!Array.isArray(items) || items.length !== 5) {
    throw new RemoteError(1, "the reply is not a five-item array", -1);
  }
  const [error, text, command, params, data] = items;
  return { error, text, command, params, data };
}

/** A connection to a simulation (or to robots) through its name server. */
export class Client {
  constructor({ nameserver, timeout = 5000 } = {}) {
    this.nameserver = nameserver || process.env.COOPSIM_NAMESERVER || DEFAULT_NAMESERVER;
    this.timeout = timeout;
    this.sockets = new Map();
  }

  socket(endpoint) {
    let sock = this.sockets.get(endpoint);
    if (!sock) {
      // relaxed + correlate: after a timeout the socket stays usable and a late reply is dropped
      sock = new zmq.Request({ linger: 0, receiveTimeout: this.timeout, relaxed: true,
                               correlate: true });
      sock.connect(endpoint);
      this.sockets.set(endpoint, sock);
    }
    return sock;
  }

  /** Send one request and resolve with the reply; rejects with RemoteError on an error. */
  async request(endpoint, command, text = "", params = [], data = []) {
    const sock = this.socket(endpoint);
    await sock.send(pack(command, text, params, data));
    let frame;
    try {
      [frame] = await sock.receive();
    } catch (err) {
      if (err.code !== "EAGAIN") throw err;
      throw new RemoteError(TIMEOUT, `no reply from ${endpoint} within ${this.timeout} ms`,
                            command);
    }
    const reply = unpack(frame);
    if (reply.error) throw new RemoteError(reply.error, reply.text, reply.command);
    return reply;
  }

  /** The endpoint of a port name such as "/robot1/motors". */
  async lookup(name) {
    return (await this.request(this.nameserver, 1, name)).text;
  }

  /** A handle on robot `name`: one socket serves all its modules. */
  async robot(name) {
    return new Robot(this, name, await this.lookup(`/${name}`));
  }

  /** Send any /sim command (see docs/protocol.md section 4). */
  async sim(command, text = "", params = [], data = []) {
    return this.request(await this.lookup("/sim"), command, text, params, data);
  }

  close() {
    for (const sock of this.sockets.values()) sock.close();
    this.sockets.clear();
  }
}

/** A robot's modules; command ids as in docs/protocol.md section 3. */
export class Robot {
  constructor(client, name, endpoint) {
    Object.assign(this, { client, name, endpoint });
  }

  call(command, text = "", params = [], data = []) {
    return this.client.request(this.endpoint, command, text, params, data);
  }

  async read(command) {
    return (await this.call(command)).data;
  }

  sonar() { return this.read(200); } // 11 distances, index 0 = right ... 10 = left
  gps() { return this.read(500); } // [x, y]
  compass() { return this.read(600); } // [yaw]

  /** Wheel speeds in m/s; in lockstep this resolves after the step that used them. */
  async setSpeeds(left, right) {
    const reply = await this.call(100, "", [], [left, right]);
    return { step: reply.params[0], time: reply.data[0], mode: reply.text };
  }

  stop() { return this.call(102); }

  /** Leave lockstep: the simulation stops waiting for this controller. */
  detach() { return this.call(2); }
}
