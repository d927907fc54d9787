"""Several robots driven from one process: each call sends one request to every robot before
awaiting any reply (:meth:`Client.request_many`), so a team controller keeps all its robots in
lockstep and pays one round trip per call, not one per robot."""

from __future__ import annotations

from typing import Sequence

from ..model.commands import NOT_ALLOWED
from ..model.driver import Reading, StepInfo
from .connection import Client, RemoteError


class Fleet:
    """Robots of one run, by name, commanded together.

    Args:
        client: The connection. names: The robots' network names.
    """

    def __init__(self, client: Client, names: Sequence[str]) -> None:
        self.client = client
        self.names = list(names)
        self.robots = [client.robot(n) for n in self.names]

    def _calls(self, module: str, command: str, texts, datas):
        out = []
        for bot, text, data in zip(self.robots, texts, datas):
            cmd = getattr(bot, module).commands()[command]
            out.append((bot.endpoint, cmd.id, text, (), tuple(float(v) for v in data)))
        return out

    def call(self, module: str, command: str, texts=None, datas=None) -> list:
        """One command of ``module`` on every robot (``texts``, ``datas``: one per robot, or
        None); the replies (Messages, errors included), robot order."""
        n = len(self.robots)
        return self.client.request_many(self._calls(module, command, texts or [""] * n,
                                                    datas or [()] * n))

    def read(self, module: str, command: str = "read", texts=None) -> list[Reading]:
        """A read of every robot, as Readings.

        Raises:
            RemoteError: a robot answered with an error.
        """
        return [Reading(r.data, r.text, r.params[0] if r.params else 0)
                for r in _checked(self.call(module, command, texts))]

    def move(self, module: str, command: str, datas) -> list[StepInfo]:
        """A motion command to every robot (one data row each); in lockstep the replies come
        after the step that used them.

        Raises:
            RemoteError: a robot answered with an error (code NOT_ALLOWED with "finished" in
                the text when the run has finished).
        """
        replies = _checked(self.call(module, command, datas=datas))
        return [StepInfo(r.params[0], r.data[0], r.text) for r in replies]


def _checked(replies):
    for r in replies:
        if r.error:
            raise RemoteError(r.error, r.text)
    return replies


def finished(exc: RemoteError) -> bool:
    """True when ``exc`` says the run has finished (a rule ended it, or its duration)."""
    return exc.code == NOT_ALLOWED and "finished" in exc.text
