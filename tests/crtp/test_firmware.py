"""The firmware model without sockets: high-level plans, trajectory checks, the watchdog."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from coopsim.crtp import wire
from coopsim.crtp.firmware import Firmware
from coopsim.crtp.planner import PIECE_BYTES, Move, read_pieces

AIRFRAME = {"mass": 0.027, "arm": 0.046, "kf": 2.22e-8, "km": 1.3e-10, "max_speed": 2500.0,
            "ixx": 1.66e-5, "iyy": 1.67e-5, "izz": 2.93e-5}


def resting(fw: Firmware, t: float, z: float = 0.0145) -> None:
    state = np.zeros(13)
    state[2], state[3] = z, 1.0
    fw.observe(t, state)


def hl(fw: Firmware, fmt: str, *values) -> list:
    return fw.handle(wire.HIGH_LEVEL, 0, struct.pack(fmt, *values), 0.0)


def test_move_is_rest_to_rest_and_reaches_its_goal():
    m = Move(1.0, 2.0, [0, 0, 0], 0.0, [1.0, -2.0, 0.5], math.pi / 2)
    start, mid, end = m.at(1.0), m.at(2.0), m.at(3.0)
    assert start[0:3] == pytest.approx([0, 0, 0]) and start[3:9] == pytest.approx([0] * 6)
    assert end[0:3] == pytest.approx([1.0, -2.0, 0.5]) and end[3:9] == pytest.approx([0] * 6)
    assert end[9] == pytest.approx(math.pi / 2)
    assert mid[0:3] == pytest.approx([0.5, -1.0, 0.25])  # symmetric about its middle
    assert np.linalg.norm(mid[3:6]) == pytest.approx(35 / 16 * math.sqrt(5.25) / 2)


def test_pieces_past_memory_or_not_finite_are_refused():
    memory = bytearray(4096)
    with pytest.raises(ValueError, match="do not fit"):
        read_pieces(bytes(memory), 4096 - PIECE_BYTES + 4, 1)
    memory[0:4] = struct.pack("<f", float("nan"))
    memory[128:132] = struct.pack("<f", 1.0)
    with pytest.raises(ValueError, match="not finite"):
        read_pieces(bytes(memory), 0, 1)
    memory[0:4] = struct.pack("<f", 0.0)
    memory[128:132] = struct.pack("<f", -1.0)
    with pytest.raises(ValueError, match="duration"):
        read_pieces(bytes(memory), 0, 1)


def test_high_level_refusals_say_why_and_fly_nothing():
    fw = Firmware("cf1", 0, AIRFRAME, True)
    resting(fw, 0.0)
    hl(fw, "<BBBBIB", 6, 1, 1, 0, 4000, 2)  # runs past trajectory memory
    hl(fw, "<BBBBfffff", 12, 0, 0, 0, 1.0, 0.0, 1.0, 0.0, 2.0)  # go_to before take-off
    hl(fw, "<BBff?f", 7, 0, 0.5, 0.0, True, 0.0)  # take-off in 0 s
    hl(fw, "<BBff?f", 7, 0, float("nan"), 0.0, True, 1.0)  # not a number
    resting(fw, 0.002)
    assert fw.decide(0.002, 0.002, 0.0)[0] == "off"
    text = "".join(fw.console)
    assert "do not fit" in text and "go_to refused" in text and "(0, 3600]" in text
    assert "not finite" in text
    assert fw.plan is None and fw.trajectories == {}


def test_group_mask_selects_the_crazyflies_a_command_is_for():
    fw = Firmware("cf1", 0, AIRFRAME, True)
    resting(fw, 0.0)
    hl(fw, "<BB", 0, 0b10)  # in group 2
    hl(fw, "<BBff?f", 7, 0b01, 0.5, 0.0, True, 1.0)  # for group 1: not this one
    fw.decide(0.002, 0.002, 0.0)
    assert fw.plan is None
    hl(fw, "<BBff?f", 7, 0b10, 0.5, 0.0, True, 1.0)
    assert fw.decide(0.004, 0.002, 0.0)[0] == "ref"


def test_watchdog_levels_then_stops_and_notify_stop_hands_over():
    fw = Firmware("cf1", 0, AIRFRAME, True)
    resting(fw, 0.0)
    fw.handle(wire.GENERIC, 0, struct.pack("<Bffff", 7, 0.0, 0.0, 0.5, 0.0), 0.0)
    assert fw.decide(0.1, 0.1, 0.0)[0] == "ref"
    resting(fw, 0.6)
    assert fw.decide(0.6, 0.5, 0.0)[0] == "attitude"  # older than 0.5 s: level
    resting(fw, 2.1)
    assert fw.decide(2.1, 1.5, 0.0)[0] == "off"  # older than 2 s: motors off
    hl(fw, "<BBff?f", 7, 0, 0.5, 0.0, True, 1.0)
    assert fw.decide(2.2, 0.1, 0.0)[0] == "ref"
    fw.handle(wire.GENERIC, 0, struct.pack("<Bffff", 10, 0.1, 0.0, 0.0, 0.5), 0.0)
    assert fw.decide(2.3, 0.1, 0.0)[0] == "ref" and fw.plan is None  # setpoints take over
    fw.handle(wire.GENERIC, 1, struct.pack("<BI", 0, 0), 0.0)
    assert fw.decide(2.4, 0.1, 0.0)[0] == "off"  # handed over to an idle commander


def test_emergency_stop_locks_the_motors():
    fw = Firmware("cf1", 0, AIRFRAME, True)
    resting(fw, 0.0)
    hl(fw, "<BBff?f", 7, 0, 0.5, 0.0, True, 1.0)
    assert fw.decide(0.01, 0.01, 0.0)[0] == "ref"
    fw.handle(wire.LOCALIZATION, 1, b"\x03", 0.0)
    assert fw.decide(0.02, 0.01, 0.0)[0] == "off"
    hl(fw, "<BBff?f", 7, 0, 0.5, 0.0, True, 1.0)
    assert fw.decide(0.03, 0.01, 0.0)[0] == "off"
