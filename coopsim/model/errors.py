"""The exception hierarchy: one root class, one subclass per kind of failure.

Every error coopsim raises on purpose derives from :class:`CoopsimError`, so a caller (the CLI, a
server loop) can catch exactly the failures that are the user's input and let real bugs surface.
"""

from __future__ import annotations


class CoopsimError(Exception):
    """Root of every error coopsim raises on purpose."""


class FileFormatError(CoopsimError):
    """A ``.world`` or ``.scenario`` file is malformed.

    Attributes:
        path: The file the error is in (as given by the caller).
        line: 1-based line number, or 0 when the error concerns the whole file.
        reason: What is wrong, one sentence, no location.
    """

    def __init__(self, path: str, line: int, reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{self.path}:{line}: {reason}")


class ParameterError(CoopsimError):
    """A module parameter was given an unknown name, a wrong type or a value outside [min, max]."""


class RegistryError(CoopsimError):
    """A label was looked up in a registry that does not hold it, or registered twice."""


class SimulationError(CoopsimError):
    """A request to the simulation cannot be carried out (unknown robot, bad state change...)."""


class UnknownNameError(SimulationError):
    """A request names a robot, object, target, module or port that does not exist."""


class UnknownParameterError(ParameterError, UnknownNameError):
    """A module parameter name the module does not declare (a name error, not a bad value)."""


class NotAllowedError(SimulationError):
    """A request is valid but not allowed in the current mode or state."""


class OwnedError(NotAllowedError):
    """A motion command (or a claim) for a robot another connection owns (wire error 11).

    Attributes:
        owner: How the owner is named (its Curve key's name, or its connection's address).
    """

    def __init__(self, text: str, owner: str = "") -> None:
        self.owner = owner
        super().__init__(text)


class ProtocolError(CoopsimError):
    """A wire message is malformed or a server answered with an error.

    Attributes:
        code: The protocol error code (see :mod:`coopsim.net.protocol`).
        text: The human sentence that came with it.
    """

    def __init__(self, code: int, text: str) -> None:
        self.code = code
        self.text = text
        super().__init__(f"error {code}: {text}")


class RecordingError(CoopsimError):
    """A recording file is missing, not MCAP, not a coopsim recording, or unreadable."""


class ScenarioError(SimulationError):
    """A part of a scenario (a timed event, a metric) that cannot work with the rest of it.

    Attributes:
        line: Line of the scenario file it is on (0 when made in code).
        reason: What is wrong, one sentence.
    """

    def __init__(self, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(reason)


class RuleParameterError(SimulationError):
    """A rule's parameter value that does not fit the scenario (a robot it names is missing, a
    target colour no target has).

    Attributes:
        params: The names of the parameters at fault, so that a file check reports the line of
            the ``param`` line that set one (the section's line when they kept their defaults).
    """

    def __init__(self, params, reason: str) -> None:
        self.params = tuple(params)
        super().__init__(reason)
