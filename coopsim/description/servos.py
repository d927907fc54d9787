"""The held joints of a robot from a description file: every moving joint that no other
module drives (not a wheel, not the arm's or the fingers', not a rotor's) gets a position
servo, PD on the joint's position within the file's effort (docs/robots.md "Legged robots,
humanoids and the held joints").

Why every such joint is held: a joint nobody drives swings free under gravity, and what swings
pushes the rest of the robot (a TIAGo's arm, torso and head flopping turned its base 2-6
degrees at rest and put its odometry 0.3 m off after 2 m). A real robot's joints are held by
their controllers; here by a servo each, which the ``servos`` module moves over the protocol
(legged robots standing, humanoids and hands tracking joint targets).

What a servo is (:func:`held`): the joint's start and first target, its ``home``, is the
section's ``stance`` value for it, else 0 clipped into the joint's limits; its stiffness ``kp``
is the file's effort over :data:`SAG` (N m/rad: full effort at 0.1 rad of error; N/m at 1 cm
for a prismatic joint), else :data:`DEFAULT_KP`; its torque is capped at the effort; the
engine damps it critically on the joint's own inertia (``2 sqrt(kp I)``).

Units: rad (m for a prismatic joint), N m (N), s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .mobile import ROTORS, WHEELS, DescriptionKeyError, MobileKeyError

#: Error at which a servo pulls with the joint's full effort: rad (revolute), m (prismatic).
SAG = {"revolute": 0.1, "continuous": 0.1, "prismatic": 0.01}
#: Stiffness of a joint whose file gives no effort: N m/rad (N/m for a prismatic one).
DEFAULT_KP = 100.0
#: Most joints one ``servos`` command sets (the posture reading's columns).
MAX_SERVOS = 32
#: The ``described_by`` word of the module of the held joints (``description.mobile.kit``).
HELD = "held"


@dataclass(frozen=True)
class ServoJoint:
    """One held joint.

    Attributes:
        name: The joint's name in the description.
        lower, upper: Its limits (rad or m; -inf, inf: none).
        effort: Its torque (force) cap, N m or N (inf: uncapped).
        kp: Stiffness, N m/rad or N/m.
        home: Start position and first target, rad or m.
    """

    name: str
    lower: float
    upper: float
    effort: float
    kp: float
    home: float


def driven_elsewhere(description, spec, arm) -> set[str]:
    """Names of the moving joints another module drives: the wheels, the arm's joints and
    fingers, and the joints whose child is a rotor link."""
    out = set(spec.get(WHEELS, ()) or ())
    if arm is not None:
        out |= {link.key for link in arm.links} | set(arm.fingers)
    rotors = set(spec.get(ROTORS, ()) or ())
    out |= {j.name for j in description.joints if j.child in rotors}
    return out


def held(description, spec, arm=None) -> tuple[ServoJoint, ...]:
    """The servos of every moving joint no other module drives, in the file's order.

    Raises:
        MobileKeyError: (key ``stance``) a stance names a joint that is not held, or puts it
            past its limits.
    """
    busy = driven_elsewhere(description, spec, arm)
    stance = stance_of(spec.get("stance", ()) or ())
    joints = [j for j in description.moving if j.name not in busy]
    names = {j.name for j in joints}
    for name in stance:
        if name not in names:
            raise MobileKeyError("stance", f"stance: {name!r} is not a held joint of "
                                 f"{description.name} (held: {', '.join(sorted(names)) or 'none'}"
                                 "; wheels, arm, finger and rotor joints are driven by their "
                                 "own modules)")
    out = []
    for j in joints:
        home = stance.get(j.name, min(max(0.0, j.lower), j.upper))
        if not j.lower - 1e-9 <= home <= j.upper + 1e-9:
            raise MobileKeyError("stance", f"stance: {j.name} {home:g} is beyond its limits "
                                 f"[{j.lower:g}, {j.upper:g}] (file line {j.line})")
        finite = math.isfinite(j.effort) and j.effort > 0
        kp = j.effort / SAG[j.kind] if finite else DEFAULT_KP
        out.append(ServoJoint(j.name, j.lower, j.upper, j.effort if finite else math.inf,
                              float(kp), float(home)))
    return tuple(out)


def stance_of(tokens) -> dict[str, float]:
    """``stance JOINT VALUE ...`` as {joint: value} (rad or m).

    Raises:
        MobileKeyError: not pairs of a name and a finite number.
    """
    tokens = list(tokens)
    if len(tokens) % 2:
        raise MobileKeyError("stance", "stance: give pairs of a joint and its position "
                             f"(rad or m), got {len(tokens)} words")
    out = {}
    for name, value in zip(tokens[::2], tokens[1::2]):
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise MobileKeyError("stance", f"stance: {name}'s position {value!r} is not a "
                                 "finite number")
        out[name] = number
    return out


def check_targets(servos: tuple[ServoJoint, ...], targets) -> str:
    """Why ``targets`` (one per servo, in order) cannot be set ("" when they can)."""
    if len(targets) != len(servos):
        return (f"set_targets takes one target per held joint ({len(servos)}: "
                f"{' '.join(s.name for s in servos[:MAX_SERVOS])}), got {len(targets)}")
    for s, t in zip(servos, targets):
        if not math.isfinite(t) or not s.lower - 1e-9 <= t <= s.upper + 1e-9:
            return f"{s.name}'s target {t:g} is beyond its limits [{s.lower:g}, {s.upper:g}]"
    return ""


__all__ = ["ServoJoint", "held", "stance_of", "check_targets", "DescriptionKeyError",
           "MAX_SERVOS", "HELD"]
