// wander.js: drive forward, turn away from whatever the sonar sees (the JavaScript twin of
// clients/python/wander.py).
//
// Usage: node wander.js [ROBOT] [STEPS]   ROBOT defaults to $COOPSIM_ROBOT or robot1; STEPS to
// forever. The name server is $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000. In lockstep every
// loop iteration is one simulation step: the motor reply comes after the step that used it.
import { pathToFileURL } from "node:url";

import { Client } from "./coopsim.js";

const CRUISE = 0.35; // m/s
const SAFE = 0.6; // m: obstacles nearer than this make the robot turn

/** Wheel speeds [left, right] in m/s from the 11 sonar distances (index 0 = right side). */
export function wanderSpeeds(d) {
  const right = Math.min(...d.slice(0, 5));
  const left = Math.min(...d.slice(6, 11));
  const ahead = Math.min(...d.slice(3, 8));
  if (ahead < SAFE) {
    const turn = right < left ? 1 : -1; // turn towards the more open side
    return [-0.2 * turn, 0.2 * turn];
  }
  const steer = 0.25 * (Math.min(right, 2) - Math.min(left, 2)); // drift away from near walls
  return [CRUISE + steer, CRUISE - steer];
}

async function main() {
  const name = process.argv[2] || process.env.COOPSIM_ROBOT || "robot1";
  const steps = process.argv[3] ? Number(process.argv[3]) : Infinity;
  let stop = false;
  process.on("SIGINT", () => { stop = true; });
  process.on("SIGTERM", () => { stop = true; });
  const client = new Client();
  try {
    const robot = await client.robot(name);
    // The robot's own command ids, by name; a robot without sonar or motors fails here, clearly.
    const { sonar, motors } = robot.modules;
    try {
      // The first distances by a read; then one exchange a step: the speeds go out, the sonar
      // of the step that used them comes back (lockstep: it resolves after the step).
      let distances = (await sonar.read()).data;
      for (let i = 0; i < steps && !stop; i++) {
        const got = await robot.exchange("motors.set_speeds", wanderSpeeds(distances),
                                         ["sonar.read"]);
        await robot.awaitStep(got); // queued (paused): one iteration stays one step
        distances = got.reads[0].data;
      }
    } finally {
      // Stop the wheels and leave lockstep, so the run does not wait for us; errors here only
      // mean the simulation is gone already.
      await motors.stop().catch(() => {});
      await robot.detach().catch(() => {});
    }
  } finally {
    client.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) { // run, not imported
  main().catch((err) => {
    console.error(`wander: ${err.message}`);
    process.exit(1);
  });
}
