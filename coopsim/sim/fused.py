"""Which compiled path a step takes, and the phases of a fused one.

Where the kinds that act or sense declare kernels (:class:`~coopsim.model.capabilities.
ModuleKernel`), the plan composes them (:mod:`coopsim.sim.compose`: one compiled call each
side of the physics, the engine's step inside where it is compiled). Else, when every module
kind of a world has a fused pass that covers them all, on an engine that offers its side of one
(:meth:`~coopsim.physics.engine.Engine.fused`), a step's actuators, physics and sensors are
one compiled call over flat arrays. Either way Python stays at the edges (the commands and
drivers before it, the snapshot, rules and publishing after it).

A module kind not yet on kernels names the pass that computes it by its class attribute
``fused_pass``, or the passes, a tuple (an arm's kinds:
:class:`coopsim.plugins.modules.armmujoco.ArmPass`; ``gps`` and ``compass`` name it too);
the plan (:class:`~coopsim.sim.plan.StepPlan`) takes the first pass that the acting and sensing
kinds all name and that accepts them (:func:`choose`), and says which path the world took and
why (``StepPlan.path``: ``composed (motors, sonar, ...)``, ``fused (rotors, imu, ...)`` or
``plain (module 'x' has a rate and no fused pass)``); ``coopsim run`` prints it once. The
flying kinds (``rotors``, ``imu``, ``mocap``, ``altimeter``) are composed like any other, with
the ``aerial`` engine's step inside the acting call. A kind
with Python code only runs as a stage before (acting) or after (sensing) the call, the other
kinds staying compiled (:func:`choose`).

Same results: the pass calls the kernels the plain path calls, in its order, and draws its
noise inside its call from the step's key that the plain path's draw takes
(:meth:`~coopsim.sim.sensing.Sensors.key`; counter-based: :mod:`coopsim.model.noise_kernels`):
a step gives the same bits either way, so the two may alternate (the pass serves once its tick
is compiled, and gives way for a step with a held external robot, one big enough for the
threads, or one where a robot diverged: that step's sensors then run plain after the
containment, on the draw of the same key).
"""

from __future__ import annotations

import os

from ..model.capabilities import kernels_of
from .compose import ComposedPass
from .snapshots import StateFrame

PLAIN = "plain"
FUSED = "fused"
COMPOSED = "composed"
#: False: every plan takes the plain path (``COOPSIM_FUSED=0``; tests compare the two).
ENABLED = os.environ.get("COOPSIM_FUSED", "1").strip() != "0"


def choose(acting: tuple, sensing: tuple, world) -> tuple:
    """(the pass or None, the path as one line, the acting stages, the sensing stages) for a
    plan's ``acting`` entries (label, module, rows, values, every) and ``sensing`` entries
    (coopsim.sim.sensing.Sensors.plan) on ``world``.

    A world whose acting kinds all name a hand-written fused pass (``fused_pass``: the
    arms') takes it where it accepts the world; else the kinds with kernels
    are composed (:func:`_composed`). A kind neither computes (Python code only) is a *stage*:
    an acting one runs before the call, a sensing one after it (its ``measure``, on the step's
    draw), and the other kinds stay compiled; only a kind with a ``rate`` makes the step plain
    (the calls draw on the plan's fixed layout)."""
    if not ENABLED:
        return None, f"{PLAIN} (COOPSIM_FUSED=0)", (), ()
    if acting and all(getattr(e[1], "fused_pass", None) is not None for e in acting):
        passed = _passed(acting, sensing, world)  # a drive that names a pass keeps it
        if passed[0] is not None:
            return passed
    found = _composed(acting, sensing, world)
    return found if found is not None else _passed(acting, sensing, world)


def _passed(acting: tuple, sensing: tuple, world) -> tuple:
    """:func:`choose`'s answer by the hand-written fused passes the kinds name (``fused_pass``):
    the first that takes the world, the kinds naming none as stages; else the plain path and
    why."""
    before = tuple(e for e in acting if getattr(e[1], "fused_pass", None) is None)
    after = tuple(e for e in sensing if getattr(e[1], "fused_pass", None) is None)
    timed = next((e[0] for e in after if e[4]), None)
    if timed is not None:
        return None, f"{PLAIN} (module '{timed}' has a rate and no fused pass)", (), ()
    acting = tuple(e for e in acting if getattr(e[1], "fused_pass", None) is not None)
    sensing = tuple(e for e in sensing if getattr(e[1], "fused_pass", None) is not None)
    common = None
    for entry in (*acting, *sensing):
        found = entry[1].fused_pass
        names = found if isinstance(found, tuple) else (found,)
        common = names if common is None else tuple(p for p in common if p in names)
    if common is None:
        why = "no module has a fused pass" if before or after else "no module acts or senses"
        return None, f"{PLAIN} ({why})", (), ()
    if not common:
        return None, f"{PLAIN} (the modules' kernels belong to different passes)", (), ()
    engine = world.engine
    for each in common:  # the first pass that takes the world
        found, why = each.build(acting, sensing, engine, _casts3d(engine))
        if found is not None:
            break
    if found is None:
        return None, f"{PLAIN} ({why})", (), ()
    labels = dict.fromkeys(e[0] for e in (*acting, *sensing))
    staged = dict.fromkeys(e[0] for e in (*before, *after))
    path = f"{FUSED} ({', '.join(labels)})"
    if staged:
        path += f" + stages ({', '.join(staged)})"
    return found, path, before, after


def _composed(acting: tuple, sensing: tuple, world) -> tuple | None:
    """:func:`choose`'s answer when the kinds with kernels compose
    (:class:`~coopsim.sim.compose.ComposedPass`): every kind that acts or senses by a kernel
    goes into the composed calls and the kinds with Python code only are stages; the plain
    path when a kind has a rate; None when some kind with no kernel is one a fused pass
    computes (that pass serves the world) or no kind has a kernel."""
    mine_a = tuple(e for e in acting if kernels_of(e[1])[1] is not None)
    mine_s = tuple(e for e in sensing if kernels_of(e[1])[0] is not None)
    if not mine_a and not mine_s:
        return None
    taken = {id(e) for e in (*mine_a, *mine_s)}
    before = tuple(e for e in acting if id(e) not in taken)
    after = tuple(e for e in sensing if id(e) not in taken)
    if any(getattr(e[1], "fused_pass", None) is not None for e in (*before, *after)):
        return None
    timed = next((e[0] for e in sensing if e[4]), None)
    if timed is not None:  # who is due changes step by step: the call draws on a fixed layout
        return None, f"{PLAIN} (module '{timed}' has a rate)", (), ()
    found, _ = ComposedPass.build(mine_a, mine_s, world.engine, _casts3d(world.engine))
    if found is None:
        return None
    path = f"{COMPOSED} ({', '.join(dict.fromkeys(e[0] for e in (*mine_a, *mine_s)))})"
    staged = dict.fromkeys(e[0] for e in (*before, *after))
    if staged:
        path += f" + stages ({', '.join(staged)})"
    return found, path, before, after


def _casts3d(engine) -> bool:
    """Whether range sensors cast in 3D on ``engine`` (coopsim.sim.access.Access.casts3d)."""
    return hasattr(engine, "cast3d") and bool(engine.ranges3d)


def physics(sim, found) -> bool:
    """The physics phase through pass ``found`` (its acting kinds and the engine's step),
    after the step's count and time moved on; True: the step stays fused (its sensors read
    after the health check, :func:`sense`)."""
    return found.physics(sim)


def sense(sim, found, state, state3d, after: tuple = ()) -> tuple:
    """The sensing phase of a fused step: the pass's readings, the kinds read off the
    planar ``state`` after it and the sensing stages (``after``: the plan's entries of the
    kinds no pass computes, measured on a full frame with their blocks of the step's draw),
    taken as this step's (Sensors.adopt): (readings, the frame the snapshot reads
    (``pose``, ``velocity``, ``state3d``))."""
    readings = found.measure(sim, state)
    frame = StateFrame(state, state3d)
    prev = sim.sensors.prev if found.after else None
    for label, module, rows, values, *_ in found.after:
        readings[label] = module.clip(module.sense(frame, rows, values, prev.get(label)),
                                      values)
    if after:
        full = sim._frame(state, sim.actuated, geometry=True)
        sim.sensors.stages(sim.params, sim.world, full, readings, after, sim.rng)
    return sim.sensors.adopt(sim.world, readings, sim.extra), frame
