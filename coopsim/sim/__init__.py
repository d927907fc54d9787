"""The sim layer: a running world and its step (imports :mod:`coopsim.model` and
:mod:`coopsim.raycast`; engines and modules only through the registries).

``simulation.py`` builds the world (``world.py``: names, specs, handles over an engine) and
runs the phases of a step: commands, actuators, physics, sensors, rules. ``plan.py`` works out
per layout or parameter change which kinds act and sense and which path a step takes;
``fused.py`` chooses between the composed step (``compose.py``: one compiled call for the
actuators and one for the sensors per layout) and the plain one, and says why;
``sensing.py``, ``noiseplan.py``, ``rates.py`` and ``states.py`` are the sensing phase, its one
noise draw, sensor rates and per-kind state; ``snapshots.py`` freezes each step's result.

``stepper.py`` owns the world on one thread: the loop, realtime pacing (``pacing.py``,
``clock.py``) or lockstep (``slots.py``: the latest command per robot and module, attachment,
ownership, leases), the calls other threads queue (``ownership.py``, which also writes down the
lock order), what the thread does while it waits (``waiter.py``), the lean loop of unpaced
lockstep steps (``freerun.py``). In-process drivers and rules are hosted by ``drivers.py`` and
``rules.py``; ``external.py`` holds external robots' poses; ``health.py`` contains a diverged
robot; ``describe.py`` writes the layout document.
"""
