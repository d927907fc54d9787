"""The Module base keeps only what every module needs; the rest are optional capabilities
(coopsim.model.capabilities) a front end asks for by type: a module offers one by declaring its
members (duck typing), a user may adapt someone else's module, and a module written when the
base had the members keeps working through a documented deprecation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from coopsim.model import capabilities as caps
from coopsim.model.capabilities import (Answerer, LaserScanner, Learnable, PerTargetReading,
                                        Recordable, TwistDriven, capability, register_adapter,
                                        unregister_adapter)
from coopsim.model.commands import Command
from coopsim.model.module import Column, Module, describe_module, validate_module
from coopsim.model.plugins import MODULES


def test_the_module_base_has_at_most_14_public_members():
    # 12, and the step plan's two that every sensing kind is planned with: its
    # state schema (state_fields) and the noise it draws (noise_draws)
    public = sorted(n for n in dir(Module) if not n.startswith("_"))
    assert len(public) <= 14, public
    assert {"state_fields", "noise_draws"} <= set(public)
    for gone in ("laser_scan", "from_twist", "observation_space", "draw", "answer", "record",
                 "columns", "field_names", "validate", "describe"):
        assert not hasattr(Module, gone), gone


def test_front_ends_find_the_builtins_capabilities_by_type():
    offered = {label: {k.__name__ for k in caps.CAPABILITIES if capability(m, k) is not None}
               for label, m in MODULES.items()}
    assert {"LaserScanner", "Recordable"} <= offered["lidar"]
    assert {"TwistDriven", "Learnable"} <= offered["motors"] & offered["velocity"]
    assert "Drawable" in offered["sonar"] and "PerTargetReading" in offered["target"]
    # its reading is a compiled kernel (the copies backend runs it too); no front end
    assert offered["compass"] == {"ModuleKernel"}
    assert "ModuleKernel" in offered["gps"] & offered["motors"]
    assert capability(MODULES.get("lidar"), LaserScanner).laser_rank > \
        capability(MODULES.get("sonar"), LaserScanner).laser_rank
    for label, m in MODULES.items():
        assert caps.Legacy not in m.__mro__, f"{label} relies on a deprecated default"


class Ping(Module):
    """A third-party module written to the capability by duck typing: laser_scan only."""

    label = "ping_caps_test"
    commands = (Command(9720, "read", "ping_caps_test", kind="read", doc="one distance"),)
    fields = ("distance",)

    @classmethod
    def laser_scan(cls, snap, robot, params, radius):
        return caps.LaserScan(0.0, 0.1, np.array([1.0]), 0.0, 2.0)


def test_a_module_declaring_part_of_a_capability_gets_its_defaults():
    scanner = capability(Ping, LaserScanner)
    assert scanner.laser_mount({}) == (0.0, 0.0, 0.0) and scanner.laser_rank == 0
    assert scanner.laser_scan(None, "r", {}, 0.1).ranges.tolist() == [1.0]
    assert capability(Ping, TwistDriven) is None and capability(Ping, Learnable) is None
    learn = capability(Ping, Learnable, default=True)     # every module, to a learner
    low, high = learn.observation_space({}, 0)
    assert low.tolist() == [-np.inf] and high.tolist() == [np.inf]
    assert capability(Ping, Answerer, default=True).answer_robot(
        None, "r", np.array([0.5]), "", None) == ("", [0.5])
    assert describe_module(Ping)["draw"] is None


def test_an_old_module_calling_a_removed_default_works_deprecated():
    with pytest.warns(DeprecationWarning, match="no longer on the Module base"):
        class Old(Module):
            label = "old_caps_test"
            fields = ("a", "b")
            columns = (Column("old_caps_a", 1e-3, 1, field=0),)

            @classmethod
            def answer(cls, command, row, text, snap):
                text, data = super().answer(command, row, text, snap)   # the old default
                return "old", data[:1] + [len(cls.field_names(3))]

    assert caps.Legacy in Old.__mro__
    with pytest.warns(DeprecationWarning):
        assert Old.answer(None, np.array([4.0, 5.0]), "", None) == ("old", [4.0, 2])
    with pytest.warns(DeprecationWarning):
        assert Old.describe()["label"] == "old_caps_test"
    validate_module(Old)
    # The old defaults are no capability of its own: only what it defines counts.
    assert capability(Old, PerTargetReading) is None and capability(Old, LaserScanner) is None
    assert [c.name for c in capability(Old, Recordable).columns] == ["old_caps_a"]
    with pytest.warns(DeprecationWarning):   # the network's read: its own answer, old default
        assert capability(Old, Answerer).answer_robot(None, "r", np.array([4.0, 5.0]), "",
                                                      None) == ("old", [4.0, 2])


def test_a_module_that_names_no_removed_member_gets_no_legacy_base():
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        class New(Module):
            label = "new_caps_test"

            @classmethod
            def sense(cls, frame, rows, p, prev):
                return np.zeros((len(rows), 0))

    assert caps.Legacy not in New.__mro__


def test_an_adapter_maps_someone_elses_module_and_can_be_removed():
    class Scan:
        laser_rank = 7

        @staticmethod
        def laser_scan(snap, robot, params, radius):
            return "adapted"

    class Compass:   # stands for a module one cannot edit
        label = "compass"

    assert capability(MODULES.get("compass"), LaserScanner) is None
    register_adapter(LaserScanner, "compass", Scan)
    try:
        scanner = capability(MODULES.get("compass"), LaserScanner)
        assert scanner.laser_scan(None, "r", {}, 0.0) == "adapted"
        assert scanner.laser_rank == 7 and scanner.laser_mount({}) == (0.0, 0.0, 0.0)
        assert scanner.label == "compass" and scanner.fields == MODULES.get("compass").fields
    finally:
        unregister_adapter(LaserScanner, "compass")
    assert capability(MODULES.get("compass"), LaserScanner) is None
    with pytest.raises(TypeError, match="none of LaserScanner's members"):
        register_adapter(LaserScanner, "compass", Compass)
    with pytest.raises(TypeError, match="not a module capability"):
        register_adapter(dict, "compass", Scan)


def test_an_old_override_of_validate_and_describe_is_still_called():
    from coopsim.model.module import check_declaration, declaration

    with pytest.warns(DeprecationWarning):
        class Checked(Module):
            label = "checked_caps_test"
            seen: list = []

            @classmethod
            def validate(cls):
                cls.seen.append("validate")
                super().validate()

            @classmethod
            def describe(cls):
                return {**super().describe(), "extra": 1}

    with pytest.warns(DeprecationWarning):
        check_declaration(Checked)
        assert declaration(Checked)["extra"] == 1
    assert Checked.seen == ["validate"]


def test_the_former_copy_kernel_capability_still_imports_and_warns():
    # the copies backend reads ModuleKernel now; a plugin naming the old capability still loads
    from coopsim.model.capabilities import CopyKernel
    with pytest.warns(DeprecationWarning, match="ModuleKernel"):
        class Old(CopyKernel):
            copy_kind = "frame"
    assert Old.copy_kind == "frame"
