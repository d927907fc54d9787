"""``tool.move_to`` of an arm from its URDF, in process (lockstep, ``mujoco`` engine): the tool
frame's x axis sent pointing down to reachable points in front of the arm at half speed, then held 0.3 s; the
distance from each point to where the tool is (``tool.read``). Goal (issue 52): <= 5 mm.

    PYTHONPATH=.:experiments python -m robotchecks.arm_move [URDF TOOL]   (default: the Z1)
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

import numpy as np

DT = 0.002  # s: 500 Hz
DOWN = (0.0, math.pi / 2, 0.0)  # roll, pitch, yaw: a tool frame whose x points down (Z1's)
POINTS = ((0.35, 0.0, 0.25), (0.30, 0.15, 0.25), (0.40, -0.10, 0.30), (0.25, -0.20, 0.25),
          (0.40, 0.05, 0.25))  # m, base frame: z >= 0.25 keeps the Z1's gripper (0.15 m) off the floor


def errors(urdf: str, tool: str, home: str = "", points=POINTS) -> list[float]:
    """The tool's distance from each point after its move, mm."""
    from coopsim.formats.files import load
    from coopsim.sim.drivers import LocalRobot
    from coopsim.sim.simulation import Simulation
    from coopsim.sim.stepper import Stepper

    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "w.world").write_text("[FLOOR]\nsize 4 4 0.1\n")
        path = Path(tmp, "s.scenario")
        path.write_text(f"[WORLD]\nfile w.world\n[SETTINGS]\nengine mujoco\ndt {DT}\n"
                        f"mode lockstep\nseed 1\n[ROBOT_1]\nname a1\ndescription {urdf}\n"
                        f"tool {tool}\n{home}position 0 0 0\n")
        sim = Simulation(load(str(path)))
        stepper = Stepper(sim, mode="lockstep")
        stepper.tick()
        arm = LocalRobot(sim, "a1")
        out = []
        for point in points:
            reply = arm.tool.move_to(*point, *DOWN, 0.5)
            seconds = float(str(getattr(reply, "text", reply)).split()[0]) \
                if not isinstance(reply, (int, float)) else float(reply)
            for _ in range(math.ceil((seconds + 0.3) / DT)):
                stepper.tick()
            at = np.asarray(stepper.tick().reading("a1", "tool"))[:3]
            out.append(1000 * float(np.linalg.norm(at - point)))
        return out


def main() -> None:
    from robot_table import share
    urdf = sys.argv[1] if len(sys.argv) > 2 else str(share() / "z1_description/urdf/z1.urdf")
    tool = sys.argv[2] if len(sys.argv) > 2 else "link06"
    found = errors(urdf, tool, "home 0 0.8 -0.8 0 0 0\n" if len(sys.argv) <= 2 else "")
    print(" ".join(f"{e:.2f}" for e in found), f"mm; largest {max(found):.2f} mm")


if __name__ == "__main__":
    main()
