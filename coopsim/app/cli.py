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
    """Validate .world, .scenario and .sweep FILES without running them."""
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


def _keys_options(fn):
    """--keys, --insecure and --advertise: who may reach the servers, and where."""
    fn = click.option("--advertise", metavar="HOST",
                      help="Host the name server writes into the endpoints it hands out "
                           "(default: the bind address; for 0.0.0.0 this machine's "
                           "primary address).")(fn)
    fn = click.option("--insecure", is_flag=True,
                      help="Serve beyond loopback WITHOUT authentication: anyone who reaches "
                           "the machine can drive the run (trusted networks only).")(fn)
    return click.option("--keys", type=click.Path(), metavar="DIR",
                        help="CurveZMQ keys folder (coopsim keys DIR): every server accepts "
                             "only the clients in DIR/authorized. Needed for a --bind beyond "
                             "loopback.")(fn)


def _token_options(fn):
    """--json-token and --json-token-file: the JSON gateway's auth line."""
    fn = click.option("--json-token-file", type=click.Path(), metavar="FILE",
                      help="Read the JSON gateway's token from FILE's first line.")(fn)
    return click.option("--json-token", envvar="COOPSIM_JSON_TOKEN", metavar="TOKEN",
                        help="The JSON gateway's token (16+ characters; default "
                             "$COOPSIM_JSON_TOKEN): clients send it first. Needed beyond "
                             "loopback.")(fn)


def _client_keys(keys):
    """A client's keys: the folder given, else $COOPSIM_SERVER_KEY/$COOPSIM_CLIENT_KEY."""
    from ..net.security import ClientKeys

    return ClientKeys.resolve(keys)


def _has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


@main.command()
@click.argument("file", required=False, type=click.Path())
@click.option("--headless/--gui", default=None,
              help="Without a window (default when there is no display) or with the viewer.")
@click.option("--mode", type=click.Choice(["realtime", "lockstep"]),
              help="Stepping mode (default: the scenario's [SETTINGS] mode, else realtime).")
@click.option("--dt", type=float,
              help="Physics step, s (default: the scenario's [SETTINGS] dt, else 0.01).")
@click.option("--duration", type=float,
              help="Sim time to run, s (default: the scenario's [SETTINGS] duration, else "
                   "until Ctrl-C).")
@click.option("--seed", type=int, help="Random seed of noise and lost data (default: the "
                                       "scenario's [SETTINGS] seed, else 0).")
@click.option("--speed", type=float,
              help="Real-time speed factor; 0 = as fast as possible (default: the scenario's "
                   "[SETTINGS] speed, else 1 in realtime and 0 in lockstep).")
@click.option("--port", type=int, default=10000, show_default=True,
              help="Name server port (0 = any free port).")
@click.option("--bind", default="127.0.0.1", show_default=True, help="Address servers bind.")
@click.option("--no-controllers", is_flag=True, help="Do not launch the scenario's controllers.")
@click.option("--controller-logs", type=click.Path(), help="Folder for controllers' output.")
@click.option("--json-port", type=int,
              help="Also serve the JSON-lines gateway on this TCP port (0 = any free port).")
@click.option("--json-idle-timeout", type=click.FloatRange(0), default=300.0, show_default=True,
              help="Close a gateway connection idle this long, s (0 = never).")
@click.option("--fps", type=click.FloatRange(0.5, 240), default=10.0, show_default=True,
              help="Viewer frames per second (with the GUI).")
@click.option("--record", is_flag=False, flag_value="", default=None, metavar="[PATH]",
              help="Record the run to PATH (default recordings/<scenario>-<UTC time>.mcap).")
@click.option("--record-every", type=click.IntRange(1), default=1, show_default=True,
              help="Record every N-th step.")
@click.option("--engine", help="Physics engine (coopsim list shows them; default: the "
                               "scenario's [SETTINGS] engine, else pymunk).")
@click.option("--wait-for", type=click.IntRange(0), metavar="N",
              help="Lockstep: the first step waits (10 s at most) for N controllers to attach "
                   "(default: the scenario's wait_for, else every controller the run launches).")
@_keys_options
@_token_options
@_friendly
def run(file, headless, mode, dt, duration, seed, speed, port, bind, no_controllers,
        controller_logs, json_port, json_idle_timeout, fps, record, record_every, engine,
        wait_for, keys, insecure, advertise, json_token, json_token_file) -> None:
    """Run FILE (.scenario or .world); without FILE, the bundled demo.

    With the GUI (the default when there is a display) a viewer window is started as a child
    process: closing it ends the run; if it crashes, the run goes on.
    """
    from ..sim.casters import start_warmup
    from .run import Run, RunOptions, load_scenario_or_world
    from .console import run_headless, run_with_viewer
    from ..net.security import load_token

    start_warmup()  # the compiled sensing loads while the run is set up (sim/casters.py)

    scenario = load_scenario_or_world(file)
    options = RunOptions(mode=mode, dt=dt, duration=duration, seed=seed, speed=speed, port=port,
                         bind=bind, controllers=not no_controllers, log_dir=controller_logs,
                         json_port=json_port, json_idle_timeout=json_idle_timeout,
                         record=record, record_every=record_every, engine=engine,
                         wait_for=wait_for, keys=keys, insecure=insecure, advertise=advertise,
                         json_token=load_token(json_token, json_token_file))
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
@click.option("--keys", type=click.Path(), metavar="DIR",
              help="CurveZMQ client folder (server.key, client.key_secret) for a run started "
                   "with --keys (default: $COOPSIM_SERVER_KEY and $COOPSIM_CLIENT_KEY).")
@_friendly
def view(endpoint, fps, keys) -> None:
    """Show a running simulation or replay in a window.

    ENDPOINT is its name server: tcp://HOST:PORT, HOST:PORT or a port on this machine (default
    $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000). The window keeps trying while the simulation
    is away and reconnects when it comes back.
    """
    from ..viewer import ViewerError, nameserver_endpoint, quit_on_signals

    quit_on_signals()
    endpoint = nameserver_endpoint(endpoint)
    client_keys = _client_keys(keys)
    if not _has_display():
        raise ViewerError("no display: DISPLAY is not set (run under X, or under Xvfb)")
    try:
        from ..viewer.app import main as view_main
    except ImportError as exc:
        raise ViewerError(f"the viewer cannot load its window libraries: {exc}") from None
    sys.exit(view_main(endpoint, fps, client_keys))


@main.command()
@click.argument("endpoint", required=False)
@click.option("--json-port", type=int, default=0, show_default=True,
              help="TCP port to serve (0 = any free port).")
@click.option("--bind", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--idle-timeout", type=click.FloatRange(0), default=300.0, show_default=True,
              help="Close a connection idle this long, s (0 = never).")
@click.option("--keys", type=click.Path(), metavar="DIR",
              help="CurveZMQ client folder to forward with, for a run started with --keys "
                   "(default: $COOPSIM_SERVER_KEY and $COOPSIM_CLIENT_KEY).")
@_token_options
@_friendly
def gateway(endpoint, json_port, bind, idle_timeout, keys, json_token, json_token_file) -> None:
    """Serve the JSON-lines gateway in front of a running simulation or replay.

    ENDPOINT is its name server (default $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000).
    """
    import threading

    from ..net.gateway import Gateway
    from ..net.protocol import DEFAULT_NAMESERVER
    from ..net.security import load_token

    endpoint = endpoint or os.environ.get("COOPSIM_NAMESERVER", DEFAULT_NAMESERVER)
    server = Gateway(endpoint, bind, json_port, idle_timeout=idle_timeout,
                     token=load_token(json_token, json_token_file), keys=_client_keys(keys)).start()
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


@main.command()
@click.argument("file", type=click.Path())
@click.option("--csv", "out", required=True, type=click.Path(),
              help="Output CSV file ('-' for stdout).")
@click.option("--metrics-csv", "metrics_out", type=click.Path(),
              help="The monitors' metrics, one row per step ('-' for stdout; default: beside "
                   "the CSV as NAME.metrics.csv when the recording has metrics).")
@_friendly
def export(file, out, metrics_out) -> None:
    """Export a recording: one CSV row per robot per recorded step (and its metrics)."""
    from ..recording.metrics import export_metrics_csv, metric_names
    from ..recording.reader import Recording, export_csv

    with Recording(file) as rec:
        with click.open_file(out, "w", encoding="utf-8") as stream:
            try:
                rows = export_csv(rec, stream)
            except BrokenPipeError:  # `coopsim export F --csv - | head`: the reader has enough
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return
        click.echo(f"{rows} rows written to {'stdout' if out == '-' else out}", err=True)
        if metrics_out is None and out != "-" and metric_names(rec):
            metrics_out = os.path.splitext(out)[0] + ".metrics.csv"
        if metrics_out is not None:
            with click.open_file(metrics_out, "w", encoding="utf-8") as stream:
                rows = export_metrics_csv(rec, stream)
            click.echo(f"{rows} metric rows written to "
                       f"{'stdout' if metrics_out == '-' else metrics_out}", err=True)


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
@_keys_options
@_friendly
def replay(file, headless, port, bind, speed, start, paused, exit_at_end, fps, keys, insecure,
           advertise) -> None:
    """Play a recording back on the network, as a live run would appear."""
    from ..recording.replay import Replay
    from .console import run_replay

    gui = (not headless) if headless is not None else _has_display()
    if gui and not _has_display():
        raise CoopsimError("--gui needs a display (DISPLAY is not set); use --headless, "
                           "or start a viewer elsewhere with 'coopsim view ENDPOINT'")
    with Replay(file, bind=bind, port=port, speed=speed, paused=paused,
                exit_at_end=exit_at_end, start=start, keys=keys, insecure=insecure,
                advertise=advertise) as playback:
        run_replay(playback, gui, lambda text: click.echo(text, err=True), fps)


@main.command()
@click.argument("folder", required=False, default="coopsim-keys", type=click.Path())
@click.option("--client", "clients", multiple=True, metavar="NAME",
              help="Add a client key pair NAME (repeatable; default for a new folder: client).")
@_friendly
def keys(folder, clients) -> None:
    """Make CurveZMQ keys in FOLDER (default ./coopsim-keys): the servers' key pair and client
    key pairs. Serve with --keys FOLDER; give FOLDER/clients/NAME to client NAME."""
    from ..net.security import create_keys

    for line in create_keys(folder, tuple(clients)):
        click.echo(line)


@main.command()
@click.argument("file", type=click.Path())
@click.option("--out", type=click.Path(), help="Results table (Parquet; default: FILE with "
                                               ".parquet beside it). Re-running resumes it.")
@click.option("--scheduler", metavar="tcp://HOST:PORT",
              help="Run on this Dask scheduler (default: a LocalCluster on this machine).")
@click.option("--workers", type=click.IntRange(1), help="LocalCluster worker processes "
                                                        "(default: one per core).")
@click.option("--csv", "csv_out", is_flag=False, flag_value="", default=None, metavar="[PATH]",
              help="Also write the table as CSV (default path: OUT with .csv).")
@click.option("--record", is_flag=True, help="Keep each point's MCAP recording "
                                             "(OUT-recordings/).")
@click.option("--plot", is_flag=True, help="PNG plots of each metric against each axis "
                                           "(OUT-plots/).")
@_friendly
def sweep(file, out, scheduler, workers, csv_out, record, plot) -> None:
    """Run a .sweep FILE: every point and seed headless, one Dask task each, into a table.

    Exit status: 0 when every point ran, 1 when some failed (the last line says how many;
    their rows hold the error), 2 for a bad file or an unreachable scheduler, 130 on Ctrl-C
    (finished points are kept: run again to resume).
    """
    from pathlib import Path

    from .sweep import check_dependencies, default_out

    check_dependencies(plot)
    from ..formats.sweep import load_sweep
    from .sweep import Table, run_sweep

    spec = load_sweep(file)
    out = Path(out) if out else default_out(file)
    echo = lambda text: click.echo(text, err=True, nl=False)  # noqa: E731
    try:
        ran, failed = run_sweep(spec, out, scheduler, workers, record, echo)
    except KeyboardInterrupt:
        click.echo(f"interrupted: finished points are in {out}; run the same command again to "
                   "resume", err=True)
        sys.exit(130)
    table = Table(out)
    if csv_out is not None:
        table.write_csv(Path(csv_out) if csv_out else out.with_suffix(".csv"))
    if plot:
        from .sweepplot import plot_sweep

        plot_sweep(spec, list(table.rows.values()), out.with_name(out.stem + "-plots"))
    total = sum(1 for r in table.rows.values() if r.get("status") == "error")
    click.echo(f"sweep: {ran} run now, {failed} failed; {out} holds {len(table.rows)} rows "
               f"({total} with status error)", err=True)
    if failed:
        sys.exit(1)


@main.group()
def analyze() -> None:
    """Analyses of recordings (docs/experiments/swarmsimx.md)."""


@analyze.command("tracking")
@click.argument("recordings", nargs=-1, required=True, type=click.Path())
@click.option("--robot", help="Only this robot (default: every robot that tracked).")
@click.option("--label", "labels", multiple=True,
              help="A name for each recording in the table and the figure (repeat, in order).")
@click.option("--plot", type=click.Path(), help="Draw F(d) of all of them into this image "
                                                "(needs matplotlib: pip install 'coopsim[plot]').")
@click.option("--title", default="", help="The figure's title.")
@_friendly
def analyze_tracking(recordings, robot, labels, plot, title) -> None:
    """Tracking error of RECORDINGS: statistics and its cumulative distribution F(d)."""
    from .analyze import format_tracking, plot_tracking, tracking_errors

    if labels and len(labels) != len(recordings):
        raise CoopsimError(f"--label given {len(labels)} times for {len(recordings)} recordings")
    rows = [(label, t) for path, label in zip(recordings, labels or recordings)
            for t in tracking_errors(path, robot)]
    click.echo(format_tracking(rows))
    if plot:
        plot_tracking(rows, plot, title)
        click.echo(f"figure: {plot}", err=True)


@main.group()
def bench() -> None:
    """Benchmarks (figures go in docs/performance.md)."""


@bench.command("step")
@click.option("--robots", "counts", default="10,100,500,1000,2000", show_default=True,
              help="Comma-separated robot counts.")
@click.option("--steps", default=100, show_default=True, help="Timed steps per count.")
@click.option("--engine", default="pymunk", show_default=True,
              help="Physics engine, or several comma-separated (one panel each).")
@click.option("--caster", default="jit", show_default=True,
              help="The sonar's ray caster: jit (numba; its kernels load first) or numpy, or "
                   "both comma-separated.")
@click.option("--plot", type=click.Path(),
              help="Draw box plots of the step times into this image (needs matplotlib: pip "
                   "install 'coopsim[plot]').")
@_friendly
def bench_step(counts: str, steps: int, engine: str, caster: str, plot) -> None:
    """Step time against robot count (single robots, sonar every step, dt 0.02 s)."""
    from .bench import bench_steps, cases, format_table, plot_steps

    rows = []
    for eng, kind, n in cases(engine, caster, counts):
        rows.append(bench_steps(n, steps, engine=eng, caster=kind))
        click.echo(f"{eng}, {kind}, {n} robots: median {rows[-1].median:.2f} ms, "
                   f"p95 {rows[-1].p95:.2f} ms", err=True)
    click.echo(format_table(rows))
    if plot:
        plot_steps(rows, plot)
        click.echo(f"figure: {plot}", err=True)


@bench.command("realtime")
@click.option("--robots", "counts", default="10000", show_default=True,
              help="Comma-separated robot counts (one run each).")
@click.option("--seconds", default=20.0, show_default=True, type=click.FloatRange(min=0.02),
              help="Sim time each run lasts, s (as much wall time when real time holds).")
@click.option("--engine", default="kinematic", show_default=True,
              help="Physics engine, or several comma-separated.")
@click.option("--caster", default="jit", show_default=True,
              help="The sonar's ray caster: jit or numpy, or both comma-separated.")
@_friendly
def bench_realtime(counts: str, seconds: float, engine: str, caster: str) -> None:
    """The step benchmark's world run in real time: missed deadlines and real-time factor."""
    from .bench import bench_realtime as run, cases, format_realtime

    rows = []
    for eng, kind, n in cases(engine, caster, counts):
        rows.append(run(n, seconds, engine=eng, caster=kind))
        click.echo(f"{eng}, {kind}, {n} robots: {rows[-1].missed_share:.2%} missed, "
                   f"{rows[-1].rtf:.3f}x real time", err=True)
    click.echo(format_realtime(rows))
