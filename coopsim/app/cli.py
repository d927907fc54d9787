"""The ``coopsim`` command: parse arguments, call the library, turn known errors into exit 2."""

from __future__ import annotations

import functools
import logging
import os
import signal
import sys

import click

from ..model.errors import CoopsimError

EXIT_BAD_INPUT = 2


def _friendly(fn):
    """Print a CoopsimError or OSError as one line on stderr and exit 2 (no traceback)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (CoopsimError, OSError) as exc:
            click.echo(f"coopsim: {exc}", err=True)
            sys.exit(EXIT_BAD_INPUT)

    return wrapper


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


@click.group()
@click.version_option(package_name="coopsim")
@click.option("-v", "--verbose", is_flag=True, help="Log warnings and info to stderr.")
def main(verbose: bool) -> None:
    """coopsim: a networked multi-robot simulator."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="coopsim: %(message)s")
    # SIGTERM (kill, timeout, a service manager) ends a run like Ctrl-C does: controllers are
    # stopped and a recording gets its summary and index.
    signal.signal(signal.SIGTERM, _interrupt)


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
def check(files: tuple[str, ...]) -> None:
    """Validate .world and .scenario FILES without running them."""
    from ..formats.files import check as check_files

    errors = check_files(files)
    for line in errors:
        click.echo(line, err=True)
    if errors:
        sys.exit(EXIT_BAD_INPUT)
    click.echo(f"{len(files)} file(s) OK")


@main.command(name="list")
def list_() -> None:
    """List robot types and modules with their parameters."""
    from .listing import describe_registries

    click.echo(describe_registries())


def _has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


@main.command()
@click.argument("file", required=False, type=click.Path())
@click.option("--headless/--gui", default=None,
              help="Without a window (default when there is no display) or with the viewer.")
@click.option("--mode", type=click.Choice(["realtime", "lockstep"]), help="Stepping mode.")
@click.option("--dt", type=float, help="Physics step, s.")
@click.option("--duration", type=float, help="Sim time to run, s (default: until Ctrl-C).")
@click.option("--seed", type=int, help="Random seed (noise, lost data).")
@click.option("--speed", type=float, help="Real-time speed factor; 0 = as fast as possible.")
@click.option("--port", type=int, default=10000, show_default=True,
              help="Name server port (0 = any free port).")
@click.option("--bind", default="127.0.0.1", show_default=True, help="Address servers bind.")
@click.option("--no-controllers", is_flag=True, help="Do not launch the scenario's controllers.")
@click.option("--controller-logs", type=click.Path(), help="Folder for controllers' output.")
@click.option("--json-port", type=int,
              help="Also serve the JSON-lines gateway on this TCP port (0 = any free port).")
@click.option("--fps", type=click.FloatRange(0.5, 240), default=10.0, show_default=True,
              help="Viewer frames per second (with the GUI).")
@click.option("--record", is_flag=False, flag_value="", default=None, metavar="[PATH]",
              help="Record the run to PATH (default recordings/<scenario>-<UTC time>.mcap).")
@click.option("--record-every", type=click.IntRange(1), default=1, show_default=True,
              help="Record every N-th step.")
@click.option("--engine", help="Physics engine (coopsim list shows them; default: the "
                               "scenario's [SETTINGS] engine, else pymunk).")
@click.option("--data-dir", "data_dirs", multiple=True,
              type=click.Path(exists=True, file_okay=False),
              help="Another folder network requests may load from and record into "
                   "(repeatable; see docs/reliability.md).")
@_friendly
def run(file, headless, mode, dt, duration, seed, speed, port, bind, no_controllers,
        controller_logs, json_port, fps, record, record_every, engine, data_dirs) -> None:
    """Run FILE (.scenario or .world); without FILE, the bundled demo.

    With the GUI (the default when there is a display) a viewer window is started as a child
    process: closing it ends the run; if it crashes, the run goes on. /sim load and record
    reach only the data folders: FILE's folder, the bundled scenarios/, worlds/, recordings/,
    ./recordings and each --data-dir. FILE and --record PATH are yours and go anywhere.
    """
    from .run import Run, RunOptions, load_scenario_or_world
    from .console import run_headless, run_with_viewer

    scenario = load_scenario_or_world(file)
    options = RunOptions(mode=mode, dt=dt, duration=duration, seed=seed, speed=speed, port=port,
                         bind=bind, controllers=not no_controllers, log_dir=controller_logs,
                         json_port=json_port, record=record, record_every=record_every,
                         engine=engine, data_dirs=data_dirs)
    gui = (not headless) if headless is not None else _has_display()
    if gui and not _has_display():
        raise CoopsimError("--gui needs a display (DISPLAY is not set); use --headless, "
                           "or start a viewer elsewhere with 'coopsim view ENDPOINT'")
    with Run(scenario, options) as live:
        if live.recorder is not None:
            click.echo(f"recording: {live.recorder.path}", err=True)
        if live.gateway is not None:
            host, gw_port = live.gateway.address
            click.echo(f"json gateway: {host}:{gw_port}", err=True)
        if gui and live.network is not None:
            run_with_viewer(live, fps)
        else:
            run_headless(live)
    if live.recorder is not None:
        click.echo(live.recorder.summary(), err=True)


@main.command()
@click.argument("driver")
@click.argument("robot", required=False)
@click.option("--nameserver", help="Name server endpoint (default $COOPSIM_NAMESERVER or "
                                   "tcp://127.0.0.1:10000).")
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A driver parameter (repeatable); coopsim list shows them.")
@click.option("--steps", type=click.IntRange(1), help="Stop after N iterations.")
@click.option("--seed", type=int, help="Seed of the driver's random generator.")
@_friendly
def drive(driver, robot, nameserver, params, steps, seed) -> None:
    """Drive ROBOT over the network with the registered DRIVER.

    The same class a scenario hosts in-process with 'driver DRIVER' runs here as a controller
    process speaking the protocol. ROBOT defaults to $COOPSIM_ROBOT or robot1.
    """
    from ..client import run_controller

    settings = {}
    for item in params:
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise CoopsimError(f"--param takes NAME=VALUE, not {item!r}")
        settings[name] = value
    done = run_controller(driver, robot, settings, steps=steps, nameserver=nameserver, seed=seed)
    click.echo(f"{done} control steps", err=True)


@main.command()
@click.argument("endpoint", required=False)
@click.option("--fps", type=click.FloatRange(0.5, 240), default=10.0, show_default=True,
              help="Frames per second (CoopDynSim renders at 10).")
@_friendly
def view(endpoint, fps) -> None:
    """Show a running simulation or replay in a window.

    ENDPOINT is its name server: tcp://HOST:PORT, HOST:PORT or a port on this machine (default
    $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000). The window keeps trying while the simulation
    is away and reconnects when it comes back.
    """
    from ..viewer import ViewerError, nameserver_endpoint, quit_on_signals

    quit_on_signals()
    endpoint = nameserver_endpoint(endpoint)
    if not _has_display():
        raise ViewerError("no display: DISPLAY is not set (run under X, or under Xvfb)")
    try:
        from ..viewer.app import main as view_main
    except ImportError as exc:
        raise ViewerError(f"the viewer cannot load its window libraries: {exc}") from None
    sys.exit(view_main(endpoint, fps))


@main.command()
@click.argument("endpoint", required=False)
@click.option("--json-port", type=int, default=0, show_default=True,
              help="TCP port to serve (0 = any free port).")
@click.option("--bind", default="127.0.0.1", show_default=True, help="Address to listen on.")
@_friendly
def gateway(endpoint, json_port, bind) -> None:
    """Serve the JSON-lines gateway in front of a running simulation or replay.

    ENDPOINT is its name server (default $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000).
    """
    import threading

    from ..net.gateway import Gateway
    from ..net.protocol import DEFAULT_NAMESERVER

    endpoint = endpoint or os.environ.get("COOPSIM_NAMESERVER", DEFAULT_NAMESERVER)
    server = Gateway(endpoint, bind, json_port).start()
    host, gw_port = server.address
    click.echo(f"json gateway: {host}:{gw_port} -> {endpoint}   (Ctrl-C stops)", err=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


@main.command()
@click.argument("file", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@_friendly
def info(file, as_json) -> None:
    """Describe a recording: duration, steps, robots, size, scenario."""
    from ..recording.reader import Recording, format_info, info_json

    with Recording(file) as rec:
        facts = rec.info()
    click.echo(info_json(facts) if as_json else format_info(facts))
    if not facts.complete:
        click.echo(f"incomplete: the recorder did not finish (killed?), so indexed MCAP readers "
                   f"refuse it; 'coopsim repair {file}' writes its summary and index", err=True)


@main.command()
@click.argument("file", type=click.Path())
@click.option("-o", "--output", type=click.Path(),
              help="Write the repaired recording to this new file (default: replace FILE once "
                   "the repaired copy is complete).")
@_friendly
def repair(file, output) -> None:
    """Write the summary and index a killed recording lacks, so every MCAP reader opens it.

    Every complete chunk is kept; what the crash cut off is left out.
    """
    from ..recording.repair import repair as repair_recording

    click.echo(repair_recording(file, output).describe())


@main.command()
@click.argument("file", type=click.Path())
@click.option("--csv", "out", required=True, type=click.Path(),
              help="Output CSV file ('-' for stdout).")
@_friendly
def export(file, out) -> None:
    """Export a recording: one CSV row per robot per recorded step."""
    from ..recording.reader import Recording, export_csv

    with Recording(file) as rec, click.open_file(out, "w", encoding="utf-8") as stream:
        try:
            rows = export_csv(rec, stream)
        except BrokenPipeError:  # `coopsim export F --csv - | head`: the reader has enough
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return
    click.echo(f"{rows} rows written to {'stdout' if out == '-' else out}", err=True)


@main.command()
@click.argument("file", type=click.Path())
@click.option("--headless/--gui", default=None,
              help="Without a window (default when there is no display) or with the viewer.")
@click.option("--port", type=int, default=10000, show_default=True,
              help="Name server port (0 = any free port).")
@click.option("--bind", default="127.0.0.1", show_default=True, help="Address servers bind.")
@click.option("--speed", type=float, default=1.0, show_default=True,
              help="Playback speed factor (negative plays backwards).")
@click.option("--start", type=float, help="Position to start at, s.")
@click.option("--paused", is_flag=True, help="Start paused.")
@click.option("--exit-at-end", is_flag=True, help="Exit when the playback reaches the end.")
@click.option("--fps", type=click.FloatRange(0.5, 240), default=10.0, show_default=True,
              help="Viewer frames per second (with the GUI).")
@_friendly
def replay(file, headless, port, bind, speed, start, paused, exit_at_end, fps) -> None:
    """Play a recording back on the network, as a live run would appear."""
    from ..recording.replay import Replay
    from .console import run_replay

    gui = (not headless) if headless is not None else _has_display()
    if gui and not _has_display():
        raise CoopsimError("--gui needs a display (DISPLAY is not set); use --headless, "
                           "or start a viewer elsewhere with 'coopsim view ENDPOINT'")
    with Replay(file, bind=bind, port=port, speed=speed, paused=paused,
                exit_at_end=exit_at_end, start=start) as playback:
        run_replay(playback, gui, lambda text: click.echo(text, err=True), fps)


@main.group()
def bench() -> None:
    """Benchmarks (figures go in docs/performance.md)."""


@bench.command("step")
@click.option("--robots", "counts", default="10,100,500,1000,2000", show_default=True,
              help="Comma-separated robot counts.")
@click.option("--steps", default=100, show_default=True, help="Timed steps per count.")
@click.option("--engine", default="pymunk", show_default=True, help="Physics engine.")
@_friendly
def bench_step(counts: str, steps: int, engine: str) -> None:
    """Step time against robot count (single robots, sonar every step, dt 0.02 s)."""
    from .bench import bench_steps, format_table

    rows = []
    for n in (int(c) for c in counts.split(",")):
        rows.append(bench_steps(n, steps, engine=engine))
        click.echo(f"{n} robots: median {rows[-1].median:.2f} ms, p95 {rows[-1].p95:.2f} ms",
                   err=True)
    click.echo(format_table(rows))
