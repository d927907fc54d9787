"""The coopsim-arm example plugin, installed the way a newcomer installs it, into a fresh venv.

A temporary venv (made once for this module) gets ``pip install -e`` of coopsim and of
examples/plugin-arm; everything below runs with that venv's executables, as separate processes:
the registries, ``coopsim check`` and ``coopsim run`` with the arms scenario, the in-process
``reach`` driver, the Python client and ``run_controller`` driving an arm over the network, the
errors, and the viewer drawing the arms (a real window under Xvfb, grabbed from the X server into
test-artifacts/screenshots/plugin_arm.png). Nothing of the plugin is imported here: the expected
positions come from this file's own forward kinematics.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import math
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import venv as pyvenv
import zlib
from pathlib import Path

import numpy as np
import pytest

from venvhelpers import link_dependencies, share_dependencies
from xvfbhelpers import start_xvfb, stop_xvfb

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "plugin-arm"
SCENARIO = PLUGIN / "scenarios" / "arms.scenario"
PROBE = Path(__file__).with_name("arm_probe.py")
EXAMPLE = PLUGIN / "clients" / "drive_arm.py"
SHOTS = ROOT / "test-artifacts" / "screenshots"
LENGTHS = (0.40, 0.35, 0.25)  # m, the arm's links (examples/plugin-arm/coopsim_arm/kinematics.py)
LINK_COLORS = ((200, 110, 20), (235, 150, 40), (250, 190, 90))
FLOOR_COLOR = (222, 222, 214)  # coopsim.viewer.scene
PROBE_ANGLES, PROBE_GOAL = (0.6, -0.9, 0.7), (0.5, 0.4)  # arm_probe.py's
GUI_ANGLES = (-0.9, 0.8, 0.6)  # rad: arm2 bent up and away from its name label
RED_TARGET = (-1.6, 1.6)  # m, arms.scenario

pytestmark = pytest.mark.slow  # every test needs the venv fixture (about 25 s to build)


# -- set-up ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """The bin folder of a new venv holding coopsim and coopsim-arm, both editable."""
    base = tmp_path_factory.mktemp("plugin-arm")
    where = base / "venv"
    # no pip of its own (ensurepip unpacking pip into it: ~5 s of CPU): this environment's
    # pip installs into it (``pip --python``, as tests/app/test_release.py), both packages in
    # one resolution
    pyvenv.create(where, with_pip=False, symlinks=True)
    # coopsim's dependencies are this environment's, linked (tests/venvhelpers.py): pip
    # resolves them as installed instead of unpacking ~600 MB again; coopsim and the plugin
    # are installed as a newcomer installs them (editable, with pip)
    python = where / "bin" / "python"
    share_dependencies(python, link_dependencies(base / "deps"))
    result = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                             "-q", "--no-compile", "--disable-pip-version-check",
                             "-e", str(ROOT), "-e", str(PLUGIN)],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return where / "bin"


def clean_env(display: str | None = None) -> dict:
    """This process's environment without a display (unless given) or a PYTHONPATH that could
    let the venv see this interpreter's packages."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "PYTHONPATH")}
    if display:
        env["DISPLAY"] = display
    return env


def run(venv: Path, program: str, *args, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run one of the venv's executables (``coopsim``, ``python``) to its end, headless.

    ``timeout`` only guards against a hang: under two CPU burners and a loaded machine a first
    ``coopsim run`` of a fresh venv took over 120 s (CI)."""
    return subprocess.run([str(venv / program), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=PLUGIN, env=clean_env())


class Sim:
    """``coopsim run`` of the venv in the background; ``endpoint`` is its name server."""

    def __init__(self, venv: Path, *args: str, display: str | None = None) -> None:
        self.proc = subprocess.Popen([str(venv / "coopsim"), "run", *args, "--port", "0"],
                                     cwd=PLUGIN, env=clean_env(display),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        self.endpoint = self.wait_for(r"name server: (tcp://\S+)")

    def wait_for(self, pattern: str) -> str:
        """The first group of the first stderr line matching ``pattern``."""
        for line in self.proc.stderr:
            match = re.search(pattern, line)
            if match:
                return match.group(1)
        raise AssertionError(f"no line matching {pattern!r} (exit {self.proc.wait()})")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def tip_of(angles, base) -> tuple[float, float, float]:
    """Forward kinematics: the tip's world x, y (m) and heading (rad) for a base pose."""
    return link_points(angles, base, 1.0)[-1]


def link_points(angles, base, along: float) -> list[tuple[float, float, float]]:
    """The point ``along`` (0..1) each link, world frame, with the link's heading."""
    x, y, yaw = base
    out = []
    for angle, length in zip(angles, LENGTHS):
        yaw += angle
        out.append((x + along * length * math.cos(yaw), y + along * length * math.sin(yaw), yaw))
        x, y = x + length * math.cos(yaw), y + length * math.sin(yaw)
    return out


# -- the plugin in coopsim's command line --------------------------------------------------------

def test_coopsim_list_shows_the_arm_plugins_with_their_package(venv):
    result = run(venv, "coopsim", "list")
    assert result.returncode == 0, result.stderr
    for label in ("arm", "arm_joints", "effector", "reach"):
        line = next((ln for ln in result.stdout.splitlines() if ln.startswith(f"  {label} ")),
                    "")
        assert line.endswith("[coopsim-arm 0.1.0]"), (label, line)
    assert "1100 set_positions, 1101 set_speeds, 1102 stop, 1103 read" in result.stdout
    assert "failed to load" not in result.stdout


def test_coopsim_check_accepts_the_scenario_and_its_world(venv):
    result = run(venv, "coopsim", "check", SCENARIO, SCENARIO.with_name("workcell.world"))
    assert result.returncode == 0, result.stderr
    assert "2 file(s) OK" in result.stdout


def test_coopsim_run_lockstep_for_5_s_exits_0(venv):
    result = run(venv, "coopsim", "run", SCENARIO, "--headless", "--mode", "lockstep",
                 "--duration", "5", "--port", "0")
    assert result.returncode == 0, result.stderr
    assert re.search(r"steps\s+500\n", result.stdout) and "Traceback" not in result.stderr
    assert re.search(r"robots\s+3\n", result.stdout)


def test_in_process_reach_driver_brings_arm1_tip_to_the_red_target(venv):
    result = run(venv, "python", PROBE, "reach", SCENARIO)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["targets"] == [["red", [*RED_TARGET, 0.0]]] and out["status"]["step"] == 500
    x, y, heading = out["tip"]
    assert math.hypot(x - RED_TARGET[0], y - RED_TARGET[1]) < 0.02
    angles, rates = out["joints"][:3], out["joints"][3:]
    assert tip_of(angles, out["base"]) == pytest.approx(out["tip"], abs=1e-3)
    assert max(map(abs, rates)) < 1e-3  # the driver stopped the joints once there


@pytest.fixture(scope="module")
def driven(venv) -> dict:
    """What arm_probe.py's ``drive`` saw of arm2 in a lockstep run (one run, several tests)."""
    sim = Sim(venv, str(SCENARIO), "--headless", "--mode", "lockstep")
    try:
        result = run(venv, "python", PROBE, "drive", sim.endpoint, timeout=600)
        example = run(venv, "python", EXAMPLE, "--nameserver", sim.endpoint, "--steps", "600",
                      timeout=600)  # the README's example client, after the probe
    finally:
        sim.stop()
    assert result.returncode == 0, result.stderr
    return {**json.loads(result.stdout), "example": example}


def test_python_client_sets_arm2_joints_and_the_tip_follows_forward_kinematics(driven):
    assert sorted(driven["modules"]) == ["arm_joints", "compass", "effector", "gps", "target"]
    assert driven["joints"][:3] == pytest.approx(PROBE_ANGLES, abs=0.01)
    x, y, heading = tip_of(driven["joints"][:3], driven["base"])
    assert driven["tip"][:2] == pytest.approx((x, y), abs=2e-3)
    assert math.cos(driven["tip"][2] - heading) == pytest.approx(1.0, abs=1e-5)
    x, y, _ = tip_of(PROBE_ANGLES, driven["base"])  # and where the commanded angles put it
    assert driven["tip"][:2] == pytest.approx((x, y), abs=0.01)


def test_run_controller_hosts_the_reach_driver_over_the_network(driven):
    assert driven["iterations"] == 600
    x, y, _ = driven["reached"]
    assert math.hypot(x - PROBE_GOAL[0], y - PROBE_GOAL[1]) < 0.02


def test_the_readmes_example_client_runs(driven):
    result = driven["example"]
    assert result.returncode == 0, result.stderr
    bent, refused, reached = result.stdout.splitlines()
    numbers = [float(v) for v in re.findall(r"[-+]?\d+\.\d+", bent)]
    assert numbers[:3] == [0.6, -0.9, 0.7]  # the angles, then tip x, y, heading, then FK x, y
    assert numbers[3:5] == pytest.approx(numbers[6:8], abs=0.003)
    assert numbers[6:8] == pytest.approx(tip_of(PROBE_ANGLES, driven["base"])[:2], abs=0.001)
    assert refused.startswith("refused as expected: error 4: joint0 angle 3 rad")
    miss = re.fullmatch(r"reach: tip at \(0\.\d+, 0\.\d+\) m, (\d+) mm from the goal", reached)
    assert miss and int(miss.group(1)) < 20


def test_set_positions_outside_the_limits_answers_error_4(driven):
    code, text = driven["bad"]
    assert code == 4 and text.startswith("joint0 angle 3 rad is outside its limits")


@pytest.mark.parametrize("command", ["check", "run"])
def test_an_arm_on_the_kinematic_engine_is_refused_at_its_line(venv, tmp_path, command):
    text = SCENARIO.read_text().replace("file        workcell.world",
                                        f"file        {SCENARIO.with_name('workcell.world')}")
    text = text.replace("seed        1", "seed        1\nengine      kinematic")
    bad = tmp_path / "kinematic_arms.scenario"
    bad.write_text(text)
    line = text.splitlines().index("[ROBOT_1]") + 1
    args = [command, bad] + (["--headless", "--port", "0"] if command == "run" else [])
    result = run(venv, "coopsim", *args)
    assert result.returncode == 2
    assert f"{bad}:{line}: robot arm1 (arm): the kinematic engine has no joints" in result.stderr
    assert "Traceback" not in result.stderr


# -- the viewer draws the arms -------------------------------------------------------------------

@pytest.fixture(scope="module")
def display():
    """A private Xvfb display (its name, ``:N``)."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None or ctypes.util.find_library("X11") is None:
        pytest.skip("Xvfb or libX11 is not installed (apt-get install xvfb libx11-6)")
    proc, name = start_xvfb(xvfb)
    SHOTS.mkdir(parents=True, exist_ok=True)
    yield name
    stop_xvfb(proc)


class _XImage(ctypes.Structure):
    """The leading fields of Xlib's XImage (all this file reads)."""

    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int), ("xoffset", ctypes.c_int),
                ("format", ctypes.c_int), ("data", ctypes.c_void_p),
                ("byte_order", ctypes.c_int), ("bitmap_unit", ctypes.c_int),
                ("bitmap_bit_order", ctypes.c_int), ("bitmap_pad", ctypes.c_int),
                ("depth", ctypes.c_int), ("bytes_per_line", ctypes.c_int),
                ("bits_per_pixel", ctypes.c_int), ("red_mask", ctypes.c_ulong),
                ("green_mask", ctypes.c_ulong), ("blue_mask", ctypes.c_ulong)]


def grab_screen(display: str) -> np.ndarray:
    """The whole X screen as (height, width, 3) RGB bytes: what a person would see, the
    ``coopsim run --gui`` window included (Xvfb keeps every window's pixels in its screen)."""
    x11 = ctypes.CDLL(ctypes.util.find_library("X11"))
    x11.XOpenDisplay.restype, x11.XOpenDisplay.argtypes = ctypes.c_void_p, [ctypes.c_char_p]
    x11.XDefaultRootWindow.restype = ctypes.c_ulong
    x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x11.XGetImage.restype = ctypes.POINTER(_XImage)
    x11.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int,
                              ctypes.c_uint, ctypes.c_uint, ctypes.c_ulong, ctypes.c_int]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    dpy = x11.XOpenDisplay(display.encode())
    assert dpy, f"cannot open display {display}"
    try:
        width, height = 1280, 900  # the Xvfb screen above
        image = x11.XGetImage(dpy, x11.XDefaultRootWindow(dpy), 0, 0, width, height,
                              0xFFFFFFFF, 2).contents  # 2 = ZPixmap
        assert image.bits_per_pixel == 32 and image.red_mask == 0xFF0000
        raw = ctypes.string_at(image.data, image.bytes_per_line * height)
        pixels = np.frombuffer(raw, np.uint8).reshape(height, image.bytes_per_line)
        return pixels[:, :width * 4].reshape(height, width, 4)[:, :, 2::-1].copy()  # BGRX
    finally:
        x11.XCloseDisplay(dpy)


def save_png(path: Path, rgb: np.ndarray) -> None:
    """Write (h, w, 3) uint8 RGB as a PNG (no imaging library needed)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    h, w, _ = rgb.shape
    rows = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))  # filter 0 on every row
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2,
                                                                       0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))


def floor_to_screen(rgb: np.ndarray, length: float, width: float):
    """World (x, y) -> screen (column, row), from where the floor's colour lies on the screen
    (the floor is centred on the origin, x to the right, y up, unturned at start)."""
    floor = np.all(np.abs(rgb.astype(int) - FLOOR_COLOR) <= 3, axis=2)
    rows, cols = np.nonzero(floor)
    assert len(rows) > 1000, "the floor is not on the screen"
    left, right, top, bottom = cols.min(), cols.max() + 1, rows.min(), rows.max() + 1
    return lambda x, y: (left + (x / length + 0.5) * (right - left),
                         top + (0.5 - y / width) * (bottom - top))


def colour_near(rgb: np.ndarray, col: float, row: float, colour, radius: int = 2) -> bool:
    """True when a pixel within ``radius`` px of (col, row) has ``colour`` (+-12 per channel)."""
    c, r = int(round(col)), int(round(row))
    patch = rgb[r - radius:r + radius + 1, c - radius:c + radius + 1].astype(int)
    return bool(np.any(np.all(np.abs(patch - colour) <= 12, axis=2)))


def wait_until(what: str, check, timeout: float = 180.0):
    """Poll ``check()`` until it returns something true; return that."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def settled_arms(client) -> dict | None:
    """Base poses and joint angles of both arms once arm1 is at the target and arm2 at
    GUI_ANGLES, both still (else None)."""
    arms = {name: client.robot(name) for name in ("arm1", "arm2")}
    joints = {name: list(bot.arm_joints.read()) for name, bot in arms.items()}
    tip = arms["arm1"].effector.read()
    still = all(max(map(abs, q[3:])) < 1e-3 for q in joints.values())
    there = math.hypot(tip[0] - RED_TARGET[0], tip[1] - RED_TARGET[1]) < 0.02 and \
        np.allclose(joints["arm2"][:3], GUI_ANGLES, atol=0.01)
    if not (still and there):
        return None
    bases = client.sim().robots()
    return {name: (bases[name], q[:3]) for name, q in joints.items()}


def test_viewer_of_coopsim_run_gui_draws_the_arms_links_where_they_are(venv, display):
    from coopsim.client import Client  # the client needs no plugin: commands come from arm2

    sim = Sim(venv, str(SCENARIO), "--gui", display=display)
    try:
        sim.wait_for(r"(viewer: showing)")
        with Client(sim.endpoint) as client:
            client.robot("arm2").arm_joints.set_positions(*GUI_ANGLES)  # realtime: kept until changed
            arms = wait_until("the arms to settle", lambda: settled_arms(client))
            time.sleep(1.0)  # a few of the viewer's frames (10 per s) after they stopped
            rgb = grab_screen(display)
            after = settled_arms(client)
            assert after is not None and all(np.allclose(after[n][1], arms[n][1], atol=1e-3)
                                             for n in arms), "an arm moved during the grab"
    finally:
        sim.stop()
    save_png(SHOTS / "plugin_arm.png", rgb)
    to_screen = floor_to_screen(rgb, 8.0, 6.0)
    for name, (base, angles) in arms.items():
        for along in (0.25, 0.5, 0.75):
            for link, (x, y, _) in enumerate(link_points(angles, base, along)):
                assert colour_near(rgb, *to_screen(x, y), LINK_COLORS[link]), (name, link, along)
    base_corner = {"arm1": (-2.2 - 0.1, 1.0 + 0.1), "arm2": (1.2 + 0.1, 1.0 - 0.1)}
    for (name, colour), xy in zip((("arm1", (40, 90, 230)), ("arm2", (40, 180, 60))),
                                  base_corner.values()):
        assert colour_near(rgb, *to_screen(*xy), colour), name  # the base, off its links
    assert colour_near(rgb, *to_screen(0.0, 2.5), FLOOR_COLOR)  # bare floor stays floor
