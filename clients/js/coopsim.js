// coopsim.js: a small Node.js client for the coopsim wire protocol (docs/protocol.md).
//
// A message is one ZeroMQ frame holding a msgpack array of five items:
//   [error_code, text, command, params (integers), data (numbers)]
// Requests go out on ZeroMQ REQ sockets (one per endpoint); every call has a timeout and every
// error reply rejects with a RemoteError carrying the protocol's error code. For a simulation
// started with --keys every socket is a CurveZMQ client (loadKeys).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { decode, encode } from "@msgpack/msgpack";
import * as zmq from "zeromq";

export const PROTOCOL_VERSION = 14; // sent in every hello (docs/protocol.md, Changelog)
export const DEFAULT_NAMESERVER = "tcp://127.0.0.1:10000";
export const TIMEOUT = 9; // error code of a request that got no reply in time
// error code of a motion command to a robot another connection owns; its text names the owner
// (docs/protocol.md section 3, "Ownership")
export const OWNED = 11;
export const UNKNOWN_NAME = 5; // error code of a module or command name a robot lacks
// what a lockstep motion reply's text starts with while the step that will use its command has
// not come: the run is paused, or its first step waits for other controllers (docs/protocol.md
// section 3, "Motion replies and lockstep")
export const QUEUED = "lockstep: queued";
const QUEUED_POLL_MS = 250; // between two looks at /sim's status while a command waits
const FINISHED_EVERY = 4; // of those looks, every how many also asks whether the run ended

/** A protocol error code (docs/protocol.md section 2) with its sentence: from an error reply,
 * or the client's own for the same reasons (9: no reply in time; 5: a name the robot lacks). */
/** CRC-32 of a text's UTF-8 bytes, as zlib computes it. */
function crc32(text) {
  let crc = 0xffffffff;
  for (const byte of new TextEncoder().encode(text)) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** The seed of `robot`'s random stream in the run that launched this controller:
 * $COOPSIM_ROBOT_SEED, else the CRC-32 of "<$COOPSIM_SEED>/<robot>", else `fallback` (started by
 * hand without a seed). Same scenario and seed, same choices (docs/protocol.md, "Launched
 * controllers"). */
export function robotSeed(robot, fallback = null, env = process.env) {
  if (env.COOPSIM_ROBOT_SEED) return Number.parseInt(env.COOPSIM_ROBOT_SEED, 10);
  if (!env.COOPSIM_SEED) return fallback;
  return crc32(`${env.COOPSIM_SEED}/${robot}`);
}

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

const Z85_KEY = /^[0-9a-zA-Z.\-:+=^!/*?&<>()[\]{}@%$#]{40}$/;

/** The Z85 key on the `field` line ("public-key" or "secret-key") of a ZeroMQ certificate file
 * (the format `coopsim keys` writes); throws an Error naming the file when it is not there. */
export function certificateKey(path, field) {
  let text;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`${path}: ${err.code === "ENOENT" ? "no such file" : err.message}`);
  }
  for (const line of text.split("\n")) {
    const m = line.trim().match(/^([a-z-]+)\s*=\s*["']?([^"'\s]*)["']?$/);
    if (m && m[1] === field) {
      if (!Z85_KEY.test(m[2])) throw new Error(`${path}: its ${field} is not 40 Z85 characters`);
      return m[2];
    }
  }
  throw new Error(`${path}: no ${field} line (not a ZeroMQ certificate?)`);
}

/**
 * CurveZMQ keys for a simulation started with --keys: { server, publicKey, secretKey } (Z85).
 * `keys` is a client folder (server.key and client.key_secret, as `coopsim keys` makes in
 * DIR/clients/NAME), or such an object; without it $COOPSIM_SERVER_KEY (a certificate file, or
 * the 40-character key) and $COOPSIM_CLIENT_KEY (a secret certificate file) are read, as a run
 * sets them for the controllers it launches. Returns null when none are given or set.
 */
export function loadKeys(keys = null, env = process.env) {
  if (keys && typeof keys === "object") return keys;
  let server = env.COOPSIM_SERVER_KEY;
  let client = env.COOPSIM_CLIENT_KEY;
  if (typeof keys === "string") {
    [server, client] = [join(keys, "server.key"), join(keys, "client.key_secret")];
  } else if (!server && !client) {
    return null;
  } else if (!server || !client) {
    const missing = server ? "COOPSIM_CLIENT_KEY" : "COOPSIM_SERVER_KEY";
    throw new Error(`${missing} is not set: a Curve client needs both COOPSIM_SERVER_KEY ` +
                    "and COOPSIM_CLIENT_KEY");
  }
  // Only the variable may hold the key itself: a 40-character value naming no file.
  const raw = typeof keys !== "string" && Z85_KEY.test(server) && !existsSync(server);
  const serverKey = raw ? server : certificateKey(server, "public-key");
  return { server: serverKey, publicKey: certificateKey(client, "public-key"),
           secretKey: certificateKey(client, "secret-key") };
}

/** Why a request socket's server is not there ("" while it is, or while its handshake goes
 * on: a starved server may take long; ZeroMQ gives a handshake 30 s). */
function gone(link) {
  if (link.lost) return "its connection closed (the server stopped or crashed)";
  if (link.up || (link.connected && !link.failed)) return "";
  if (link.failed) {
    return "it refused the handshake (keys it does not accept, or not a request server)";
  }
  return "no connection to it (nothing listens there)";
}

/** A connection to a simulation (or to robots) through its name server. */
export class Client {
  constructor({ nameserver, timeout = 5000, keys = null } = {}) {
    this.nameserver = nameserver || process.env.COOPSIM_NAMESERVER || DEFAULT_NAMESERVER;
    this.timeout = timeout;
    this.keys = loadKeys(keys);
    this.sockets = new Map();
    this.links = new WeakMap(); // socket -> { up, lost }: is its server still there?
  }

  socket(endpoint) {
    let sock = this.sockets.get(endpoint);
    if (!sock) {
      const curve = this.keys ? { curveServerKey: this.keys.server,
                                  curvePublicKey: this.keys.publicKey,
                                  curveSecretKey: this.keys.secretKey } : {};
      // relaxed + correlate: after a timeout the socket stays usable and a late reply is dropped
      // sendTimeout: a connection refused at the CurveZMQ handshake leaves nowhere to send
      sock = new zmq.Request({ linger: 0, receiveTimeout: this.timeout, relaxed: true,
                               correlate: true, sendTimeout: this.timeout, ...curve });
      // Is the server still there? (see request): the connection's handshake and closing
      const link = { connected: false, up: false, failed: false, lost: false };
      sock.events.on("connect", () => { link.connected = true; });
      sock.events.on("handshake", () => { link.up = true; });
      for (const type of ["handshake:error:protocol", "handshake:error:auth",
                          "handshake:error:other"]) {
        sock.events.on(type, () => { link.failed = true; });
      }
      for (const type of ["disconnect", "close"]) {
        sock.events.on(type, () => {
          Object.assign(link, { lost: link.lost || link.up, up: false, connected: false });
        });
      }
      this.links.set(sock, link);
      sock.connect(endpoint);
      this.sockets.set(endpoint, sock);
    }
    return sock;
  }

  /**
   * Send one request and resolve with the reply; rejects with RemoteError on an error. A reply
   * later than the timeout is waited for while the server's connection is up (a lockstep step,
   * a busy machine, a simulator stopped in a debugger); error 9 when the connection never came
   * up or closed (docs/protocol.md section 3).
   */
  async request(endpoint, command, text = "", params = [], data = []) {
    const sock = this.socket(endpoint);
    let frame;
    let frames = [];
    try {
      await sock.send(pack(command, text, params, data));
    } catch (err) {
      if (err.code !== "EAGAIN") throw err;
      this.#drop(endpoint);
      throw new RemoteError(TIMEOUT, `no reply from ${endpoint} within ${this.timeout} ms`,
                            command);
    }
    while (frame === undefined) {
      try {
        // protocol 11: a camera read ending with "frame" has its pixels in a second frame
        [frame, ...frames] = await sock.receive();
      } catch (err) {
        if (err.code !== "EAGAIN") throw err;
        // the socket's events come through the same event loop: let those pending arrive
        await new Promise((resolve) => setTimeout(resolve, 10));
        const why = gone(this.links.get(sock));
        if (why) {
          this.#drop(endpoint);
          throw new RemoteError(TIMEOUT, `no reply from ${endpoint}: ${why}`, command);
        }
      }
    }
    const reply = unpack(frame);
    if (reply.error) throw new RemoteError(reply.error, reply.text, reply.command);
    if (frames.length) reply.frames = frames; // Buffers, after the message's own frame
    return reply;
  }

  /** The endpoint of a port name such as "/robot1/motors". */
  async lookup(name) {
    return (await this.request(this.nameserver, 1, name)).text;
  }

  /** A handle on robot `name` with its command table (command 3), fetched once, after a
   * hello with PROTOCOL_VERSION (a server of another version rejects with error 7). */
  async robot(name) {
    const endpoint = await this.lookup(`/${name}`);
    await this.request(endpoint, 0, "", [PROTOCOL_VERSION]);
    const table = await this.request(endpoint, ROBOT_COMMANDS.commands);
    return new Robot(this, name, endpoint, parseCommands(table.text));
  }

  /** Send any /sim command (see docs/protocol.md section 4). */
  async sim(command, text = "", params = [], data = []) {
    return this.request(await this.lookup("/sim"), command, text, params, data);
  }

  close() {
    for (const sock of this.sockets.values()) sock.close();
    this.sockets.clear();
  }

  #drop(endpoint) {
    this.sockets.get(endpoint)?.close();
    this.sockets.delete(endpoint);
  }
}

/** Commands every robot has, at the same ids (docs/protocol.md section 3). Module commands
 * (motors, sonar, ...) have the ids each robot declares: look them up by name (Robot.id). */
export const ROBOT_COMMANDS = {
  modules: 1, detach: 2, commands: 3, claim: 4, release: 5, exchange: 6,
};
export const EXCHANGE_MAX = 16; // reads one exchange carries at most

/** The key of a command in Robot.commands: "module.name", or "name" for a common command. */
export function commandKey(module, name) {
  return module ? `${module}.${name}` : name;
}

/**
 * Parse a robot's reply to command 3 (`commands`): one line per command,
 * `id name module params_min params_max data_min data_max text kind doc`, "-" for an empty
 * word; doc, one sentence, is the rest of the line.
 * Returns [{id, name, module, params: [min, max], data: [min, max], text, kind, doc}, ...].
 */
export function parseCommands(text) {
  const blank = (w) => (w === "-" ? "" : w);
  return text.split("\n").filter((line) => line.trim()).map((line) => {
    const all = line.trim().split(/ +/);
    const w = all.slice(0, 9);
    const n = w.map(Number);
    if (w.length !== 9 || ![0, 3, 4, 5, 6].every((i) => Number.isInteger(n[i]))) {
      throw new RemoteError(1, `malformed line in a command table: '${line}'`,
                            ROBOT_COMMANDS.commands);
    }
    // the doc is the rest of the line (it holds spaces); protocol 1 lines have none
    return { id: n[0], name: w[1], module: blank(w[2]), params: [n[3], n[4]],
             data: [n[5], n[6]], text: blank(w[7]), kind: blank(w[8]),
             doc: blank(all.slice(9).join(" ")) };
  });
}

/**
 * A robot: one socket serves all its modules. Its command table is fetched once (command 3),
 * and every module command is reached by name, at the id this robot declares for it:
 *   await robot.call("motors", "set_speeds", { data: [0.3, 0.3] });
 *   await robot.modules.motors.set_speeds(0.3, 0.3);       // the same, generated
 * Both resolve with the reply {error, text, command, params, data}. Make one with
 * Client.robot(name).
 */
export class Robot {
  constructor(client, name, endpoint, commands) {
    Object.assign(this, { client, name, endpoint });
    this.commands = new Map(commands.map((c) => [commandKey(c.module, c.name), c]));
    this.modules = this.#moduleMethods(commands);
  }

  /** The id of `module`'s command `name` (module "" for the common ones); an unknown module or
   * command throws RemoteError 5 naming what the robot has. */
  id(module, name) {
    const command = this.commands.get(commandKey(module, name));
    if (!command) throw this.#missing(module, name);
    return command.id;
  }

  /** Send `module`'s command `name`: text a string, params integers, data numbers. An
   * unknown name rejects with RemoteError 5. */
  async call(module, name, { text = "", params = [], data = [] } = {}) {
    return this.request(this.id(module, name), text, params, data);
  }

  /** Send a command by id (the common ones are in ROBOT_COMMANDS). */
  request(command, text = "", params = [], data = []) {
    return this.client.request(this.endpoint, command, text, params, data);
  }

  /** One motion command and the reads of the step that used it, in one round trip (robot
   * command 6, docs/protocol.md section 3, "Exchange"; protocol 13). `motion` and each of
   * `reads` are "module.command" names, `data` the motion's numbers. Resolves when the motion's
   * reply would (in lockstep after the step) with `{step, time, reads, text}`: `reads` holds
   * one `{data, step}` per read named, in order; `text` is the motion reply's (see awaitStep). */
  async exchange(motion, data = [], reads = []) {
    if (reads.length > EXCHANGE_MAX) {
      throw new RemoteError(4, `an exchange carries at most ${EXCHANGE_MAX} reads`, -1);
    }
    const ids = [motion, ...reads].map((n) => this.id(...n.split(".")));
    const reply = await this.request(ROBOT_COMMANDS.exchange, "", ids, data);
    const p = reply.params, out = [];
    for (let k = 0, at = 1; k < reads.length; k++) {
      const n = Number(p[1 + 2 * k]);
      out.push({ data: reply.data.slice(at, at + n), step: Number(p[2 + 2 * k]) });
      at += n;
    }
    return { step: Number(p[0]), time: reply.data[0], reads: out, text: reply.text };
  }

  /** After a motion command's reply (or an exchange's result), wait until a step has used its
   * command when the reply was queued (its text starts with QUEUED): until /sim's status (asked
   * every 0.25 s) shows another step, the run was reset, or it has finished (its state
   * document, asked every 1 s, names why it ended). Any other reply resolves at once. Awaited
   * after each iteration's motion command, it keeps a loop's iterations one a step while the
   * run is paused and stepped by hand, as Python's Robot.loop does. */
  async awaitStep(reply) {
    if (!reply?.text?.startsWith(QUEUED)) return;
    const step = reply.step ?? Number(reply.params[0]);
    for (let polls = 0; ; polls++) {
      if (Number((await this.client.sim(1)).params[0]) !== step) return; // used, or a reset
      if (polls % FINISHED_EVERY === 0 && JSON.parse((await this.client.sim(23)).text).finished) {
        return; // it ended: no step will use the command
      }
      await new Promise((resolve) => setTimeout(resolve, QUEUED_POLL_MS));
    }
  }

  /** Leave lockstep: the simulation stops waiting for this controller (and the robot is
   * released). */
  detach() { return this.request(ROBOT_COMMANDS.detach); }

  /** Own the robot: its motion commands are this connection's alone until release(); with
   * `force` take it from another owner (operators). Rejects with RemoteError 11 (OWNED), whose
   * text names the owner, when another connection owns it. */
  claim({ force = false } = {}) { return this.request(ROBOT_COMMANDS.claim, "", [force ? 1 : 0]); }

  /** Give the robot up (it also leaves lockstep). */
  release() { return this.request(ROBOT_COMMANDS.release); }

  /** robot.modules.<module>.<command>(...args): numbers go in data, a string in text. An
   * unknown module or command throws RemoteError 5 (test with `"gps" in robot.modules`). */
  #moduleMethods(commands) {
    const modules = {};
    for (const c of commands.filter((c) => c.module)) {
      modules[c.module] ??= this.#strict({}, (name) => this.#missing(c.module, name));
      modules[c.module][c.name] = (...args) => this.call(c.module, c.name, {
        text: args.find((a) => typeof a === "string") ?? "",
        data: args.filter((a) => typeof a !== "string"),
      });
    }
    return this.#strict(modules, (name) => this.#missing(name, ""));
  }

  // A typo such as robot.modules.motor.stop() should say what exists, not "undefined is not a
  // function". `then` stays undefined so that awaiting the object still works.
  #strict(target, missing) {
    return new Proxy(target, {
      get(obj, prop) {
        if (typeof prop === "symbol" || prop in obj || prop === "then") return obj[prop];
        throw missing(prop);
      },
    });
  }

  // The sentence the C and Octave clients use too.
  #missing(module, name) {
    const all = [...this.commands.values()];
    const labels = [...new Set(all.filter((c) => c.module).map((c) => c.module))];
    const text = module && !labels.includes(module)
      ? `/${this.name} has no module '${module}' (it has: ${labels.join(", ")})`
      : `/${this.name} has no command '${commandKey(module, name)}' ` +
        `(${module || "it"} has: ${all.filter((c) => c.module === module).map((c) => c.name)
          .join(", ")})`;
    return new RemoteError(UNKNOWN_NAME, text, -1);
  }
}
