"""Make the recordings and pictures of docs/usecases.md.

    .venv/bin/python docs/make_usecases.py [--no-record] [--no-shots] [--no-plot]
                                           [--only transport formation ctf]

1. Records the showcases, every 10th step, to ``recordings/transport.mcap``,
   ``recordings/formation.mcap`` and ``recordings/ctf.mcap`` (``coopsim run --record``; capture
   the flag's first 30 s, lockstep at once, team B's network controller launched as usual).
2. Screenshots: replays each recording (``coopsim replay --paused --start T``) and draws it
   with the real viewer in a window, under a private Xvfb server when there is no display,
   into ``docs/images/<showcase>_<T>s.png``.
3. Plots the formation error over time from the formation recording (the ``formation`` rule's
   fields of every recorded step) into ``docs/images/formation_error.png``, with matplotlib,
   which is not one of coopsim's dependencies: ``pip install matplotlib`` for this step (it is
   skipped with a note otherwise).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
RECORDINGS = ROOT / "recordings"
EVERY = 10  # record every 10th step: 0.1 s of sim time apart
SHOTS = {"transport": (22.0, 40.0, 62.0), "formation": (24.0, 41.0, 59.0),  # s into each run
         "ctf": (26.0,)}  # capture the flag: both attacking squads on their way, in wedges
#: A showcase's own run options: the game runs lockstep at once, its first 30 s
RUN = {"ctf": ["--speed", "0", "--duration", "30"]}


def record(name: str) -> Path:
    """Run showcase ``name`` headless and record it; return the recording."""
    out = RECORDINGS / f"{name}.mcap"
    out.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    subprocess.run([sys.executable, "-m", "coopsim", "run", f"scenarios/{name}.scenario",
                    "--headless", "--port", "0", "--record", str(out), "--record-every",
                    str(EVERY), *RUN.get(name, [])], cwd=ROOT, env=env, check=True, stdin=subprocess.DEVNULL)
    return out


def plot_formation_error(recording: Path) -> Path | None:
    """The formation error (each corner's and the largest) over time, as a PNG."""
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)", file=sys.stderr)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from coopsim.recording.reader import Recording

    with Recording(recording) as rec:
        rows = [(f.time, f.rules["formation"]) for f in rec.iter_frames()]
    t = [time_ for time_, _ in rows]
    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=110)
    ax.plot(t, [r["left"] for _, r in rows], label="left corner", color="tab:green", lw=1.2)
    ax.plot(t, [r["right"] for _, r in rows], label="right corner", color="tab:blue", lw=1.2)
    ax.axhline(0.25, color="tab:red", ls="--", lw=0.8, label="break (0.25 m)")
    ax.axhline(0.15, color="gray", ls=":", lw=0.8, label="formed (0.15 m)")
    for x, what in ((24, "gate"), (40, "pillar"), (52, "crate")):
        ax.annotate(what, (x, 0.62), ha="center", fontsize=8, color="dimgray")
    ax.set(xlabel="sim time (s)", ylabel="distance from its place (m)", ylim=(0, 0.7),
           title="Formation error of scenarios/formation.scenario")
    ax.legend(loc="upper left", fontsize=8, ncols=2)
    fig.tight_layout()
    out = IMAGES / "formation_error.png"
    fig.savefig(out)
    return out


class _Display:
    """The current display, or a private Xvfb server while the context is open."""

    def __enter__(self) -> "_Display":
        self.proc = None
        if os.environ.get("DISPLAY"):
            return self
        xvfb = shutil.which("Xvfb")
        if xvfb is None:
            raise SystemExit("no display and no Xvfb (apt-get install xvfb)")
        number = next(n for n in range(90, 400) if not Path(f"/tmp/.X11-unix/X{n}").exists())
        self.proc = subprocess.Popen([xvfb, f":{number}", "-screen", "0", "1280x900x24",
                                      "-nolisten", "tcp"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not Path(f"/tmp/.X11-unix/X{number}").exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("Xvfb did not start")
            time.sleep(0.05)
        os.environ["DISPLAY"] = f":{number}"
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            os.environ.pop("DISPLAY", None)
            self.proc.terminate()
            self.proc.wait(5)


def screenshot(recording: Path, at: float, out: Path) -> Path:
    """Draw ``recording`` at ``at`` s with the viewer and save the window as ``out``."""
    import pyglet

    from coopsim.viewer.app import Viewer

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    replay = subprocess.Popen([sys.executable, "-m", "coopsim", "replay", str(recording),
                               "--headless", "--port", "0", "--paused", "--start", str(at)],
                              cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        endpoint = next(m.group(1) for line in replay.stderr
                        if (m := re.search(r"name server: (tcp://\S+)", line)))
        viewer = Viewer(endpoint, fps=10, width=1100, height=760)
        try:
            deadline = time.monotonic() + 20
            while not (viewer.link.connected and viewer.link.frame is not None
                       and viewer.scene.layout is not None and viewer.scene.robot_names):
                if time.monotonic() > deadline:
                    raise SystemExit(f"the viewer did not show {recording}")
                viewer.dispatch_events()
                viewer.render()
                viewer.flip()
                time.sleep(0.03)
            viewer.fit()
            for _ in range(10):  # let the layout settle and the latest frame arrive
                viewer.dispatch_events()
                viewer.render()
                viewer.flip()
                time.sleep(0.05)
            viewer.dispatch_events()
            viewer.render()
            image = pyglet.image.get_buffer_manager().get_color_buffer().get_image_data()
            image.save(str(out))
        finally:
            viewer.close()
    finally:
        replay.terminate()
        replay.wait(10)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-record", action="store_true", help="use the recordings there are")
    parser.add_argument("--no-shots", action="store_true", help="take no screenshots")
    parser.add_argument("--no-plot", action="store_true", help="draw no plot")
    parser.add_argument("--only", nargs="+", choices=sorted(SHOTS), default=sorted(SHOTS),
                        help="these showcases only")
    args = parser.parse_args()
    IMAGES.mkdir(parents=True, exist_ok=True)
    for name in args.only:
        if not args.no_record:
            print("recorded", record(name))
    if not args.no_shots:
        with _Display():
            for name in args.only:
                for at in SHOTS[name]:
                    out = IMAGES / f"{name}_{at:g}s.png"
                    print("drew", screenshot(RECORDINGS / f"{name}.mcap", at, out))
    if not args.no_plot and "formation" in args.only:
        out = plot_formation_error(RECORDINGS / "formation.mcap")
        if out:
            print("plotted", out)


if __name__ == "__main__":
    main()
