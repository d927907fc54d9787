"""Plugin discovery through real entry points: a distribution of test plugins is put on the path
(a .dist-info folder, as pip installs one) and the registries read it; broken plugins are
reported with their package and skipped while the rest loads."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from coopsim.model.plugins import (DRIVERS, ENGINES, MODULES, REGISTRIES, ROBOT_TYPES, RULES,
                                   _check_module)
from coopsim.model.registry import Registry

PLUGINS = textwrap.dedent('''
    from coopsim.model.commands import Command
    from coopsim.model.module import Module

    class Good(Module):
        label = "good"
        description = "a plugin module"
        commands = (Command(5100, "read", "good", kind="read"),)
        fields = ("value",)

    class Clash(Module):
        label = "clash"
        commands = (Command(200, "read", "clash", kind="read"),)

    class Lying(Module):
        label = "something_else"

    class NotAModule:
        label = "invalid"
''')
ENTRY_POINTS = textwrap.dedent('''
    [coopsim.modules]
    good = fakeplug_mods:Good
    broken = fakeplug_missing:Nope
    sonar = fakeplug_mods:Good
    clash = fakeplug_mods:Clash
    invalid = fakeplug_mods:NotAModule
    lying = fakeplug_mods:Lying
''')


@pytest.fixture
def plugin_path(tmp_path, monkeypatch):
    """A folder holding the fakeplug distribution, on sys.path (and PYTHONPATH for children)."""
    (tmp_path / "fakeplug_mods.py").write_text(PLUGINS)
    info = tmp_path / "fakeplug-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplug\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_plugins_load_by_entry_point_and_bad_ones_are_reported(plugin_path):
    modules = Registry("module", "coopsim.modules", check=_check_module)
    assert set(modules.labels()) >= {"good", "sonar", "motors"} and "broken" not in modules
    assert str(modules.origin("good")) == "fakeplug 1.2"
    assert modules.origin("sonar").package == "coopsim"  # the built-in keeps its label
    problems = "\n".join(modules.problems)
    for label, why in (("broken", "cannot import fakeplug_missing:Nope"),
                       ("sonar", "duplicate label"), ("clash", "command id(s) [200]"),
                       ("invalid", "not a subclass of Module"),
                       ("lying", "its label attribute is 'something_else'")):
        line = next(ln for ln in modules.problems if f"coopsim.modules:{label} " in ln)
        assert "from fakeplug 1.2" in line and why in line and line.endswith("skipped"), line
    assert len(modules.problems) == 5, problems


BUILTINS = {"robot types": {"single", "team2"}, "engines": {"pymunk", "kinematic"},
            "modules": {"motors", "sonar", "target", "odometry", "gps", "compass", "bumper",
                        "support"},
            "drivers": {"wander", "goto_target", "follow_leader"},
            "rules": {"stop_when_all_at_target"},
            "metric kinds": {"distance", "speed", "at_target", "python", "min_sonar"}}


def test_builtins_come_from_the_coopsim_distribution():
    for kind, registry in REGISTRIES.items():
        assert BUILTINS[kind] <= set(registry.labels()), kind
        for label in BUILTINS[kind]:
            assert registry.origin(label).package == "coopsim", (kind, label)
    assert {"single", "team2"} <= set(ROBOT_TYPES) and {"pymunk", "kinematic"} <= set(ENGINES)
    assert {"wander", "goto_target", "follow_leader"} <= set(DRIVERS)
    assert "stop_when_all_at_target" in RULES and "sonar" in MODULES


@pytest.mark.slow
def test_engines_import_only_when_asked():
    code = ("import sys\nfrom coopsim.model.plugins import ENGINES\n"
            "assert 'pymunk' in ENGINES.labels() and 'pymunk' not in sys.modules\n"
            "ENGINES.get('pymunk')\nassert 'pymunk' in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_the_default_engine_is_found_without_importing_another_engine():
    """``coopsim.defaults`` names the default engine's class in the metadata: a run looks it up
    importing that engine only (the scan by label imported aerial, kinematic, mujoco and MuJoCo
    before it reached pymunk, ~0.2 s of every run's CPU)."""
    code = ("import sys\nfrom coopsim.model.plugins import ENGINES, default_engine\n"
            "label = default_engine()\nprint(label)\n"
            "print(sorted(other for other in ENGINES.labels() if other != label and "
            "ENGINES.origin(other).target.split(':')[0] in sys.modules))\n"
            "print('mujoco' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["pymunk", "[]", "False"], (
        f"{done.stdout}(an install whose metadata predates coopsim.defaults scans by label: "
        "pip install -e .)")


def test_a_packages_declared_default_comes_after_the_builtins(tmp_path, monkeypatch):
    """Declarations in ``coopsim.defaults`` are read without importing: the built-ins' first,
    then other packages' by name; one naming no registered class is passed over."""
    from coopsim.model.plugins import declared_defaults
    info = tmp_path / "fakeeng-0.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeeng\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(
        "[coopsim.engines]\nfast = fakeeng_missing:Fast\n\n"
        "[coopsim.defaults]\nengine = fakeeng_missing:Fast\nrule = fakeeng_missing:Fast\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    engines = Registry("engine", "coopsim.engines", lazy=True)
    assert declared_defaults(engines, "engine") == ["pymunk", "fast"]
    assert "fakeeng_missing" not in sys.modules  # nothing imported, not even a broken module
    assert declared_defaults(Registry("rule", "coopsim.rules", lazy=True), "rule") == []


@pytest.mark.slow
def test_coopsim_list_names_every_plugin_and_its_package(plugin_path):
    env = dict(os.environ, PYTHONPATH=str(plugin_path))
    done = subprocess.run([sys.executable, "-m", "coopsim", "list"], capture_output=True,
                          text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for heading in ("Robot types:", "Modules:", "Drivers:", "Engines:", "Rules:",
                    "Metric kinds:"):
        assert heading in out
    assert "good" in out and "[fakeplug 1.2]" in out and "[coopsim " in out
    assert "5100 read" in out
    assert any(line.strip().startswith("features:") and "differential" in line
               for line in out.splitlines())
    failed = out.split("Plugins that failed to load:")[1].strip().splitlines()
    assert len(failed) == 5 and all("fakeplug 1.2" in line for line in failed)


def test_registering_twice_in_code_is_refused():
    reg = Registry("widget")
    reg.register("a")(int)
    with pytest.raises(Exception, match="registered twice"):
        reg.register("a")(float)


def test_the_default_and_the_batch_engine_are_found_by_declaration(monkeypatch):
    """``Engine.default`` and ``Engine.features`` pick the engines the core runs without naming
    one: swap the declarations and the choice follows them, not the labels."""
    from coopsim.model.errors import RegistryError
    from coopsim.model.plugins import default_engine, engine_with
    from coopsim.sim.world import World
    from helpers import robot, scenario

    assert (default_engine(), engine_with("batch"), engine_with("swarm")) == \
        ("pymunk", "kinematic", "kinematic")
    spec = scenario([robot("r1", 0, 0)])
    assert spec.settings.engine == "" and World(spec).engine_label == "pymunk"
    pymunk, kinematic = ENGINES.get("pymunk"), ENGINES.get("kinematic")
    monkeypatch.setattr(pymunk, "default", False)
    monkeypatch.setattr(kinematic, "default", True)
    monkeypatch.setattr(kinematic, "features", kinematic.features - {"batch"})
    monkeypatch.setattr(pymunk, "features", pymunk.features | {"batch"})
    assert (default_engine(), engine_with("batch")) == ("kinematic", "pymunk")
    assert World(spec).engine_label == "kinematic"
    with pytest.raises(RegistryError, match="no engine declares the feature 'wings'"):
        engine_with("wings")

