"""Teleoperation's inputs as numbers: teleop_twist_keyboard's key layout, a gamepad's sticks,
and the *intent* both become (pure data, no I/O; the viewer and ``coopsim teleop`` share it).

An :class:`Intent` is what the person asks of the robot in its own frame, each component a
fraction in [-1, 1] of the top speed the session drives at: ``forward`` (body x), ``left``
(body y), ``up`` (world z: a quadrotor's climb, an arm tool's rise) and ``turn`` (yaw rate,
counter-clockwise seen from above is positive; REP 103). :class:`Speeds` holds those top
speeds (m/s, rad/s), changed by the q/z, w/x and e/c keys as in ROS's teleop_twist_keyboard.

**Dead-man.** Nothing moves unless a key or the gamepad's dead-man button is held: the viewer
sees key releases (held keys are summed, so ``i`` + ``j`` is ``u``); a terminal sees only
presses (and the keyboard's auto-repeat while a key is held), so :class:`TerminalKeys` drops
the intent when no key came for :data:`TERMINAL_HOLD` s.
"""

from __future__ import annotations

from dataclasses import dataclass

#: teleop_twist_keyboard's moveBindings: key -> (forward, left, up, turn) fractions.
#: Lower case turns (a differential drive's layout); upper case (Shift) moves sideways
#: (holonomic); t/b climb and sink.
MOVES: dict[str, tuple[int, int, int, int]] = {
    "i": (1, 0, 0, 0), "o": (1, 0, 0, -1), "j": (0, 0, 0, 1), "l": (0, 0, 0, -1),
    "u": (1, 0, 0, 1), ",": (-1, 0, 0, 0), ".": (-1, 0, 0, 1), "m": (-1, 0, 0, -1),
    "O": (1, -1, 0, 0), "I": (1, 0, 0, 0), "J": (0, 1, 0, 0), "L": (0, -1, 0, 0),
    "U": (1, 1, 0, 0), "<": (-1, 0, 0, 0), ">": (-1, -1, 0, 0), "M": (-1, 1, 0, 0),
    "t": (0, 0, 1, 0), "b": (0, 0, -1, 0),
}
#: teleop_twist_keyboard's speedBindings: key -> (linear factor, angular factor).
SPEED_KEYS: dict[str, tuple[float, float]] = {
    "q": (1.1, 1.1), "z": (0.9, 0.9), "w": (1.1, 1.0), "x": (0.9, 1.0), "e": (1.0, 1.1),
    "c": (1.0, 0.9),
}
STOP_KEYS = frozenset("kK ")  # stop at once (any other key stops too in a terminal)
QUIT_KEYS = frozenset("\x03\x04")  # Ctrl+C, Ctrl+D: release the robot and leave
TERMINAL_HOLD = 0.6  # s without a key before a terminal's intent drops (auto-repeat: ~0.5 s)
DEAD_ZONE = 0.15  # stick deflection below which an axis reads 0
SPEED_LIMITS = (0.01, 20.0)  # m/s and rad/s the keys may scale the top speeds within


@dataclass(frozen=True)
class Intent:
    """Fractions in [-1, 1] of the top speeds: body forward, left, world up, yaw rate."""

    forward: float = 0.0
    left: float = 0.0
    up: float = 0.0
    turn: float = 0.0

    @property
    def still(self) -> bool:
        """True when nothing is asked (the dead-man's state)."""
        return not (self.forward or self.left or self.up or self.turn)


STILL = Intent()


@dataclass(frozen=True)
class Speeds:
    """The top speeds an intent is a fraction of.

    Attributes:
        linear: m/s (forward, left, up; an arm's tool moves at it too).
        angular: rad/s.
    """

    linear: float = 0.5
    angular: float = 1.0

    def scaled(self, key: str) -> "Speeds":
        """The speeds after a q/z/w/x/e/c key (others: unchanged), within SPEED_LIMITS."""
        lin, ang = SPEED_KEYS.get(key, (1.0, 1.0))
        low, high = SPEED_LIMITS
        return Speeds(min(high, max(low, self.linear * lin)),
                      min(high, max(low, self.angular * ang)))


def _clip(v: float) -> float:
    return max(-1.0, min(1.0, float(v)))


def held_intent(keys) -> Intent:
    """The intent of the keys held at once (the viewer): their moves summed, each component
    clipped to [-1, 1]; a held stop key (k) wins over every move."""
    keys = set(keys)
    if keys & STOP_KEYS:
        return STILL
    total = [0, 0, 0, 0]
    for k in keys:
        for i, v in enumerate(MOVES.get(k, (0, 0, 0, 0))):
            total[i] += v
    return Intent(*(_clip(v) for v in total))


def stick(value: float) -> float:
    """A stick axis with its dead zone taken out, rescaled so full deflection is still 1."""
    v = _clip(value)
    if abs(v) < DEAD_ZONE:
        return 0.0
    return (abs(v) - DEAD_ZONE) / (1.0 - DEAD_ZONE) * (1.0 if v > 0 else -1.0)


def pad_intent(leftx: float, lefty: float, rightx: float, righty: float,
               deadman: bool) -> Intent:
    """A gamepad's intent (pyglet's axes: x right, y up, each in [-1, 1]).

    Left stick: up/down drives forward/back, left/right turns. Right stick: left/right moves
    sideways (holonomic robots, quadrotors, an arm's tool), up/down climbs or sinks. Nothing
    unless ``deadman`` (the left shoulder button) is held.
    """
    if not deadman:
        return STILL
    return Intent(forward=stick(lefty), left=-stick(rightx), up=stick(righty),
                  turn=-stick(leftx))


class TerminalKeys:
    """A terminal's keys as teleop_twist_keyboard reads them, with a dead-man timeout.

    Args:
        speeds: The starting top speeds.
        hold: s an intent lasts after its key (TERMINAL_HOLD).
    """

    def __init__(self, speeds: Speeds = Speeds(), hold: float = TERMINAL_HOLD) -> None:
        self.speeds, self.hold = speeds, hold
        self._intent, self._at = STILL, 0.0

    def press(self, key: str, now: float) -> bool:
        """Take one key pressed at ``now`` (s, monotonic); return False for a quit key."""
        if key in QUIT_KEYS:
            self._intent = STILL
            return False
        if key in SPEED_KEYS:
            self.speeds = self.speeds.scaled(key)
            return True  # teleop_twist_keyboard keeps moving as it was
        move = MOVES.get(key)
        self._intent = Intent(*move) if move else STILL
        self._at = now
        return True

    def intent(self, now: float) -> Intent:
        """What to drive at ``now``: the last move while its key is recent, else still."""
        if now - self._at > self.hold:
            self._intent = STILL
        return self._intent
