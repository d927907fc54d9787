"""A pytest plugin that refuses to start a process while a test runs, to find the tests the
``slow`` marker is missing on (docs/testing.md)::

    PYTHONPATH=.:tests pytest -m "not slow" -p processguard

While a test's setup, call or teardown runs, starting a process (``subprocess``, ``os.fork``,
``os.posix_spawn``, ``multiprocessing``: a controller, a ``coopsim`` command, Xvfb, a Dask
worker) raises :class:`ProcessRefused` naming it, so the test fails or errors there; the
suite's own set-up before the first test (the kernel cache's filling) is let through.
"""

from __future__ import annotations

import multiprocessing.process
import os
import subprocess

import pytest

_RUNNING: list[str] = []


class ProcessRefused(RuntimeError):
    """A test not marked ``slow`` tried to start a process."""


def _refuse(what: str) -> None:
    if _RUNNING:
        raise ProcessRefused(f"{_RUNNING[-1]} starts a process ({what}): mark it "
                             "@pytest.mark.slow (docs/testing.md)")


def _guard(owner, name: str, what) -> None:
    original = getattr(owner, name)

    def guarded(*args, **kwargs):
        _refuse(what(args))
        return original(*args, **kwargs)

    setattr(owner, name, guarded)


_guard(subprocess.Popen, "_execute_child", lambda a: str(a[1])[:200])
_guard(os, "fork", lambda a: "os.fork")
for _name in ("posix_spawn", "posix_spawnp"):
    _guard(os, _name, lambda a, n=_name: f"os.{n} {a[0] if a else ''}")
_guard(multiprocessing.process.BaseProcess, "start", lambda a: "multiprocessing")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _RUNNING.append(item.nodeid)
    try:
        yield
    finally:
        _RUNNING.pop()
