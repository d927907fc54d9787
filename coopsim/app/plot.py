"""``coopsim plot FILE``: PNG figures of a recording (matplotlib, drawn off-screen).

``trajectories.png``: every robot's path over the floor plan (floor, zones, objects, targets
of the first layout). ``robots.png``: ground speed (m/s) and the stored commands of every module
the robot carries (``motors.left``...: each module's ``command_fields``, in its units) against
recording time (s), a row per robot. ``metrics.png``: every rule's metrics against time, when
the recording has any. ``altitude.png``: every robot's altitude z (m above the floor) against
time, for a 3D world's recording only (its snapshots carry ``pose3d``). Long recordings are read once, in order, keeping at most :data:`POINTS`
samples per series.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..model.errors import CoopsimError
from ..model.plugins import MODULES
from ..model.snapshot import rule_metrics
from ..replay.player import recorded_steps
from .analyze import pyplot

POINTS = 4000  # samples kept per series
MAX_ROBOTS = 12  # rows of robots.png when no robot is named


class Series:
    """The samples kept from one pass over a recording."""

    def __init__(self, recording, robots: tuple[str, ...] = ()) -> None:
        self.stride = max(1, math.ceil(recording.frame_count / POINTS))
        self.layout: dict = {}
        self.time: list[float] = []
        self.robots: dict[str, list] = {}  # name -> [(t, x, y, speed)]
        self.commands: dict[str, dict] = {}  # name -> {module.field: [(t, value)]}
        self.metrics: dict[str, list] = {}  # name -> [(t, value)]
        self.altitude: dict[str, list] = {}  # name -> [(t, z m)], 3D recordings only
        self._wanted = set(robots)
        for k, (frame, layout, snap) in enumerate(recorded_steps(recording)):
            if not self.layout:
                self.layout = layout
            if k % self.stride == 0:
                self._take(frame.position, snap)

    def _take(self, t: float, snap) -> None:
        speed = np.hypot(snap.velocities[:, 0], snap.velocities[:, 1])
        columns = [(f"{label}.{field}", values[:, k]) for label, values in snap.commands.items()
                   for k, field in enumerate(command_fields(label, values.shape[1]))]
        for i, name in enumerate(snap.robots):
            if self._wanted and name not in self._wanted:
                continue
            self.robots.setdefault(name, []).append(
                (t, snap.poses[i, 0], snap.poses[i, 1], speed[i]))
            if snap.pose3d is not None:
                self.altitude.setdefault(name, []).append((t, snap.pose3d[i, 2]))
            mine = self.commands.setdefault(name, {})
            for key, values in columns:
                if not math.isnan(values[i]) or key in mine:
                    mine.setdefault(key, []).append((t, values[i]))
        for name, value in rule_metrics(snap.rules):
            self.metrics.setdefault(name, []).append((t, value))


def command_fields(label: str, width: int) -> tuple[str, ...]:
    """The names of module ``label``'s stored command values (its ``command_fields``), or
    ``c0``, ``c1``... for a module not installed here."""
    declared = MODULES.get(label).command_fields if label in MODULES else ()
    return tuple(declared[:width]) + tuple(f"c{k}" for k in range(len(declared), width))


def plot_recording(recording, folder: Path, robots: tuple[str, ...] = ()) -> list[Path]:
    """Write the figures of ``recording`` into ``folder``; return their paths.

    Raises:
        CoopsimError: matplotlib is missing; a named robot is not in the recording.
    """
    plt = pyplot()
    series = Series(recording, robots)
    missing = sorted(set(robots) - set(series.robots))
    if missing:
        raise CoopsimError(f"{recording.path}: no robot named {', '.join(missing)}")
    folder.mkdir(parents=True, exist_ok=True)
    written = [_trajectories(plt, series, folder / "trajectories.png"),
               _robot_rows(plt, series, folder / "robots.png", robots)]
    if series.metrics:
        written.append(_metrics(plt, series, folder / "metrics.png"))
    if series.altitude:
        written.append(_altitude(plt, series, folder / "altitude.png"))
    return written


def _trajectories(plt, series: Series, path: Path) -> Path:
    layout = series.layout
    floor = layout.get("floor") or {}
    length, width = float(floor.get("length", 10)), float(floor.get("width", 10))
    fig, ax = plt.subplots(figsize=(7, 7 * width / max(length, 1e-9) + 0.6))
    ax.add_patch(plt.Rectangle((-length / 2, -width / 2), length, width, color="0.93"))
    for zone in layout.get("zones", ()):  # [ZONE_n] on the floor, in the viewer's colours
        rgb = np.array(zone.get("color", (60, 120, 220))[:3]) / 255
        ax.add_patch(plt.Polygon(zone["polygon"], closed=True, color=rgb, lw=0))
    for obj in layout.get("objects", ()):
        sx, sy = (list(obj.get("size", (0.5, 0.5))) + [0.5, 0.5])[:2]
        rgb = np.array(obj.get("color", (150, 150, 150))[:3]) / 255
        patch = plt.Rectangle((obj["x"] - sx / 2, obj["y"] - sy / 2), sx, sy, color=rgb,
                              angle=math.degrees(obj.get("yaw", 0.0)), rotation_point="center")
        ax.add_patch(patch)
    for t in layout.get("targets", ()):
        ax.plot(t["x"], t["y"], "*", ms=14, color=np.array(t.get("rgb", (230, 40, 40))) / 255)
    colors = {r["name"]: tuple(r.get("color", (80, 80, 80))[:3])
              for r in layout.get("robots", ())}
    if len(set(colors.values())) < len(colors):  # robots of one colour: tell them apart
        cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        colors = {name: cycle[k % len(cycle)] for k, name in enumerate(colors)}
    else:
        colors = {name: np.array(rgb) / 255 for name, rgb in colors.items()}
    for name, rows in series.robots.items():
        a = np.array(rows)
        ax.plot(a[:, 1], a[:, 2], "-", lw=1.2, color=colors.get(name, "k"), label=name)
        ax.plot(a[0, 1], a[0, 2], "o", ms=4, color=colors.get(name, "k"))
        ax.plot(a[-1, 1], a[-1, 2], "s", ms=5, color=colors.get(name, "k"))
    ax.set_xlim(-length / 2, length / 2)
    ax.set_ylim(-width / 2, width / 2)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title("trajectories (o start, \u25a0 end)")
    if len(series.robots) <= 12:
        ax.legend(fontsize=7, loc="upper right")
    return _save(plt, fig, path)


def _robot_rows(plt, series: Series, path: Path, named: tuple[str, ...]) -> Path:
    names = list(series.robots)[: (len(series.robots) if named else MAX_ROBOTS)]
    fig, axes = plt.subplots(max(1, len(names)), 2, figsize=(11, 1.9 * max(1, len(names)) + 0.6),
                             squeeze=False, sharex=True)
    for row, name in zip(axes, names):
        a = np.array(series.robots[name])
        row[0].plot(a[:, 0], a[:, 3], color="tab:blue")
        row[0].set_ylabel(f"{name}\nspeed (m/s)", fontsize=8)
        for key, samples in series.commands.get(name, {}).items():
            c = np.array(samples)
            row[1].plot(c[:, 0], c[:, 1], label=key)
        row[1].set_ylabel("commands", fontsize=8)
        if series.commands.get(name):
            row[1].legend(fontsize=7, loc="upper right")
        for ax in row:
            ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    shown = "" if len(names) == len(series.robots) else \
        f" (first {len(names)} of {len(series.robots)}; --robot NAME picks)"
    fig.suptitle("speed and stored commands" + shown)
    return _save(plt, fig, path)


def _metrics(plt, series: Series, path: Path) -> Path:
    names = list(series.metrics)
    fig, axes = plt.subplots(len(names), 1, figsize=(9, 2.2 * len(names) + 0.6), squeeze=False,
                             sharex=True)
    for (ax,), name in zip(axes, names):
        a = np.array(series.metrics[name])
        ax.plot(a[:, 0], a[:, 1], color="tab:purple")
        ax.set_ylabel(name, fontsize=8)
        ax.grid(alpha=0.3)
    axes[-1][0].set_xlabel("time (s)")
    fig.suptitle("rule metrics")
    return _save(plt, fig, path)


def _altitude(plt, series: Series, path: Path) -> Path:
    """Every robot's altitude against time on one axes (a 3D world's recording)."""
    fig, ax = plt.subplots(figsize=(9, 4.2))
    for name, rows in series.altitude.items():
        a = np.array(rows)
        ax.plot(a[:, 0], a[:, 1], lw=1.2, label=name)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("altitude z (m)")
    ax.grid(alpha=0.3)
    if len(series.altitude) <= 12:
        ax.legend(fontsize=7, loc="upper right")
    ax.set_title("altitude above the floor")
    return _save(plt, fig, path)


def _save(plt, fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
