// Tests of the JavaScript client: `npm test` (node --test). The live tests need a simulator:
// COOPSIM_NAMESERVER=tcp://127.0.0.1:PORT npm test   (tests/test_clients.py does this).
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, pack, RemoteError, TIMEOUT, unpack } from "../coopsim.js";
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

test("live: hello, lookup, and an error reply", { skip: NO_SIM }, async () => {
  const client = new Client({ nameserver: LIVE });
  try {
    const hello = await client.request(client.nameserver, 0, "", [1]);
    assert.deepEqual(hello.params, [1]);
    assert.equal(hello.text, "/nameserver");
    assert.match(await client.lookup("/sim"), /^tcp:\/\//);
    await assert.rejects(client.lookup("/no_such_robot"), (err) => err.code === 5);
    const robot = await client.robot("robot1");
    assert.equal((await robot.sonar()).length, 11);
    await assert.rejects(robot.call(100, "", [], [0.1]), (err) => err.code === 3);
  } finally {
    client.close();
  }
});

function doubleBE(x) {
  const buf = Buffer.alloc(8);
  buf.writeDoubleBE(x);
  return [...buf];
}
