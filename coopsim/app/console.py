"""What a run shows: the endpoint, a progress bar or status line, a summary; with --gui a viewer."""

from __future__ import annotations

import subprocess
import threading
import time

import click

from ..model.snapshot import realtime_words
from ..recording.damage import EXIT_DAMAGED, summary
from . import interrupt
from .run import Run, format_summary, watch
from .verdict import Verdict, ended_line, verdict

VIEWER_START_WAIT = 20.0  # s to wait for the viewer's window before stepping without it


def run_headless(live: Run) -> Verdict:
    """Start ``live`` and follow it to its end on the terminal (Ctrl-C or SIGTERM end it, at
    any moment, with the summary); return its verdict (printed after the summary)."""
    live.stepper.end_on_error = True  # nobody is there to look at a paused run and resume it
    interrupt.check()  # a Ctrl-C swallowed while the run was built: it never starts
    with interrupt.polled():  # from here a Ctrl-C is a request watch() looks at
        live.start()
        if live.network is not None:
            click.echo(f"name server: {live.network.endpoint}   (Ctrl-C stops)", err=True)
        _say_step(live)
        stats = _watch_headless(live)
    return _say_verdict(stats, live)


def _say_verdict(stats, live: Run) -> Verdict:
    snap = live.stepper.snapshot
    click.echo(format_summary(stats, live.scenario, len(snap.robots), snap.rules,
                              ended_line(stats.finished, live),
                              snap.extra.get("engine_warnings", ()), snap.extra.get("diverged"),
                              live.stepper.sim.external.summary()))
    said = verdict(stats.finished or "", live)
    if said.text():
        click.echo(said.text())
    return said


def _watch_headless(live: Run):
    """Watch the run with a progress bar (with a duration) or a status line (without); dead
    controllers are noticed on each report."""
    duration = live.settings.duration
    stalls, breaks = StallReport(live.stepper.start_wait_left), RtBreakReport()
    if not duration:
        stats = watch(live.stepper, lambda stats: (_status_line(stats), stalls(stats),
                                                   breaks(stats), live.forget_dead_controllers()))
        click.echo("", err=True)
        return stats
    steps = max(1, round(duration / live.settings.dt))
    with click.progressbar(length=steps, label="simulating", file=click.get_text_stream(
            "stderr"), show_eta=False, show_percent=True) as bar:
        done = [0]

        def report(stats):
            bar.update(stats.steps - done[0])
            done[0] = stats.steps
            stalls(stats)
            breaks(stats)
            live.forget_dead_controllers()
        return watch(live.stepper, report)


class StallReport:
    """Says on stderr whom a lockstep run is waiting for, when a step has waited at least
    :data:`AFTER` s; at most one line every :data:`EVERY` s however often stalls come and go
    (a loaded machine makes many short ones), counting the ones it did not print."""

    AFTER = 2.0  # s a step must have waited before it is worth a line
    EVERY = 5.0  # s between two lines

    def __init__(self, start_left=lambda: None) -> None:
        self._start_left = start_left  # () -> s the first step still waits for attaching, or None
        self._at: float | None = None
        self._quiet = 0  # stalls seen since the last line and not printed
        self._current = False  # inside a stall already counted

    def __call__(self, stats) -> None:
        if not stats.waiting or stats.stalled < self.AFTER:
            self._current = self._current and bool(stats.waiting)
            return
        now = time.monotonic()
        if self._at is not None and now - self._at < self.EVERY:
            self._quiet += not self._current
            self._current = True
            return
        more = f" ({self._quiet} more stall(s) since the last line)" if self._quiet else ""
        who = ", ".join(stats.waiting)
        if who.endswith("to attach"):
            click.echo(f"\nlockstep: the first step has waited {stats.stalled:.1f} s for {who}"
                       f"{self._starts_in()}{more}", err=True)
        else:
            click.echo(f"\nlockstep: no step for {stats.stalled:.1f} s, waiting for a command "
                       f"from the controller(s) of {who}{more}", err=True)
        self._at, self._quiet, self._current = now, 0, True


    def _starts_in(self) -> str:
        left = self._start_left()
        if left is None:
            return ""
        return (f"; it starts without them in {left:.1f} s (the wait restarts while a launched "
                "controller is still busy starting)")


class RtBreakReport:
    """Says on stderr when real time breaks (more than 5 % of the last second's realtime steps
    missed their deadline: ``Stats.rt_broken``), with the real-time factor achieved; again
    every few seconds while it lasts, and once when it holds again."""

    EVERY = 5.0  # s between repeats while real time stays broken

    def __init__(self) -> None:
        self._broken = False
        self._at = 0.0

    def __call__(self, stats) -> None:
        now = time.monotonic()
        if stats.rt_broken and (not self._broken or now - self._at >= self.EVERY):
            click.echo(f"\nrealtime: {realtime_words(stats.late, stats.recent_rtf, stats.speed)}",
                       err=True)
            self._broken, self._at = True, now
        elif self._broken and not stats.rt_broken:
            click.echo("\nrealtime: holding again", err=True)
            self._broken = False


def _status_line(stats) -> None:
    click.echo(f"\rt = {stats.time:8.2f} s  steps {stats.steps}  rtf {stats.rtf:5.2f}  "
               f"missed {stats.missed}", nl=False, err=True)


def _say_step(live: Run) -> None:
    """Say once which path the run's step takes (composed or plain, and why), after the name
    server's line: scripts read the endpoint from the first lines (docs/protocol.md)."""
    click.echo(f"step: {live.stepper.sim.step_path}", err=True)


def run_with_viewer(live: Run, fps: float = 10.0) -> Verdict:
    """Start ``live`` with a viewer window in a child process and follow both to the end.

    Closing the window (viewer exit code 0) ends the run. A viewer that crashes or is killed does
    not: the run goes on headless until its duration or Ctrl-C. When the run reaches its duration
    first, the servers stay up (so the window still shows the final state) until the window closes.
    """
    from ..viewer import start_viewer

    endpoint = live.network.endpoint
    click.echo(f"name server: {endpoint}   (Ctrl-C stops)", err=True)
    _say_step(live)
    viewer = start_viewer(endpoint, fps, stderr=subprocess.PIPE, env=live.client_env())
    click.echo(f"viewer: pid {viewer.pid} (closing its window ends the run)", err=True)
    shown = threading.Event()
    threading.Thread(target=_relay, args=(viewer, shown), daemon=True).start()
    # step once the window is up, so the user sees the run from its first step
    deadline = time.monotonic() + VIEWER_START_WAIT
    while not shown.wait(0.1) and viewer.poll() is None and time.monotonic() < deadline:
        pass
    interrupt.check()
    try:
        with interrupt.polled():
            live.start()
            stats = _follow(live, viewer)
    finally:
        live.stepper.stop()
        if viewer.poll() is None:
            viewer.terminate()
            try:
                viewer.wait(5.0)
            except subprocess.TimeoutExpired:
                viewer.kill()
    return _say_verdict(stats, live)


def _relay(viewer: subprocess.Popen, shown: threading.Event) -> None:
    """Copy the viewer's stderr to ours; set ``shown`` when its window is open."""
    for line in viewer.stderr:
        click.echo(line.rstrip("\n"), err=True)
        if line.startswith("viewer: showing"):
            shown.set()


def _follow(live: Run, viewer: subprocess.Popen):
    """Wait until the window closes, or the run ends without a window; Ctrl-C ends both (called
    inside :func:`~coopsim.app.interrupt.polled`)."""
    announced = False
    while True:
        code = viewer.poll() if viewer is not None else None
        if code == 0:
            click.echo("viewer closed: ending the run", err=True)
            break
        if code is not None:
            click.echo(f"viewer exited with code {code}; the simulation keeps running "
                       f"(Ctrl-C stops)", err=True)
            viewer = None
        live.forget_dead_controllers()
        running = live.stepper.running and not live.stepper.finished
        if (not running and viewer is None) or interrupt.requested():
            break
        if not running and not announced:
            click.echo("run finished; close the viewer window to quit", err=True)
            announced = True
        live.stepper.join(interrupt.LOOK)
        if not running:
            time.sleep(interrupt.LOOK)
    return live.stepper.stats()


def run_replay(replay, gui: bool, echo, fps: float = 10.0) -> int:
    """Serve ``replay`` (a :class:`~coopsim.replay.servers.Replay`) until it ends or Ctrl-C;
    ``echo(text)`` writes a line to stderr. Return the exit status: 0, or 2 when
    ``--exit-at-end`` playback stopped at a damaged chunk. From its first line a Ctrl-C is a
    request its loop looks at (:func:`~coopsim.app.interrupt.polled`), as a run's.

    With ``gui`` a viewer window runs as a child process (``coopsim.viewer.start_viewer``):
    closing it ends the replay; if it cannot start or crashes, the replay goes on headless.
    """
    with interrupt.polled():
        return _serve_replay(replay, gui, echo, fps)


def _serve_replay(replay, gui: bool, echo, fps: float) -> int:
    rec, damage = replay.recording, replay.player.damage
    echo(f"name server: {replay.endpoint}   (Ctrl-C stops)")
    echo(f"playback: {rec.path}, {rec.end - rec.start:.2f} s, {rec.frame_count} steps; "
         "control it on /playback")
    if damage:
        echo(f"coopsim: {rec.path}: {summary(damage)}; playing the steps before it "
             f"(up to {rec.end:.3f} s)")
    viewer = _start_viewer(replay.endpoint, fps, echo, replay.client_env()) if gui else None
    try:
        while not replay.player.finished.wait(interrupt.LOOK) and not interrupt.requested():
            code = viewer.poll() if viewer is not None else None
            if code == 0:
                echo("viewer closed: ending the replay")
                return 0
            if code is not None:
                echo(f"viewer exited with code {code}; the replay goes on (Ctrl-C stops)")
                viewer = None
        return 0 if interrupt.requested() else _replay_ended(replay, echo)
    finally:
        if viewer is not None and viewer.poll() is None:
            viewer.terminate()


def _replay_ended(replay, echo) -> int:
    """--exit-at-end: say why the process ends; its exit status (2: stopped at damage)."""
    rec, frame = replay.recording, replay.player.frame
    if replay.player.error:
        echo(f"coopsim: {rec.path}: {replay.player.error}")
        return EXIT_DAMAGED
    echo(f"replay ended: reached the recording's {'end' if frame.index else 'start'} at "
         f"{frame.position:.2f} s (step {frame.index + 1} of {rec.frame_count})")
    return 0


def _start_viewer(endpoint: str, fps: float, echo, env: dict[str, str]):
    try:
        from ..viewer import start_viewer  # the viewer is optional: guard its import
    except ImportError:
        echo("coopsim: the viewer is not available; running headless")
        return None
    try:
        return start_viewer(endpoint, fps, env=env)
    except OSError as exc:
        echo(f"coopsim: cannot start the viewer ({exc}); running headless")
        return None
