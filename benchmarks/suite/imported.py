"""Robots from description files: loading a 30-link robot with its meshes, and 100
imported arms stepping at 500 Hz. Both need example-robot-data (the ``test`` extra); without
it they are skipped.

* ``Load.track_s``: ``coopsim.formats.files.load`` of a scenario naming example-robot-data's
  Unitree G1 (``g1_29dof_rev_1_0.urdf``: 40 links, 59 STL meshes, fixed base) and the first
  step of a Simulation of it on the mujoco engine (MuJoCo compiles the file and its meshes),
  in a process that has loaded one before: s, goal <= 2 s; ``Load.track_cpu_s`` the same in
  CPU seconds.
* ``Arms.track_ms``: N Pandas (example-robot-data's ``panda.urdf``: 7 joints, its two fingers,
  collision meshes) 1.5 m apart, each with ``joints``, ``tool``, ``gripper``, ``force`` and
  ``pose``, every arm making a slow joint move (its servos set every step), dt 0.002 s
  (500 Hz), one thread: ms per step, and x real time (goal >= 0.3 at 100 arms on 2 cores);
  the baseline beside it, the same count of built-in ``irb120`` arms. Kind ``z1``: the
  Unitree Z1 (``z1.urdf``: 6 joints to ``link06``, its COLLADA visual meshes; the goal
  >= 1x real time at 100 arms on one core): the arms share one copy of their meshes in
  MuJoCo's model (``physics.mujoco.imported``; 100 copies of its 240,000 visual triangles took
  over 20 GB, now 0.7 GB).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from .common import Case, count, sizes, threads, tick_ms, unit, x_real_time

DT = 0.002  # s: 500 Hz
SPACING = 1.5  # m between two arms
PANDA = ("description {share}/example-robot-data/robots/panda_description/urdf/panda.urdf\n"
         "tool panda_hand_tcp\n"
         "gripper panda_finger_joint1 panda_finger_joint2\n"
         "home 0 -0.785 0 -2.356 0 1.571 0.785\n")
# the Unitree Z1 (COLLADA visual meshes, STL collision): 6 joints to link06
Z1 = ("description {share}/example-robot-data/robots/z1_description/urdf/z1.urdf\n"
      "tool link06\n"
      "home 0 0.8 -0.8 0 0 0\n")
MOVES = {"panda": (0.3, -0.5, 0.3, -2.0, 0.3, 1.8, 1.0),  # rad: where each kind moves to
         "z1": (0.3, 1.2, -1.0, 0.3, 0.3, 0.3),
         "irb120": (0.3, 0.3, 0.3, 0.3, 1.2, 0.3)}
ROBOTS = {"panda": PANDA, "z1": Z1}
G1 = ("description {share}/example-robot-data/robots/g1_description/urdf/"
      "g1_29dof_rev_1_0.urdf\n")


def _share() -> Path:
    """example-robot-data's share folder, or NotImplementedError (asv: skipped)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        return Path(distribution("example-robot-data").locate_file("cmeel.prefix/share"))
    except PackageNotFoundError:
        raise NotImplementedError("example-robot-data is not installed (pip install "
                                  "'.[test]')") from None


def _scenario(folder: str, robot: str, n: int, side: float = 4.0) -> str:
    """A mujoco lockstep scenario of ``n`` robots of section lines ``robot`` on a grid on a
    floor at least ``side`` m wide."""
    side = max(side, SPACING * int(n ** 0.5 + 0.999) + 4.0)
    Path(folder, "floor.world").write_text(f"[FLOOR]\nsize {side:g} {side:g} 0.1\n")
    row = int(n ** 0.5 + 0.999)
    robots = [f"[ROBOT_{k + 1}]\nname r{k + 1}\n{robot}position "
              f"{(k % row - (row - 1) / 2) * SPACING:.2f} "
              f"{(k // row - (row - 1) / 2) * SPACING:.2f} 0\n"
              for k in range(n)]
    path = Path(folder, "imported.scenario")
    path.write_text("[WORLD]\nfile floor.world\n\n" + "\n".join(robots)
                    + f"\n[SETTINGS]\nengine mujoco\ndt {DT}\nmode lockstep\nseed 1\n")
    return str(path)


def _stepper(path: str):
    from coopsim.formats.files import load
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    return Stepper(Simulation(load(path)), mode="lockstep")


class Load(Case):
    """Scenario load and the first step of a 40-link robot with 59 meshes: s (goal <= 2 s).

    One load in ``setup`` first, so that the figure is the robot's load and not the process's
    first imports of coopsim, MuJoCo and the cached kernels (about 3.3 s of CPU once per
    process). ``track_s`` is wall-clock time, ``track_cpu_s`` the process's CPU time (all its
    threads), the figure that a loaded 2-core machine does not inflate."""

    def setup(self):
        robot = G1.format(share=_share())  # before the folder: a skip leaves nothing behind
        self.folder = tempfile.TemporaryDirectory(prefix="coopsim-imported-")
        self.path = _scenario(self.folder.name, robot, 1, side=12.0)
        _stepper(self.path).tick()

    def teardown(self):
        self.folder.cleanup()

    @unit("s")
    def track_s(self):
        t0 = time.perf_counter()
        _stepper(self.path).tick()
        return time.perf_counter() - t0

    @unit("s")
    def track_cpu_s(self):
        t0 = time.process_time()
        _stepper(self.path).tick()
        return time.process_time() - t0


class Arms(Case):
    """N imported Pandas moving at 500 Hz, one thread: ms per step (and x real time); beside
    it the same count of built-in ``irb120`` arms (the baseline: 6 joints, capsules)."""

    params = (sizes("panda", "z1", "irb120", smoke="panda"), sizes(1, 10, 100, smoke=1))
    param_names = ("kind", "arms")

    def setup(self, kind, arms):
        from coopsim.sim.drivers import LocalRobot

        threads(1)
        robot = ROBOTS[kind].format(share=_share()) if kind in ROBOTS else "type irb120\n"
        self.folder = tempfile.TemporaryDirectory(prefix="coopsim-imported-")
        self.stepper = _stepper(_scenario(self.folder.name, robot, arms))
        move = MOVES[kind]
        for k in range(arms):  # a slow move of every joint: the servos set every step
            LocalRobot(self.stepper.sim, f"r{k + 1}").joints.set_positions(*move, 0.01)
        self.ms = tick_ms(self.stepper, count(max(5, 500 // arms)), blocks=3)

    def teardown(self, kind, arms):
        self.folder.cleanup()

    @unit("ms")
    def track_ms(self, kind, arms):
        return self.ms

    @unit("x real time")
    def track_x_real_time(self, kind, arms):
        return x_real_time(DT, self.ms)
