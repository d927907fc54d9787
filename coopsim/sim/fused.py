"""Which path a step takes, and the phases of a composed one.

Where the kinds that act or sense declare kernels (:class:`~coopsim.model.capabilities.
ModuleKernel`), the plan composes them (:mod:`coopsim.sim.compose`: one compiled call each
side of the physics, the engine's step inside where it is compiled, around pymunk's or
MuJoCo's own step elsewhere); Python stays at the edges (the commands and drivers before it,
the snapshot, rules and publishing after it). A kind with Python code only runs as a stage
before (acting: the arm's ``joints`` plans) or after (sensing) the calls, the other kinds
staying compiled (:func:`choose`); a kind with a ``rate`` measures the robots due each step
on either path. The plan (:class:`~coopsim.sim.plan.StepPlan`) says which path the world took
and why (``StepPlan.path``: ``composed (motors, sonar, ...) + stages (joints)`` or ``plain
(no module has a kernel)``); ``coopsim run`` prints it once.

Same results: the calls run the kernels the plain path runs, in its order, and draw their
noise inside the call from the step's key that the plain path's draw takes
(:meth:`~coopsim.sim.sensing.Sensors.key`; counter-based: :mod:`coopsim.model.noise_kernels`):
a step gives the same bits either way, so the two may alternate (the composed step serves
once its calls are compiled, and gives way for a step with a held external robot or one
where a robot diverged: that step's sensors then run plain
after the containment, on the draw of the same key).
"""

from __future__ import annotations

from ..model.capabilities import kernels_of
from .compose import ComposedPass
from .snapshots import StateFrame

PLAIN = "plain"
COMPOSED = "composed"
#: False: every plan takes the plain path. Not a setting: the tests that check the two paths
#: give the same bits set it (the plain path is the one a world whose kernels do not compose
#: takes, and the one a composed step gives way to).
ENABLED = True


def choose(acting: tuple, sensing: tuple, world) -> tuple:
    """(the composed step or None, the path as one line, the acting stages, the sensing
    stages) for a plan's ``acting`` entries (label, module, rows, values, every) and
    ``sensing`` entries (coopsim.sim.sensing.Sensors.plan) on ``world``.

    Every kind that acts or senses by a kernel goes into the composed calls
    (:class:`~coopsim.sim.compose.ComposedPass`); a kind with Python code only is a *stage*:
    an acting one runs before the call, a sensing one after it (its ``measure``, on the
    step's draw), and the other kinds stay compiled. The plain path when no kind has a
    kernel or when the kernels do not compose (the reason, one sentence); a kind with a
    ``rate`` is composed too, its robots due each step taken
    (:meth:`~coopsim.sim.sensing.Sensors.key`)."""
    if not ENABLED:
        return None, f"{PLAIN} (composing off)", (), ()
    mine_a = tuple(e for e in acting if kernels_of(e[1])[1] is not None)
    mine_s = tuple(e for e in sensing if kernels_of(e[1])[0] is not None)
    if not mine_a and not mine_s:
        why = "no module has a kernel" if acting or sensing else "no module acts or senses"
        return None, f"{PLAIN} ({why})", (), ()
    found, why = ComposedPass.build(mine_a, mine_s, world.engine, _casts3d(world.engine))
    if found is None:
        return None, f"{PLAIN} ({why})", (), ()
    taken = {id(e) for e in (*mine_a, *mine_s)}
    before = tuple(e for e in acting if id(e) not in taken)
    after = tuple(e for e in sensing if id(e) not in taken)
    path = f"{COMPOSED} ({', '.join(dict.fromkeys(e[0] for e in (*mine_a, *mine_s)))})"
    staged = dict.fromkeys(e[0] for e in (*before, *after))
    if staged:
        path += f" + stages ({', '.join(staged)})"
    return found, path, before, after


def _casts3d(engine) -> bool:
    """Whether range sensors cast in 3D on ``engine`` (coopsim.sim.access.Access.casts3d)."""
    return hasattr(engine, "cast3d") and bool(engine.ranges3d)


def physics(sim, found) -> bool:
    """The physics phase through composed step ``found`` (its acting kinds and the engine's
    step), after the step's count and time moved on; True: the step stays composed (its
    sensors read after the health check, :func:`sense`)."""
    return found.physics(sim)


def sense(sim, found, state, state3d, after: tuple = ()) -> tuple:
    """The sensing phase of a composed step: the call's readings and the sensing stages
    (``after``: the plan's entries of the kinds with no kernel, measured on a full frame with
    their blocks of the step's draw), taken as this step's (Sensors.adopt): (readings, the
    frame the snapshot reads (``pose``, ``velocity``, ``state3d``))."""
    readings = found.measure(sim, state)
    frame = StateFrame(state, state3d)
    if after:
        full = sim._frame(state, sim.actuated, geometry=True)
        sim.sensors.stages(sim.params, sim.world, full, readings, after, sim.rng)
    return sim.sensors.adopt(sim.world, readings, sim.extra), frame
