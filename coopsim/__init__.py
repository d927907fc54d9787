"""coopsim: a networked multi-robot simulator.

The names below are imported lazily, so ``import coopsim.client`` (the controller side) pulls in
neither pymunk nor pyglet: a controller can run on a robot without the simulator's dependencies.
"""

from importlib import import_module

__version__ = "0.1.0"

_EXPORTS = {
    "CoopsimError": "errors", "FileFormatError": "errors", "ParameterError": "errors",
    "ProtocolError": "errors", "SimulationError": "errors", "RecordingError": "errors",
    "Message": "protocol", "PROTOCOL_VERSION": "protocol",
    "load": "files", "load_world": "files", "load_scenario": "files", "check": "files",
    "WorldSpec": "specs", "ScenarioSpec": "specs", "RobotSpec": "specs", "ObjectSpec": "specs",
    "TargetSpec": "specs", "Settings": "specs",
    "ParamSpec": "params", "ROBOT_TYPES": "registry", "MODULES": "registry",
    "World": "world", "Simulation": "simulation", "Snapshot": "snapshot", "Stepper": "stepper",
    "WallClock": "clock", "ManualClock": "clock", "Network": "network", "Run": "runner",
    "RunOptions": "runner", "Client": "client", "Recorder": "recorder", "Recording": "recording",
    "Replay": "replay", "Gateway": "gateway",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'coopsim' has no attribute {name!r}")
