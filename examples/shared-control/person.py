"""A scripted "person" flying three Crazyflies in formation around pillars (issue 44, item 4c).

Start the simulator, then the person::

    coopsim run examples/shared-control/shared_flight.scenario
    python examples/shared-control/person.py --plot feedback.png

The person steers the squad ``flock`` by its velocity alone (``/squads`` steer, docs/in-the-loop.md),
as a hand on a haptic device would: hover while the quadrotors take off, then forward at
0.5 m/s through the pillars, a nudge to the left on the way, and stop. The quadrotors keep their
line formation and go round the pillars by themselves (the ``shared`` driver); every step the
person reads the squad's feedback force (N), which a haptic device would push back with, and
after the run plots it (``--plot``) with the squad's path, and writes it as CSV (``--csv``).
"""

from __future__ import annotations

import argparse
import csv
import time

from coopsim.client import Client, RemoteError
from coopsim.client.squads import Squads
from coopsim.model.steering import FEEDBACK_FIELDS

#: The person's script: (from sim time s, vx, vy, vz m/s), the last row that has begun holds.
SCRIPT = ((0.0, 0.0, 0.0, 0.0), (3.0, 0.5, 0.0, 0.0), (7.0, 0.5, 0.15, 0.0),
          (9.0, 0.5, 0.0, 0.0), (17.0, 0.0, 0.0, 0.0))
END = 19.0  # sim time the person lets go, s


def wanted(t: float, script=SCRIPT) -> tuple[float, float, float]:
    """The person's velocity at sim time ``t``, m/s."""
    v = script[0][1:]
    for row in script:
        if t >= row[0]:
            v = row[1:]
    return v


def fly(client: Client, squad: str = "flock", end: float = END, script=SCRIPT,
        members=()) -> list[tuple]:
    """Steer ``squad`` by ``script`` (its times counted from the first feedback read) for
    ``end`` s of sim time; one row a step read.

    Returns:
        Rows ``(step, seq, *FEEDBACK_FIELDS, *member x, y, z)``: every step whose feedback the
        loop saw (a person's loop faster than the run's steps sees each), with the positions of
        ``members`` (robot names, read from their mocap) when asked.
    """
    squads, bots = Squads(client), [client.robot(n) for n in members]
    fb = first_feedback(squads, squad)  # the first row: the script's time 0
    rows, last, start = [], -1, fb.time
    while True:
        if fb.step != last:
            last = fb.step
            places = [v for bot in bots for v in bot.mocap.read()[:3]]
            rows.append((fb.step, fb.seq, *fb.data, *places))
            if fb.time - start >= end:
                return rows
        squads.steer(squad, *wanted(fb.time - start, script))
        time.sleep(0.001)  # a haptic loop runs at 1 kHz
        fb = squads.feedback(squad)


def first_feedback(squads: Squads, squad: str, patience: float = 10.0):
    """The squad's first feedback, waiting up to ``patience`` s for the run's first step
    (until then the squad is not under shared control yet: error 16)."""
    t0 = time.monotonic()
    while True:
        try:
            return squads.feedback(squad)
        except RemoteError as exc:
            if exc.code != 16 or time.monotonic() - t0 > patience:
                raise
            time.sleep(0.05)


def plot(rows, path: str, world=None) -> None:
    """The feedback force over time and the squad's path from above (with the world's
    objects, when given), as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [r[2] for r in rows]
    fig, (top, force) = plt.subplots(2, 1, figsize=(8, 7), gridspec_kw={"height_ratios": [1, 1]})
    for obj in getattr(getattr(world, "world", world), "objects", ()):
        x, y = obj.position[:2]
        if obj.shape == "box":
            top.add_patch(plt.Rectangle((x - obj.size[0] / 2, y - obj.size[1] / 2),
                                        obj.size[0], obj.size[1], color="grey"))
        else:
            top.add_patch(plt.Circle((x, y), obj.size[0] / 2, color="grey"))
    top.plot([r[12] for r in rows], [r[13] for r in rows], "k-", label="squad's centre")
    for k in range((len(rows[0]) - 18) // 3):
        top.plot([r[18 + 3 * k] for r in rows], [r[19 + 3 * k] for r in rows], lw=0.8,
                 label=f"robot {k + 1}")
    top.set_aspect("equal")
    top.set(xlabel="x (m)", ylabel="y (m)", title="the squad from above")
    top.legend(fontsize=7, loc="upper left")
    for k, name in enumerate(("fx", "fy", "fz")):
        force.plot(t, [r[3 + k] for r in rows], label=name)
    force.plot(t, [(r[3] ** 2 + r[4] ** 2 + r[5] ** 2) ** 0.5 for r in rows], "k--", lw=0.8,
               label="|F|")
    force.set(xlabel="sim time (s)", ylabel="feedback force (N)",
              title="feedback force on the person's hand (world frame)")
    force.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nameserver", help="the run's name server (default: the usual one)")
    ap.add_argument("--squad", default="flock")
    ap.add_argument("--csv", help="write every step's feedback to this CSV file")
    ap.add_argument("--plot", help="plot the feedback to this PNG file")
    ap.add_argument("--world", help="a .world file whose objects the plot draws",
                    default=None)
    args = ap.parse_args(argv)
    members = ("cf1", "cf2", "cf3") if args.squad == "flock" else ()
    with Client(args.nameserver) as client:
        rows = fly(client, args.squad, members=members)
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(("step", "seq", *FEEDBACK_FIELDS,
                          *(f"{n}_{a}" for n in members for a in "xyz")))
            out.writerows(rows)
    if args.plot:
        world = None
        if args.world:
            from coopsim.formats.files import load

            world = load(args.world)
        plot(rows, args.plot, world)
    peak = max((r[3] ** 2 + r[4] ** 2 + r[5] ** 2) ** 0.5 for r in rows)
    print(f"{len(rows)} steps read, sim time {rows[0][2]:.2f} to {rows[-1][2]:.2f} s, "
          f"largest feedback force {peak:.3f} N")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
