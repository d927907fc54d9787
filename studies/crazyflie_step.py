"""The Crazyflie's step response: a 1 m climb from a settled hover, for coopsim (the ``flight``
driver on the ``mujoco`` and ``aerial`` engines) and, when it is installed, for crazyflow (its
own Mellinger controller on its first-principles model of the Crazyflie 2.x, ``cf2x_L250``).

coopsim: one ``crazyflie`` takes off from the floor under the ``flight`` driver (default gains),
hovers at 1 m, and at ``T_STEP`` s its reference jumps to 2 m (the driver's cascade, a hover
reference that moves: :class:`StepFlight`); dt = 0.002 s (500 Hz, the controller each step).
crazyflow (``pip install crazyflow`` in a separate virtual environment: it is not a coopsim
dependency; JAX on the CPU): ``Sim(drone="cf2x_L250", dynamics="first_principles",
control="state")`` at 500 Hz with the state controller at 100 Hz, the same hover and step.

Figures, from the height z(t) after the step (z0 the mean height over the 0.5 s before it):
rise time 10-90 % of the commanded 1 m, overshoot above the 1 m (% of it), settling time
(last entry into +-5 cm of the new height), steady offset (mean over the last 1 s).

``--eights``: the tracking error of tests/sim/test_crazyflie.py's eights instead, this airframe
and the earlier one under the default gains, and this one with lower rate and attitude gains.

``--cost N``: instead, the CPU time per step (``time.process_time``, after 200 warm-up ticks) of N
Crazyflies hovering 0.5 m apart under the batch ``flight`` driver (every ``--every`` steps),
each with its imu, mocap and altimeter, in lockstep at 500 Hz on each of ``--engines``, and
the real-time factor it allows (2 ms / CPU per step). Run it with a baseline
tree on PYTHONPATH in turn, alternating, to compare (with ``COOPSIM_JIT=wait`` for an older
tree, which stepped on numpy until its kernels had loaded).

Usage: python studies/crazyflie_step.py [--engines mujoco aerial] [--tau 0.145] [--earlier]
           [--crazyflow /tmp/peers-venv/bin/python] [--plot docs/experiments/crazyflie_step.png]
       python studies/crazyflie_step.py --eights
       python studies/crazyflie_step.py --cost 1000 --every 5 --engines aerial --steps 500
       (--crazyflow runs this file with that interpreter as ``--only-crazyflow``.)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DT = 0.002  # s: 500 Hz
T_STEP, T_END = 6.0, 11.0  # s: the step's time, the end of the record
HEIGHT, CLIMB = 1.0, 1.0  # m


def figures(t: np.ndarray, z: np.ndarray) -> dict:
    """Rise time (10-90 %, s), overshoot (% of the step), settling (+-5 cm, s), offset (m) of
    the record ``z`` (m) at times ``t`` (s)."""
    before = (t > T_STEP - 0.5) & (t <= T_STEP)
    z0 = float(z[before].mean())
    after, s = t > T_STEP, t[t > T_STEP] - T_STEP
    rel = (z[after] - z0) / CLIMB
    t10, t90 = s[np.argmax(rel >= 0.1)], s[np.argmax(rel >= 0.9)]
    outside = np.abs(z[after] - (z0 + CLIMB)) > 0.05
    last = np.nonzero(outside)[0]
    settle = float(s[last[-1]]) if len(last) else 0.0  # never settled: the record's end
    return {"rise_s": float(t90 - t10), "overshoot_pct": float(max(rel.max() - 1.0, 0.0) * 100),
            "settling_s": settle, "offset_m": float(z[t > T_END - 1.0].mean() - (z0 + CLIMB)),
            "hover_m": z0}


# the earlier airframe (docs/robots.md), for ``--earlier``
EARLIER = {"kf": 2.88e-8, "km": 2.88e-8 * 0.005964552, "tau": 0.05, "max_speed": 2200.0}


def scenario_text(engine: str, params: dict, z: float = 0.0, driver: str = "",
                  dt: float = DT) -> str:
    """One crazyflie ``cf1`` at height ``z`` in ``w.world``, its ``rotors`` parameters
    ``params``, the in-process ``driver`` line's words if any."""
    lines = ["[WORLD]", "file w.world", "[SETTINGS]", f"engine {engine}", f"dt {dt}",
             "mode lockstep", "seed 1", "[ROBOT_1]", "type crazyflie", "name cf1",
             f"position 0 0 {z}"] + ([f"driver flight {driver}"] if driver else [])
    lines += [f"param rotors.{k} {v!r}" for k, v in params.items()]
    return "\n".join(lines) + "\n"


EIGHT = "shape eight plane {} size 0.8 period 6 takeoff 1 yaw_rate 0.3"  # tests/sim's eight


def eight_errors(plane: str, params: dict, gains: str = "") -> tuple[float, float, float]:
    """tests/sim/test_crazyflie.py's eight on mujoco (released at 1 m, dt 0.005 s): the mean
    3D error over the lap from 1 s, and from 2 s (past the release transient), and the largest
    height error from 2 s, m."""
    sys.path.insert(0, str(ROOT))
    from coopsim.formats.files import load
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    dt = 0.005
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "w.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
        path = Path(tmp) / "cf.scenario"
        path.write_text(scenario_text("mujoco", params, 1.0, f"{EIGHT.format(plane)} {gains}", dt))
        stepper = Stepper(Simulation(load(str(path))), mode="lockstep")
    where, refs = [], []
    for _ in range(int(round(7.0 / dt))):
        snap = stepper.tick()
        where.append(snap.pose3d[0, :3].copy())
        refs.append(snap.commands["rotors"][0, 5:8].copy())
    error = np.linalg.norm(np.array(where) - np.array(refs), axis=1)
    one, two = int(1.0 / dt), int(2.0 / dt)
    height = np.abs(np.array(where)[two:, 2] - np.array(refs)[two:, 2]).max()
    return float(error[one:].mean()), float(error[two:].mean()), float(height)


def eights_table() -> None:
    """The eights' errors of the airframe, the earlier one, and the airframe with lower gains."""
    print("| eight | airframe, gains | mean from 1 s mm | mean from 2 s mm | height error max mm |")
    print("|---|---|---:|---:|---:|")
    for plane in ("horizontal", "vertical"):
        for label, params, gains in (("this one, default", {}, ""),
                                     ("the earlier one, default", EARLIER, ""),
                                     ("this one, rate 45 att 10", {}, "rate_gain 45 att_gain 10")):
            a, b, h = eight_errors(plane, params, gains)
            print(f"| {plane} | {label} | {a * 1e3:.1f} | {b * 1e3:.1f} | {h * 1e3:.1f} |")


def coopsim_run(engine: str, params: dict) -> tuple[np.ndarray, np.ndarray]:
    """(t, z) of one coopsim Crazyflie's climb on ``engine``, its ``rotors`` parameters
    ``params`` changed (name -> value)."""
    sys.path.insert(0, str(ROOT))
    from coopsim.formats.files import load
    from coopsim.plugins.drivers.flight import Flight
    from coopsim.sim.drivers import LocalRobot
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper
    from coopsim.swarm import flight

    class StepFlight(Flight):
        """The flight driver holding 1 m, then 2 m from ``T_STEP`` s."""

        def reference(self, time: float) -> np.ndarray:
            centre = self._origin[:, :3].copy()
            centre[:, 2] = HEIGHT + (CLIMB if time >= T_STEP - 1e-9 else 0.0)
            return flight.hover(centre, self._origin[:, 3])

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "w.world").write_text("[FLOOR]\nsize 6 6 0.1\n")
        path = Path(tmp) / "cf.scenario"
        path.write_text(scenario_text(engine, params))
        sim = Simulation(load(str(path)))
    stepper = Stepper(sim, mode="lockstep")
    bot = LocalRobot(sim, "cf1")
    rng = np.random.default_rng(1)
    driver = StepFlight(Flight.values({"shape": "hover", "height": HEIGHT}), rng)
    t, z = [], []
    for _ in range(int(round(T_END / DT))):
        driver.step(bot)
        snap = stepper.tick()
        t.append(snap.time)
        z.append(float(snap.pose3d[0, 2]))
    return np.array(t), np.array(z)


def swarm(n: int, engine: str, every: int):
    """``n`` Crazyflies 0.5 m apart on the floor, hovering at 1 m under the batch driver."""
    import math

    sys.path.insert(0, str(ROOT))
    from coopsim.model.specs import (DriverSetting, FloorSpec, RobotSpec, ScenarioSpec,
                                     Settings, WorldSpec)

    side = math.ceil(math.sqrt(n))
    hover = (("shape", "hover"), ("height", HEIGHT), ("every", every))
    robots = tuple(RobotSpec("crazyflie", f"cf{k}", ((k % side - side / 2) * 0.5,
                                                     (k // side - side / 2) * 0.5, 0.0),
                             drivers=(DriverSetting("flight", hover),)) for k in range(n))
    size = side * 0.5 + 4.0
    return ScenarioSpec(WorldSpec(FloorSpec(size, size)), robots=robots,
                        settings=Settings(dt=DT, mode="lockstep", seed=1, engine=engine))


def step_cost(n: int, engine: str, every: int, steps: int) -> float:
    """CPU seconds per ``Stepper.tick`` of :func:`swarm`, after 200 warm-up ticks."""
    import time

    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    stepper = Stepper(Simulation(swarm(n, engine, every)), mode="lockstep")
    for _ in range(200):
        stepper.tick()
    start = time.process_time()
    for _ in range(steps):
        stepper.tick()
    return (time.process_time() - start) / steps


def crazyflow_run() -> tuple[np.ndarray, np.ndarray]:
    """(t, z) of crazyflow's cf2x_L250 under its own state controller (needs crazyflow)."""
    import jax.numpy as jnp
    from crazyflow.control import Control
    from crazyflow.dynamics import Dynamics
    from crazyflow.sim import Sim

    sim = Sim(n_worlds=1, n_drones=1, drone="cf2x_L250", dynamics=Dynamics.first_principles,
              control=Control.state, freq=500, state_freq=100, device="cpu")
    sim.reset()
    cmd = np.zeros((1, 1, 16))
    cmd[..., 2], cmd[..., 12] = HEIGHT, 1.0  # x y z, v, a, quaternion x y z w, rates
    t, z = [], []
    for k in range(int(round(T_END / DT))):
        cmd[..., 2] = HEIGHT + (CLIMB if k * DT >= T_STEP - 1e-9 else 0.0)
        if k % 5 == 0:
            sim.state_control(jnp.asarray(cmd))
        sim.step(1)
        t.append((k + 1) * DT)
        z.append(float(sim.data.states.pos[0, 0, 2]))
    return np.array(t), np.array(z)


def plot(runs: dict, path: str) -> None:
    """z(t) around the step, one line per run."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, (t, z) in runs.items():
        keep = t >= T_STEP - 1.0
        style = ":" if "before" in name else ("--" if "aerial" in name else "-")
        ax.plot(t[keep] - T_STEP, z[keep], style, label=name)
    ax.axhline(HEIGHT + CLIMB, color="grey", lw=0.8, ls="--")
    for level in (0.1, 0.9):
        ax.axhline(HEIGHT + level * CLIMB, color="grey", lw=0.5, ls=":")
    ax.set_xlabel("time since the step, s")
    ax.set_ylabel("height z, m")
    ax.set_title("Crazyflie, 1 m climb from hover")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engines", nargs="*", default=["mujoco", "aerial"])
    ap.add_argument("--tau", type=float, default=None, help="rotors.tau to fly, s")
    ap.add_argument("--earlier", action="store_true", help="also fly the earlier airframe")
    ap.add_argument("--eights", action="store_true", help="only the eights' tracking table")
    ap.add_argument("--crazyflow", default=None, help="a Python with crazyflow installed")
    ap.add_argument("--only-crazyflow", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--plot", default=None)
    ap.add_argument("--cost", type=int, default=0, help="CPU time per step of N Crazyflies")
    ap.add_argument("--every", type=int, default=1, help="--cost: the driver every K steps")
    ap.add_argument("--steps", type=int, default=1000, help="--cost: steps timed")
    args = ap.parse_args()
    if args.cost:
        for engine in args.engines:
            cost = step_cost(args.cost, engine, args.every, args.steps)
            print(f"{args.cost} Crazyflies, {engine}, driver every {args.every}: "
                  f"{cost * 1e3:.3f} ms CPU a step, {DT / cost:.2f}x real time")
        return
    if args.eights:
        eights_table()
        return
    if args.only_crazyflow:
        t, z = crazyflow_run()
        print(json.dumps({"t": t.tolist(), "z": z.tolist()}))
        return
    changed = {"tau": args.tau} if args.tau else {}
    runs = {f"coopsim {e} (flight driver)": coopsim_run(e, changed) for e in args.engines}
    if args.earlier:
        runs["coopsim mujoco, the earlier airframe"] = coopsim_run("mujoco", EARLIER)
    if args.crazyflow:
        out = subprocess.run([args.crazyflow, __file__, "--only-crazyflow"], check=True,
                             capture_output=True, text=True).stdout
        data = json.loads(out.strip().splitlines()[-1])
        runs["crazyflow cf2x_L250 (Mellinger)"] = (np.array(data["t"]), np.array(data["z"]))
    print("| run | hover before m | rise 10-90 % s | overshoot % | settling (5 cm) s | offset m |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (t, z) in runs.items():
        f = figures(t, z)
        print(f"| {name} | {f['hover_m']:.3f} | {f['rise_s']:.3f} | {f['overshoot_pct']:.1f} "
              f"| {f['settling_s']:.2f} | {f['offset_m']:+.3f} |")
    if args.plot:
        plot(runs, args.plot)


if __name__ == "__main__":
    main()
