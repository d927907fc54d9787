"""coopsim: a networked multi-robot simulator.

The names below are imported lazily, so ``import coopsim.client`` (the controller side) pulls in
neither pymunk nor pyglet: a controller can run on a robot without the simulator's dependencies.
"""

from importlib import import_module

from .model.threads import configure as _configure_threads

_configure_threads()  # before anything imports numba: idle OpenMP threads sleep (model/threads.py)

__version__ = "0.1.0"

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
