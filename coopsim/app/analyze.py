"""Analyses of recordings (``coopsim analyze``): the tracking error, as SwarmSimX measured it.

SwarmSimX compared a real and a simulated quadrotor flying eight-shaped trajectories through the
*cumulative distribution of the tracking error*: for a distance d, F(d) is the share of the
time the robot was closer than d to its reference,

    F(d) = 1 / (t_f - t_0) * integral over [t_0, t_f] of H(d - |p_d(t) - p(t)|) dt,

the faster F reaches 1, the better the tracking. Here p is the recorded position and p_d the
reference the ``velocity`` module stored with each ``track`` command (recorded columns
``ref_x``, ``ref_y``, ``tracking``), so any recording of a tracking run carries both; each
recorded step weighs its dt.
"""

from __future__ import annotations

from dataclasses import dataclass

import click
import numpy as np

from ..model.bundled import install_hint
from ..model.errors import CoopsimError

REFERENCE_COLUMNS = ("x", "y", "ref_x", "ref_y", "tracking")
#: The same from the ``rotors`` module (set_rotors with a reference: the ``flight`` driver); the
#: error is the horizontal one (recordings keep x, y of every robot).
FLIGHT_COLUMNS = ("x", "y", "flight_ref_x", "flight_ref_y", "flight_tracking")


@dataclass(frozen=True)
class Tracking:
    """One robot's tracking error in one recording.

    Attributes:
        source: The recording's path. robot: The robot's name.
        errors: (n,) distance to the reference at each recorded step that tracked one, m.
        weights: (n,) the dt of each of those steps, s.
    """

    source: str
    robot: str
    errors: np.ndarray
    weights: np.ndarray

    def cdf(self, d: np.ndarray) -> np.ndarray:
        """F(d): the share of the tracked time within ``d`` (m) of the reference."""
        order = np.argsort(self.errors)
        within = np.concatenate(([0.0], np.cumsum(self.weights[order])))
        return within[np.searchsorted(self.errors[order], d, side="right")] / within[-1]

    def summary(self) -> dict:
        """Steps, tracked time (s) and the error's mean, std, median, p95 and max (m)."""
        e, w = self.errors, self.weights
        mean = float(np.average(e, weights=w))
        std = float(np.sqrt(np.average((e - mean) ** 2, weights=w)))
        return {"steps": len(e), "time": float(w.sum()), "mean": mean, "std": std,
                "p50": _quantile(self, 0.5), "p95": _quantile(self, 0.95), "max": float(e.max())}


def _quantile(t: Tracking, q: float) -> float:
    """The smallest recorded error d with F(d) >= q, m."""
    order = np.argsort(t.errors)
    share = np.cumsum(t.weights[order]) / t.weights.sum()
    return float(t.errors[order][min(np.searchsorted(share, q), len(order) - 1)])


def tracking_errors(path: str, robot: str | None = None) -> list[Tracking]:
    """Every robot's (or ``robot``'s) tracking error in the recording at ``path``.

    Raises:
        CoopsimError: the file is not a readable recording, holds no tracked reference (no
            ``velocity`` module's ``track`` commands), or no robot ``robot``.
    """
    from ..recording.reader import Recording

    with Recording(path) as rec:
        rec.require_sound()
        names = [c.name for c in rec.robot_columns]
        sets = [c for c in (REFERENCE_COLUMNS, FLIGHT_COLUMNS) if set(c) <= set(names)]
        if not sets:
            raise CoopsimError(f"{path}: no tracking reference recorded (columns ref_x, ref_y, "
                               "tracking come with the velocity module, flight_ref_x... with "
                               "rotors)")
        cols = [[names.index(c) for c in columns] for columns in sets]
        per: dict[str, tuple[list, list]] = {}
        layout, robots = -1, ()
        for frame in rec.iter_frames():
            if frame.layout != layout:
                layout = frame.layout
                robots = tuple(r["name"] for r in rec.layout(layout)["robots"])
            every = rec.robot_values(frame)
            for columns in cols:
                _collect(per, robots, every[:, columns].tolist(), robot, frame.dt or rec.dt)
    if not per:
        raise CoopsimError(f"{path}: robot {robot!r} never tracked a reference" if robot else
                           f"{path}: no robot tracked a reference (the velocity module's track "
                           "command records one)")
    return [Tracking(path, name, np.array(e), np.array(w)) for name, (e, w) in per.items()]


def _collect(per: dict, robots, values, robot: str | None, dt) -> None:
    """Add each robot's error at one recorded step where it tracked a reference."""
    for name, (x, y, rx, ry, on) in zip(robots, values):
        if on > 0.5 and (robot is None or name == robot):
            errors, weights = per.setdefault(name, ([], []))
            errors.append(np.hypot(x - rx, y - ry))
            weights.append(dt or 1.0)


def format_tracking(rows: list[tuple[str, Tracking]]) -> str:
    """A markdown table of (label, Tracking) rows: error statistics in m."""
    out = ["| run | robot | steps | mean m | std m | median m | p95 m | max m |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for label, t in rows:
        s = t.summary()
        out.append(f"| {label} | {t.robot} | {s['steps']} | {s['mean']:.4f} | {s['std']:.4f} | "
                   f"{s['p50']:.4f} | {s['p95']:.4f} | {s['max']:.4f} |")
    return "\n".join(out)


def plot_tracking(rows: list[tuple[str, Tracking]], path: str, title: str = "") -> None:
    """Draw F(d) of each (label, Tracking) row into one figure saved at ``path`` (PNG, SVG,
    PDF: by the suffix).

    Raises:
        CoopsimError: matplotlib is not installed (``pip install 'coopsim[plot]'``).
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    top = max(float(t.errors.max()) for _, t in rows) * 1.05
    d = np.linspace(0.0, top, 400)
    for label, t in rows:
        s = t.summary()
        ax.plot(d, t.cdf(d), label=f"{label} ({t.robot}): mean {s['mean']:.3f} m, "
                f"std {s['std']:.3f} m")
    ax.set_xlabel("d, distance to the reference (m)")
    ax.set_ylabel("F(d), share of the time within d")
    ax.set_ylim(0.0, 1.02)
    ax.set_xlim(0.0, top)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(title or "cumulative distribution of the tracking error")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def pyplot():
    """matplotlib.pyplot on a file-only backend, or a CoopsimError saying how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise CoopsimError(f"plotting needs matplotlib: {install_hint('plot')}") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def tracking_command(recordings: tuple[str, ...], robot: str | None, labels: tuple[str, ...],
                     plot: str | None, title: str) -> None:
    """``coopsim analyze tracking``: the table of RECORDINGS, and their F(d) figure if asked."""
    if labels and len(labels) != len(recordings):
        raise CoopsimError(f"--label given {len(labels)} times for {len(recordings)} recordings")
    rows = [(label, t) for path, label in zip(recordings, labels or recordings)
            for t in tracking_errors(path, robot)]
    click.echo(format_tracking(rows))
    if plot:
        plot_tracking(rows, plot, title)
        click.echo(f"figure: {plot}", err=True)
