// Tests of the JavaScript client: `npm test` (node --test). The live tests need a simulator:
// COOPSIM_NAMESERVER=tcp://127.0.0.1:PORT npm test   (tests/test_clients.py does this).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { Client, loadKeys, pack, parseCommands, RemoteError, Robot, ROBOT_COMMANDS, TIMEOUT,
         UNKNOWN_NAME, unpack, PROTOCOL_VERSION, robotSeed } from "../coopsim.js";
import { wanderSpeeds } from "../wander.js";

const LIVE = process.env.COOPSIM_NAMESERVER;
const NO_SIM = !LIVE && "no simulator: set COOPSIM_NAMESERVER";

test("pack gives the bytes of docs/protocol.md's worked example", () => {
  const hex = Buffer.from(pack(1, "/robot1/motors")).toString("hex");
  assert.equal(hex, "9500ae2f726f626f74312f6d6f746f7273019090");
});

test("pack sends fractional data as float64", () => {
  const bytes = Buffer.from(pack(100, "", [], [0.25, -0.5]));
  assert.deepEqual([...bytes.subarray(-19)], [0x92, 0xcb, ...doubleBE(0.25), 0xcb,
                                              ...doubleBE(-0.5)]);
});

test("unpack reads a reply and refuses anything but five items", () => {
  const reply = unpack(pack(200, "ok", [57], [2.0, 1.5]));
  assert.deepEqual(reply, { error: 0, text: "ok", command: 200, params: [57], data: [2, 1.5] });
  assert.throws(() => unpack(Buffer.from([0x92, 0x00, 0x00])), RemoteError);
});

test("wanderSpeeds turns away from an obstacle ahead", () => {
  const open = Array(11).fill(2.0);
  const [l, r] = wanderSpeeds(open);
  assert.ok(l > 0 && r > 0 && Math.abs(l - r) < 1e-9);
  const blocked = open.map((d, i) => (i === 5 ? 0.3 : i < 5 ? 1.0 : 2.0)); // right side nearer
  const [bl, br] = wanderSpeeds(blocked);
  assert.ok(bl < 0 && br > 0, "turns left, towards the open side");
});

test("a request nobody answers fails with error 9", async () => {
  const client = new Client({ nameserver: "tcp://127.0.0.1:9", timeout: 200 });
  try {
    await assert.rejects(client.lookup("/sim"), (err) => err.code === TIMEOUT);
  } finally {
    client.close();
  }
});

// Two lines of a command-3 reply, as docs/protocol.md section 3 writes them, with made-up ids:
// a client must take the ids from the table, whatever they are.
const TABLE = "2 detach - 0 0 0 0 - - Stop driving the robot.\n" +
              "4100 set_speeds motors 0 0 2 2 - motion Set the wheel speeds, m/s.\n" +
              "4200 read sonar 0 0 0 0 - read -\n";

test("parseCommands reads command 3's lines, '-' as an empty word", () => {
  assert.deepEqual(parseCommands(TABLE)[1], { id: 4100, name: "set_speeds", module: "motors",
                                              params: [0, 0], data: [2, 2], text: "",
                                              kind: "motion", doc: "Set the wheel speeds, m/s." });
  assert.equal(parseCommands(TABLE)[0].module, "");
  assert.equal(parseCommands(TABLE)[2].doc, "");
  assert.equal(parseCommands("2 detach - 0 0 0 0 - -")[0].doc, "");  // protocol 1: no doc
  assert.throws(() => parseCommands("100 set_speeds motors 0 0 2\n"), RemoteError);
});

test("a robot finds ids by module and name, and names what is missing", () => {
  const robot = new Robot(null, "robot1", "tcp://x", parseCommands(TABLE));
  assert.equal(robot.id("motors", "set_speeds"), 4100);
  assert.equal(robot.id("", "detach"), 2);
  assert.ok("sonar" in robot.modules && !("gps" in robot.modules));
  const missing = (pattern) => (err) => err.code === UNKNOWN_NAME && pattern.test(err.message);
  assert.throws(() => robot.modules.gps, missing(/no module 'gps' \(it has: motors, sonar\)/));
  assert.throws(() => robot.modules.motors.fly(),
                missing(/no command 'motors.fly' \(motors has: set_speeds\)/));
  assert.throws(() => robot.id("wings", "read"), missing(/no module 'wings'/));
});

test("live: hello, lookup, and an error reply", { skip: NO_SIM }, async () => {
  const client = new Client({ nameserver: LIVE });
  try {
    const hello = await client.request(client.nameserver, 0, "", [PROTOCOL_VERSION]);
    assert.deepEqual(hello.params, [PROTOCOL_VERSION]);
    assert.equal(hello.text, "/nameserver");
    assert.match(await client.lookup("/sim"), /^tcp:\/\//);
    await assert.rejects(client.lookup("/no_such_robot"), (err) => err.code === 5);
    const robot = await client.robot("robot1");
    assert.equal((await robot.modules.sonar.read()).data.length, 11);
    await assert.rejects(robot.call("motors", "set_speeds", { data: [0.1] }),
                         (err) => err.code === 3);
    await assert.rejects(robot.call("motors", "fly"), (err) => err.code === UNKNOWN_NAME);
  } finally {
    client.close();
  }
});

test("live: every id the robot declares is the one the client sends", { skip: NO_SIM },
     async () => {
  const client = new Client({ nameserver: LIVE });
  try {
    const robot = await client.robot("robot1");
    const table = parseCommands((await robot.request(ROBOT_COMMANDS.commands)).text);
    assert.ok(table.some((c) => c.module === "motors"));
    for (const c of table) assert.equal(robot.id(c.module, c.name), c.id);
    const reply = await robot.modules.gps.read();
    assert.equal(reply.command, robot.id("gps", "read"));
  } finally {
    client.close();
  }
});

// Two made-up Z85 keys (any 40 characters of the alphabet will do for reading files).
const KEY_A = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
const KEY_B = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";

test("loadKeys reads a client folder's certificates, as coopsim keys writes them", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "coopsim-keys-"));
  t.after(() => rmSync(dir, { recursive: true, force: true })); // every run left one in /tmp
  writeFileSync(join(dir, "server.key"), `#   ZeroMQ CURVE Public Certificate\n\nmetadata\n` +
                `curve\n    public-key = "${KEY_A}"\n`);
  writeFileSync(join(dir, "client.key_secret"), `metadata\ncurve\n    public-key = "${KEY_B}"\n` +
                `    secret-key = "${KEY_A}"\n`);
  assert.deepEqual(loadKeys(dir), { server: KEY_A, publicKey: KEY_B, secretKey: KEY_A });
  const env = { COOPSIM_SERVER_KEY: KEY_B, COOPSIM_CLIENT_KEY: join(dir, "client.key_secret") };
  assert.equal(loadKeys(null, env).server, KEY_B); // the key itself may stand in the variable
  assert.equal(loadKeys(null, {}), null);
  assert.throws(() => loadKeys(null, { COOPSIM_SERVER_KEY: KEY_B }),
                /COOPSIM_CLIENT_KEY is not set/);
  assert.throws(() => loadKeys(join(dir, "nope")), /server.key: no such file/);
  assert.throws(() => loadKeys(null, { ...env, COOPSIM_SERVER_KEY: join(dir, "client.key_secret"),
                                      COOPSIM_CLIENT_KEY: join(dir, "server.key") }),
                /server.key: no secret-key line/);
});

function doubleBE(x) {
  const buf = Buffer.alloc(8);
  buf.writeDoubleBE(x);
  return [...buf];
}

test("robotSeed: the launcher's stream, else the CRC-32 of '<seed>/<robot>', else the fallback", () => {
  assert.equal(robotSeed("robot1", null, { COOPSIM_ROBOT_SEED: "1234" }), 1234);
  assert.equal(robotSeed("robot1", null, { COOPSIM_SEED: "7" }), 1182699379); // zlib.crc32(b"7/robot1")
  assert.equal(robotSeed("robot1", 5, {}), 5);
});
