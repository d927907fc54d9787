"""Arms from description files: the chain of a URDF as an arm (forward kinematics equal to
MuJoCo's own compile of the file), refused chains said with the key's line, and the goal of
described arms: example-robot-data's Panda, loaded from a scenario with no code, driven by a
controller written from docs/protocol.md alone (a ZeroMQ REQ socket and msgpack, command ids
of the protocol's tables) over real sockets: its tool reaches 5 points within 5 mm and it
picks a cube up."""

from __future__ import annotations

import math
from pathlib import Path

import msgpack
import numpy as np
import pytest
import zmq

from coopsim.formats.files import load
from coopsim.model.arm import frames
from coopsim.model.errors import FileFormatError

from nethelpers import live

mujoco = pytest.importorskip("mujoco")

HERE = Path(__file__).resolve().parents[1] / "data" / "descriptions"
DT = 0.004  # s: 250 Hz in the goal's run (MuJoCo substeps at 5 ms at most)
DOWN = math.pi  # roll of a tool pointing down


def robots_data() -> Path:
    """example-robot-data's share folder (its ``robots/`` hold the URDFs and meshes)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("example-robot-data")
    except PackageNotFoundError:
        pytest.skip("example-robot-data is not installed (pip install '.[test]')")
    return Path(dist.locate_file("cmeel.prefix/share"))


def scenario(tmp: Path, robot: str, objects: str = "", mode: str = "lockstep") -> Path:
    """A mujoco scenario of one described robot (its section's lines) on a 4 x 4 m floor."""
    (tmp / "floor.world").write_text("[FLOOR]\nsize 4 4 0.1\n")
    path = tmp / "imported.scenario"
    path.write_text(f"[WORLD]\nfile floor.world\n\n[ROBOT_1]\n{robot}\n{objects}\n"
                    f"[SETTINGS]\nengine mujoco\ndt {DT}\nmode {mode}\nseed 1\n")
    return path


PANDA = """name panda
description {share}/example-robot-data/robots/panda_description/urdf/panda.urdf
tool panda_hand_tcp
gripper panda_finger_joint1 panda_finger_joint2
home 0 -0.785 0 -2.356 0 1.571 0.785
position 0 0 0"""
CUBE = """[OBJECT_1]
type box
size 0.04 0.04 0.04
position 0.5 0.1 0.02
mass 0.2
"""


# -- a controller from docs/protocol.md alone ------------------------------------------------

class Controller:
    """A robot's server through a REQ socket: ``[0, text, command, params, data]`` out, the
    same five items back (docs/protocol.md section 1); the name server's lookup (command 1)
    finds the robot's endpoint."""

    def __init__(self, nameserver: str, robot: str) -> None:
        self.ctx = zmq.Context.instance()
        self.sock = self._connect(nameserver)
        self.sock = self._connect(self.ask(1, text=f"/{robot}")[1])

    def _connect(self, endpoint: str):
        sock = self.ctx.socket(zmq.REQ)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVTIMEO, 60_000)  # a stuck server fails the test, not hangs it
        sock.connect(endpoint)
        if getattr(self, "sock", None) is not None:
            self.sock.close()
        return sock

    def ask(self, command: int, data=(), text: str = "") -> tuple:
        self.sock.send(msgpack.packb([0, text, command, [], [float(v) for v in data]]))
        code, text, _, params, data = msgpack.unpackb(self.sock.recv())
        assert code == 0, f"error {code}: {text}"
        return data, text

    def move(self, x, y, z) -> np.ndarray:
        """``tool.move_to`` (4101) pointing down at half speed, then ``joints.wait`` (4005:
        one step each in lockstep) for the move's time (the reply's first number, s) and
        0.3 s more (the servos settle); ``tool.read`` (4100): the tool's x, y, z then."""
        seconds = float(self.ask(4101, (x, y, z, DOWN, 0.0, 0.0, 0.5))[1].split()[0])
        for _ in range(math.ceil((seconds + 0.3) / DT)):
            self.ask(4005)
        return np.array(self.ask(4100)[0][:3])

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def panda_run(tmp_path_factory):
    """A live lockstep run of the Panda and a cube, its name server's endpoint."""
    tmp = tmp_path_factory.mktemp("panda")
    path = scenario(tmp, PANDA.format(share=robots_data()), CUBE)
    with live(load(str(path))) as run:
        yield run


def slider(tmp: Path, keys: str) -> Path:
    """A scenario of tests/data/descriptions/slider_arm.urdf with the section lines ``keys``."""
    return scenario(tmp, f"name s1\ndescription {HERE / 'slider_arm.urdf'}\n{keys}\n"
                         "position 0 0 0")


def test_the_folded_chain_is_mujocos_own_kinematics(tmp_path):
    """Fixed joints (an rpy turn, a tool link under a turn) fold into the arm's joints: the
    tool frame at any angles is the one MuJoCo computes from the file itself."""
    from coopsim.model.plugins import ROBOT_TYPES

    rtype = ROBOT_TYPES.get(load(str(slider(tmp_path, "tool tip"))).robots[0].type)
    arm, desc = rtype.ARM, rtype.DESCRIPTION
    assert [l.key for l in arm.links] == ["turn", "pitch"] and arm.body == "wrist"
    model = mujoco.MjSpec.from_string(desc.text)
    model.compiler.fusestatic = False
    model = model.compile()
    data = mujoco.MjData(model)
    for q in ((0.0, 0.0), (0.7, -1.2), (-2.5, 1.9)):
        data.qpos[:] = 0.0
        data.qpos[model.joint("turn").qposadr[0]] = q[0]
        data.qpos[model.joint("pitch").qposadr[0]] = q[1]
        mujoco.mj_forward(model, data)
        tip = model.body("tip").id
        want = frames(arm, q)[-1]
        assert np.allclose(want[:3, 3], data.xpos[tip], atol=1e-9)
        assert np.allclose(want[:3, :3], data.xmat[tip].reshape(3, 3), atol=1e-9)
@pytest.mark.slow
def test_the_panda_reaches_five_points_and_picks_a_cube(panda_run):
    bot = Controller(panda_run.network.endpoint, "panda")
    try:
        modules = bot.ask(1)[1].split(",")
        assert {"joints", "tool", "gripper", "force", "pose"} <= set(modules)
        for point in ((0.4, 0.0, 0.4), (0.5, 0.2, 0.3), (0.3, -0.3, 0.5), (0.6, 0.0, 0.2),
                      (0.45, 0.1, 0.12)):
            assert np.linalg.norm(bot.move(*point) - point) < 0.005
        bot.move(0.5, 0.1, 0.02)
        assert bot.ask(1000)[1] == "OBJECT_1"  # gripper.grab
        lifted = bot.move(0.4, -0.1, 0.3)
        held, mass = bot.ask(1002)[0]  # gripper.read
        assert (held, mass) == (1.0, 0.2)
        cube = panda_run.stepper.snapshot.object_pose3d[0, :3]
        assert cube[2] > 0.25 and np.linalg.norm(cube - lifted) < 0.03
    finally:
        bot.close()


@pytest.mark.parametrize("keys, line, words", [
    ("tool carriage", 7, "joint lift of slider_arm is prismatic and lies on the chain"),
    ("tool tip\ngripper finger_b_joint roll", 8, "finger joint roll of slider_arm needs a "
                                                 "range"),
    ("tool tip\nhome 0 2.5", 8, "home: joint pitch of slider_arm takes angles in [-2, 2]"),
    ("tool tip\nkp 100", 8, "kp takes 2 numbers (one per joint of the arm), got 1"),
])
def test_an_arm_the_file_cannot_make_is_refused_at_its_keys_line(tmp_path, keys, line,
                                                                 words):
    path = slider(tmp_path, keys)
    with pytest.raises(FileFormatError) as err:
        load(str(path))
    assert str(err.value).startswith(f"{path}:{line}: ") and words in str(err.value)



MJCF_ARM = """<mujoco model="mjcf_arm">
  <compiler angle="degree" eulerseq="xyz"/>
  <default>
    <joint axis="0 1 0" range="-90 90"/>
    <default class="wrist"><joint axis="1 0 0" range="-150 150"/></default>
  </default>
  <worldbody>
    <body name="base_link">
      <inertial pos="0 0 0" mass="2" diaginertia="0.01 0.01 0.01"/>
      <body name="upper" pos="0 0 0.1" euler="0 0 30">
        <joint name="shoulder"/>
        <geom type="box" size="0.02 0.02 0.15" pos="0 0 0.15" mass="1"/>
        <body name="bracket" pos="0.02 0 0.3" quat="0.9238795 0 0.3826834 0">
          <geom type="box" size="0.02 0.02 0.02" mass="0.2"/>
          <body name="fore" pos="0 0.01 0.05" axisangle="0 0 1 20" childclass="wrist">
            <joint name="elbow"/>
            <geom type="box" size="0.02 0.02 0.1" pos="0 0 0.1" mass="0.5"/>
            <site name="tip" pos="0 0 0.2"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_an_mjcf_chain_is_mujocos_own_kinematics(tmp_path):
    """An MJCF's body frames (pos with euler, quat, axisangle), a jointless body between two
    joints and joint axes from <default> classes make the arm MuJoCo itself computes."""
    from coopsim.model.plugins import ROBOT_TYPES

    (tmp_path / "arm.xml").write_text(MJCF_ARM)
    rtype = ROBOT_TYPES.get(load(str(scenario(tmp_path, "name m1\nposition 0 0 0\ndescription arm.xml\n"
                                                        "tool tip"))).robots[0].type)
    arm = rtype.ARM
    assert [link.key for link in arm.links] == ["shoulder", "elbow"]
    model = mujoco.MjModel.from_xml_string(MJCF_ARM)
    data = mujoco.MjData(model)
    for q in ((0.0, 0.0), (0.7, -1.2), (-1.5, 2.4)):
        data.qpos[:] = q
        mujoco.mj_forward(model, data)
        want = frames(arm, q)[-1]
        assert np.allclose(want[:3, 3], data.site("tip").xpos, atol=1e-6)
        assert np.allclose(want[:3, :3], data.site("tip").xmat.reshape(3, 3), atol=1e-6)
