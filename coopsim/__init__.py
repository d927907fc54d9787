"""coopsim: a networked multi-robot simulator.

The names below are imported lazily, so ``import coopsim.client`` (the controller side) pulls in
neither pymunk nor pyglet: a controller can run on a robot without the simulator's dependencies.
"""

import sys as _sys

_ARGV = getattr(_sys, "orig_argv", [])
if getattr(_sys, "argv", [])[:1] == ["-m"] and "-m" in _ARGV \
        and _ARGV[_ARGV.index("-m") + 1:][:1] == ["coopsim"]:
    # `python -m coopsim` is importing this package to run the command: a Ctrl-C from here on
    # is held until the command's handler takes over a few imports later (app/interrupt.py),
    # instead of a KeyboardInterrupt traceback from an import
    import signal as _signal

    _EARLY_SIGNALS: list = []
    for _sig in (_signal.SIGINT, _signal.SIGTERM):
        if _signal.getsignal(_sig) is not _signal.SIG_IGN:  # ignored (`cmd &`) stays ignored
            _signal.signal(_sig, lambda signum, frame: _EARLY_SIGNALS.append(signum))

from importlib import import_module  # noqa: E402 - after the signals, which cannot wait

from .model.threads import configure as _configure_threads  # noqa: E402

_configure_threads()  # before anything imports numba: idle OpenMP threads sleep (model/threads.py)

__version__ = "0.2.0"

_EXPORTS = {
    "CoopsimError": "model.errors", "FileFormatError": "model.errors", "ParameterError": "model.errors",
    "ProtocolError": "model.errors", "SimulationError": "model.errors", "RecordingError": "model.errors",
    "Message": "net.protocol", "PROTOCOL_VERSION": "net.protocol",
    "load": "formats.files", "load_world": "formats.files", "load_scenario": "formats.files", "check": "formats.check",
    "WorldSpec": "model.specs", "ScenarioSpec": "model.specs", "RobotSpec": "model.specs", "ObjectSpec": "model.specs",
    "TargetSpec": "model.specs", "Settings": "model.specs",
    "ParamSpec": "model.params", "ROBOT_TYPES": "model.plugins", "MODULES": "model.plugins",
    "DRIVERS": "model.plugins", "ENGINES": "model.plugins", "RULES": "model.plugins",
    "Module": "model.module", "RobotType": "model.robot_type", "Driver": "model.driver",
    "Rule": "model.driver", "Engine": "physics.engine", "run_controller": "client",
    "World": "sim.world", "Simulation": "sim.simulation", "Snapshot": "model.snapshot", "Stepper": "sim.stepper",
    "WallClock": "sim.clock", "ManualClock": "sim.clock", "Network": "net.network", "Run": "app.run",
    "RunOptions": "app.run", "Client": "client", "Recorder": "recording.writer", "Recording": "recording.reader",
    "Replay": "replay.servers", "Gateway": "net.gateway",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'coopsim' has no attribute {name!r}")
