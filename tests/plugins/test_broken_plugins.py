"""Broken out-of-tree plugins, installed the way pip installs a package (a ``.dist-info`` folder
with entry points, on the path of a real ``coopsim`` process): ``coopsim check`` names the file
and line of a robot type whose module failed to load, and a plugin that raises while a run
starts is one line naming it and its package, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EMPTY_WORLD = ROOT / "worlds" / "empty.world"

PACKAGE = textwrap.dedent('''
    from coopsim.model.commands import Command
    from coopsim.model.driver import Rule
    from coopsim.model.module import Module
    from coopsim.model.robot_type import Assembly
    from coopsim.plugins.robots.single import Single, chassis


    class Fuse(Module):
        label = "fuse"
        description = "raises when it senses"
        commands = (Command(7100, "read", "fuse", kind="read"),)
        fields = ("value",)

        @classmethod
        def sense(cls, frame, rows, p, prev):
            raise RuntimeError("the fuse blew")


    class Carrier(Single):
        @classmethod
        def build(cls, spec):
            body, member = chassis(spec.name, "chassis", spec.position[0], spec.position[1],
                                   spec.yaw, cls.modules)
            return Assembly((member,), (body,))


    class FuseBot(Carrier):
        label = "fusebot"
        modules = Single.modules + ("fuse",)


    class LampBot(Carrier):
        label = "lampbot"
        modules = Single.modules + ("lamp",)


    class Grumpy(Rule):
        label = "grumpy"
        description = "raises when it checks the scenario"

        def check(self, scenario):
            return 1 / 0
''')
ENTRY_POINTS = textwrap.dedent('''
    [coopsim.modules]
    fuse = brokenbot:Fuse
    lamp = brokenbot_missing:Lamp
    [coopsim.robot_types]
    fusebot = brokenbot:FuseBot
    lampbot = brokenbot:LampBot
    [coopsim.rules]
    grumpy = brokenbot:Grumpy
''')

pytestmark = pytest.mark.slow  # its tests start a process, a window or a cluster


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    """A folder holding the brokenbot 0.3 distribution and its scenarios."""
    where = tmp_path_factory.mktemp("brokenbot")
    (where / "brokenbot.py").write_text(PACKAGE)
    info = where / "brokenbot-0.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenbot\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    for name, rtype, extra in (("lamp", "lampbot", ""), ("fuse", "fusebot", ""),
                               ("grumpy", "single", "\n[RULE_1]\ntype grumpy\n")):
        (where / f"{name}.scenario").write_text(
            f"[WORLD]\nfile {EMPTY_WORLD}\n\n[ROBOT_1]\ntype {rtype}\nname r1\n"
            f"position 0 0 0\n\n[SETTINGS]\nduration 0.5\n{extra}")
    return where


def coopsim(plugin: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(plugin))
    return subprocess.run([sys.executable, "-m", "coopsim", *args], capture_output=True,
                          text=True, timeout=300, env=env, cwd=plugin)


def line_of(text: str) -> int:
    """The line of brokenbot.py holding ``text``."""
    return next(k for k, line in enumerate(PACKAGE.splitlines(), 1) if text in line)


def last_line(done: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    return done.stderr.strip().splitlines()[-1]


def test_check_names_the_line_of_a_robot_type_whose_module_did_not_load(plugin):
    done = coopsim(plugin, "check", "lamp.scenario")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "OK" not in done.stdout
    line = last_line(done)
    assert line.startswith("lamp.scenario:5: robot type 'lampbot' carries module 'lamp', "
                           "which is not loaded"), line
    assert "from brokenbot 0.3" in line and "No module named 'brokenbot_missing'" in line


def test_run_refuses_the_same_robot_type_in_one_line(plugin):
    done = coopsim(plugin, "run", "--headless", "lamp.scenario")
    assert done.returncode == 2
    assert "lamp.scenario:5: robot type 'lampbot' carries module 'lamp'" in last_line(done)


def test_a_module_that_raises_as_the_run_starts_is_named_with_its_package(plugin):
    assert coopsim(plugin, "check", "fuse.scenario").returncode == 0  # it loads fine
    done = coopsim(plugin, "run", "--headless", "fuse.scenario")
    assert done.returncode == 2
    assert last_line(done) == ("coopsim: plugin coopsim.modules:fuse from brokenbot 0.3 raised "
                               f"RuntimeError: the fuse blew (brokenbot.py:{line_of('fuse blew')}, in sense)")


def test_a_rule_that_raises_in_its_check_is_a_file_line_error(plugin):
    done = coopsim(plugin, "check", "grumpy.scenario")
    assert done.returncode == 2
    assert last_line(done) == ("grumpy.scenario:12: plugin coopsim.rules:grumpy from "
                               "brokenbot 0.3 raised ZeroDivisionError: division by zero "
                               f"(brokenbot.py:{line_of('1 / 0')}, in check)")
