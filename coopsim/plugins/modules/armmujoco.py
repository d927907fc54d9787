"""The fused step of a world of arms on an engine whose step stays its own (``mujoco``:
MuJoCo's ``mj_step`` is not a kernel a compiled tick can call): the pass runs around it.

The arm kinds (``joints``, ``tool``, ``force``, ``gripper``, with ``pose``, ``gps`` and ``compass``)
name this pass (``fused_pass``); it takes a world where every robot carries ``joints`` and
every kind is noiseless, lossless and without a rate, on an engine that says so
(``arms_around``), and makes the step in three lean parts instead of the sensing phase's frame,
plan walk and one call per kind: the joints' plan before (``Joints.actuate`` on a lean frame:
the plain path's call), the engine's step, then the readings from one read of the arms'
angles, rates and torques (the plain path's own functions: ``Joints.reading``,
``Tool.reading``, ``Force.reading``, ``Gripper.sense``) and ``pose``, ``gps``, ``compass`` off the state
(:func:`coopsim.sim.fused.sense`). The same calls on the same arrays: a step gives the plain
path's bits (tests/sim/test_armmujoco.py).

Frames and units: world frame (z up), metres, seconds, radians; STATE3D rows (N, 13).
"""

from __future__ import annotations

from types import SimpleNamespace

from .common import sensing_refusal

ACTING = "joints"
AFTER = ("pose", "gps", "compass")  # read off the state after the pass (coopsim.sim.fused.sense)
LABELS = (ACTING, "tool", "force", "gripper", *AFTER)


class ArmPass:
    """The step of a world of arms around the engine's own (:mod:`coopsim.sim.fused` calls
    :meth:`act` in the actuators phase, :meth:`physics`, then :meth:`measure` on the state
    the health check passed).

    Args:
        acting: The acting entry (label, module, rows, values, every) of ``joints``.
        sensing: Label -> the sensing plan's entry of each kind (coopsim.sim.sensing).
    """

    def __init__(self, acting: tuple, sensing: dict) -> None:
        self.acting = acting
        self.sensing = {k: e for k, e in sensing.items() if k not in AFTER}
        self.after = tuple(sensing[k] for k in AFTER if k in sensing)
        self._objects: tuple = (None, ())  # (layout version, the objects' specs)

    @classmethod
    def build(cls, acting: tuple, sensing: tuple, engine, casts3d: bool):
        """The pass for a plan's ``acting`` and ``sensing`` entries on ``engine``, or None
        and why not (one sentence)."""
        for entry in acting:
            if entry[0] != ACTING:
                return None, f"module '{entry[0]}' has no kernel"
        for entry in sensing:  # noise would be drawn outside the pass: the plain path
            why = sensing_refusal(entry, LABELS, not entry[5])
            if why:
                return None, why
        by = {entry[0]: entry for entry in sensing}
        if len(acting) != 1 or ACTING not in by:
            return None, "module 'joints' is missing (the pass steps arms)"
        if not acting[0][4]:
            return None, "module 'joints' is on some robots only"
        if not getattr(engine, "arms_around", False):
            return None, f"engine '{engine.label}' has no fused step"
        return cls(acting[0], by), ""

    def ready(self) -> bool:
        """Whether this step may take the pass (always: it calls no kernel of its own)."""
        return True

    def act(self, sim) -> None:
        """The joints' plan and set points (``Joints.actuate``, the plain path's call) on a
        frame of what it reads: the board, names, time, step and the engine's access."""
        label, module, rows, values, _ = self.acting
        table = sim.commands[label].view()
        table.flags.writeable = False  # as the plain phase hands it over (plan.read_only)
        frame = SimpleNamespace(extra=sim.extra, names=sim.robots.names, time=sim.time,
                                dt=sim.dt, physics=sim.access, memo={})
        sim.actuated[label] = module.actuate(frame, rows, values, table)

    def physics(self, sim) -> bool:
        """The engine's step. True: the step stays fused."""
        sim.world.engine.step(sim.dt)
        return True

    def measure(self, sim, state) -> dict:
        """The pass's kinds' readings of this step (label -> (n, width)): one read of the
        arms' state for ``joints`` and ``tool`` (every kind is on every robot: the same rows;
        ``state``, the planar one, is not read)."""
        access, by = sim.access, self.sensing
        label, module, rows, values, *_ = by[ACTING]
        arm, arms = access.arm_state(rows), access.arms(rows)
        out = {label: module.clip(module.reading(arm, arms), values)}
        entry = by.get("tool")
        if entry is not None:
            module, rows, values = entry[1:4]
            out["tool"] = module.clip(module.reading(arms, sim.world.engine.state3d(), rows,
                                                     arm[:, :, 0]), values)
        entry = by.get("force")
        if entry is not None:
            module, rows, values = entry[1:4]
            out["force"] = module.clip(module.reading(access.wrist_wrench(rows)), values)
        entry = by.get("gripper")
        if entry is not None:
            module, rows, values = entry[1:4]
            frame = SimpleNamespace(extra=sim.extra, names=sim.robots.names,
                                    objects=self._objects_of(sim.world))
            out["gripper"] = module.clip(module.sense(frame, rows, values, None), values)
        return out

    def _objects_of(self, world) -> tuple:
        """The world's objects' specs (the sensing frame's ``objects``), one tuple a layout."""
        kept = self._objects
        if kept[0] != world.layout_version:
            kept = self._objects = (world.layout_version,
                                    tuple(spec for spec, _ in world.objects.values()))
        return kept[1]

