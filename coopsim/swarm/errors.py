"""The swarm library's one exception class."""

from __future__ import annotations

from ..model.errors import CoopsimError


class SwarmError(CoopsimError):
    """A squad or robot command cannot be carried out: an empty formation, a goal no path reaches
    (the message then starts with ``unreachable:``), a malformed obstacle or command."""
