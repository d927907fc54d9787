"""The ``coopsim`` command: parse arguments, call the library, turn known errors into exit 2.

Each command here holds its options and help; its body is a call into an app module
(live.py, recordings.py, sweep.py, bench.py, analyze.py), so this file stays a thin table.
"""

from __future__ import annotations

import logging
import signal
import sys

import click

from .. import __version__
from . import interrupt
from .cli_bench import analyze, bench
from .options import (EXIT_BAD_INPUT, foxglove_options, friendly, keys_options, recording_path,
                      ros2_options, threads_option, token_options,
                      crtp_options)


class _Command(click.Group):
    """The coopsim group: a Ctrl-C (or SIGTERM) that reaches it ends the command with one line
    and exit status 130 (coopsim/app/interrupt.py), never click's "Aborted!" and exit 1."""

    def make_context(self, *args, **kwargs):
        try:
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt:
            interrupt.exit_interrupted()

    def invoke(self, ctx):
        try:
            result = super().invoke(ctx)
        except KeyboardInterrupt:
            interrupt.exit_interrupted()
        except Exception:
            if interrupt.requested():  # raised by what the interrupt cut (an import left
                interrupt.exit_interrupted()  # half done): the interrupt is the news
            raise
        if interrupt.swallowed():  # a signal outside a followed run, caught on its way (a
            interrupt.exit_interrupted()  # command that catches it, a library): 130 all the same
        return result


@click.group(cls=_Command)
@click.version_option(version=__version__, prog_name="coopsim")  # coopsim/__init__.py
@click.option("-v", "--verbose", is_flag=True, help="Log warnings and info to stderr.")
def main(verbose: bool) -> None:
    """coopsim: a networked multi-robot simulator."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="coopsim: %(message)s")
    # SIGTERM (kill, timeout, a service manager) ends a run like Ctrl-C does: controllers are
    # stopped and a recording gets its summary and index.
    signal.signal(signal.SIGTERM, interrupt.on_signal)



def _port_range(ctx, param, value):
    from ..net.ports import parse

    try:
        return None if not value else parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def ports_option(fn):
    """--ports LOW-HIGH ($COOPSIM_PORTS): every port the servers bind taken from a range."""
    return click.option("--ports", metavar="LOW-HIGH", envvar="COOPSIM_PORTS",
                        callback=_port_range,
                        help="Bind every server port (module servers, /sim, streams, robots, "
                             "gateway and Foxglove with port 0, the name server with --port 0) "
                             "in this range, e.g. 20000-20100 for a firewall (default "
                             "$COOPSIM_PORTS, else ports the OS picks).")(fn)

@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
def check(files: tuple[str, ...]) -> None:
    """Validate .world, .scenario and .sweep FILES without running them. A relative FILE that
    is not in the current folder is looked for among the bundled files, as ``run`` does."""
    _checked(files)
    click.echo(f"{len(files)} file(s) OK")


def _checked(files) -> None:
    """Check FILES (a bundled file by its relative name, as ``run`` finds it); exit 2 with
    their errors on stderr."""
    from ..formats.check import check as check_files
    from ..model.bundled import resolve

    errors = check_files([resolve(f) for f in files])
    for line in errors:
        click.echo(line, err=True)
    if errors:
        sys.exit(EXIT_BAD_INPUT)


@main.command(name="list")
@click.argument("scenarios", nargs=-1, type=click.Path())
def list_(scenarios: tuple[str, ...]) -> None:
    """List robot types and modules with their parameters (and the robot types SCENARIOS
    import from description files)."""
    from .listing import describe_registries

    _checked(scenarios)  # loading them registers their imported types
    click.echo(describe_registries())


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
@ports_option
@click.option("--no-controllers", is_flag=True, help="Do not launch the scenario's controllers.")
@click.option("--controller", "controller", multiple=True, metavar="[ROBOT=]COMMAND",
              help="Drive ROBOT (default: the first robot section) with COMMAND, run from the "
                   "current folder, instead of its scenario controller or driver; repeatable. "
                   "A COMMAND starting with a .py file runs under this Python.")
@click.option("--controller-logs", type=click.Path(), help="Folder for controllers' output.")
@click.option("--json-port", type=int,
              help="Also serve the JSON-lines gateway on this TCP port (0 = any free port).")
@click.option("--json-idle-timeout", type=click.FloatRange(0), default=300.0, show_default=True,
              help="Close a gateway connection idle this long, s (0 = never).")
@click.option("--fps", type=click.FloatRange(0.5, 240), default=10.0, show_default=True,
              help="Viewer frames per second (with the GUI).")
@click.option("--record", is_flag=False, flag_value="", default=None, metavar="[PATH]",
              callback=recording_path,
              help="Record the run to PATH (default recordings/<scenario>-<UTC time>.mcap).")
@click.option("--record-every", type=click.IntRange(1), default=1, show_default=True,
              help="Record every N-th step.")
@click.option("--engine", help="Physics engine (coopsim list shows them; default: the "
                               "scenario's [SETTINGS] engine, else pymunk).")
@click.option("--wait-for", type=click.IntRange(0), metavar="N",
              help="Lockstep: the first step waits for N controllers to attach, until 10 s "
                   "after the launched controllers last used CPU (default: the scenario's "
                   "wait_for, else every controller the run launches).")
@click.option("--data-dir", "data_dirs", multiple=True,
              type=click.Path(exists=True, file_okay=False),
              help="Another folder network requests may load from and record into "
                   "(repeatable; see docs/reliability.md).")
@click.option("--allow-python", is_flag=True,
              help="Let /sim load load files naming Python code ([MONITORS] python metrics); "
                   "without it such a file is refused (see docs/reliability.md).")
@threads_option
@keys_options
@token_options
@foxglove_options
@ros2_options
@crtp_options
@friendly
def run(file, **flags) -> None:
    """Run FILE (.scenario or .world); without FILE, the bundled demo. A relative FILE that is
    not in the current folder is looked for among the bundled files (scenarios/ctf.scenario
    works from any folder, also from an installed wheel).

    With the GUI (the default when there is a display) a viewer window is started as a child
    process: closing it ends the run; if it crashes, the run goes on. /sim load and record
    reach only the data folders: FILE's folder, the bundled scenarios/, worlds/, recordings/,
    ./recordings and each --data-dir. FILE and --record PATH are yours and go anywhere.
    """
    from .live import run_command

    run_command(file, **flags)


@main.command()
@click.argument("robot", required=False)
@click.option("--group", metavar="SQUAD", help="Steer squad SQUAD (shared control) instead.")
@click.option("--nameserver", help="Name server endpoint (default $COOPSIM_NAMESERVER or "
                                   "tcp://127.0.0.1:10000).")
@click.option("--speed", type=click.FloatRange(0.01, 20.0), default=0.5, show_default=True,
              help="Top linear speed, m/s (q/z and w/x: x1.1, x0.9).")
@click.option("--turn", type=click.FloatRange(0.01, 20.0), default=1.0, show_default=True,
              help="Top turn rate, rad/s (q/z and e/c: x1.1, x0.9).")
@click.option("--dead-man", type=click.FloatRange(0.05, 60.0), default=0.5, show_default=True,
              help="The server stops the robot when this terminal sends nothing for this long "
                   "(killed, frozen, cut off), s of simulated time (protocol 12).")
@friendly
def teleop(robot, group, nameserver, speed, turn, dead_man) -> None:
    """Drive ROBOT (or steer a squad: --group) from this terminal with teleop_twist_keyboard's
    keys (docs/in-the-loop.md): it is taken from its controller (told with error 13) and given
    back on Ctrl+C or Ctrl+D."""
    from .teleop import teleop_command

    teleop_command(robot, nameserver, speed, turn, group, dead_man)


@main.command()
@click.argument("driver")
@click.argument("robot", required=False)
@click.option("--nameserver", help="Name server endpoint (default $COOPSIM_NAMESERVER or "
                                   "tcp://127.0.0.1:10000).")
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A driver parameter (repeatable); coopsim list shows them.")
@click.option("--steps", type=click.IntRange(1), help="Stop after N iterations.")
@click.option("--seed", type=int, help="Seed of the driver's random generator.")
@friendly
def drive(driver, robot, nameserver, params, steps, seed) -> None:
    """Drive ROBOT over the network with the registered DRIVER.

    The same class a scenario hosts in-process with 'driver DRIVER' runs here as a controller
    process speaking the protocol. ROBOT defaults to $COOPSIM_ROBOT or robot1.
    """
    from .live import drive_command

    drive_command(driver, robot, nameserver, params, steps, seed)


@main.command()
@click.argument("endpoint", required=False)
@click.option("--fps", type=click.FloatRange(0.5, 240), default=10.0, show_default=True,
              help="Frames per second (CoopDynSim renders at 10).")
@click.option("--keys", type=click.Path(), metavar="DIR",
              help="CurveZMQ client folder (server.key, client.key_secret) for a run started "
                   "with --keys (default: $COOPSIM_SERVER_KEY and $COOPSIM_CLIENT_KEY).")
@friendly
def view(endpoint, fps, keys) -> None:
    """Show a running simulation or replay in a window.

    ENDPOINT is its name server: tcp://HOST:PORT, HOST:PORT or a port on this machine (default
    $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000). The window keeps trying while the simulation
    is away and reconnects when it comes back.
    """
    from .live import view_command

    view_command(endpoint, fps, keys)


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
@token_options
@friendly
def gateway(endpoint, json_port, bind, idle_timeout, keys, json_token, json_token_file) -> None:
    """Serve the JSON-lines gateway in front of a running simulation or replay.

    ENDPOINT is its name server (default $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000).
    """
    from .live import gateway_command

    gateway_command(endpoint, json_port, bind, idle_timeout, keys, json_token, json_token_file)


@main.command()
@click.argument("file", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@friendly
def info(file, as_json) -> None:
    """Describe a recording: duration, steps, robots, size, scenario; every chunk is read, and
    damaged ones are listed (exit status 2). A relative FILE that is not in the current folder
    is looked for among the bundled files, as ``run`` and ``replay`` do."""
    from ..model.bundled import resolve
    from .recordings import info_command

    info_command(resolve(file), as_json)


@main.command()
@click.argument("file", type=click.Path())
@click.option("-o", "--output", type=click.Path(),
              help="Write the repaired recording to this new file (default: replace FILE once "
                   "the repaired copy is complete).")
@friendly
def repair(file, output) -> None:
    """Write the summary and index a killed recording lacks, so every MCAP reader opens it.

    Every complete chunk is kept; what the crash cut off is left out.
    """
    from .recordings import repair_command

    repair_command(file, output)


@main.command()
@click.argument("file", type=click.Path())
@click.option("--csv", "out", type=click.Path(), help="Output CSV file ('-' for stdout).")
@click.option("--metrics-csv", "metrics_out", type=click.Path(),
              help="Every rule's metrics, one row per recorded step: time, step, sim_time, "
                   "then one column per metric (RULE.NAME) in the order they first appear, empty "
                   "where null ('-' for stdout; default: beside the CSV as "
                   "NAME.metrics.csv when the recording has metrics).")
@click.option("--feedback-csv", "feedback_out", type=click.Path(),
              help="Shared control's feedback, one row per squad per recorded step: time "
                   "(recording time, s), squad, then the recording's 22 feedback values, its "
                   "time named sim_time ('-' for stdout; default: beside the CSV as "
                   "NAME.feedback.csv when the recording has it).")
@click.option("--foxglove", "fox_out", type=click.Path(), metavar="OUT.mcap",
              help="Write an MCAP with Foxglove's schemas (scene, transforms, poses, state, "
                   "metrics, events) that opens in Foxglove as is, and a Foxglove layout "
                   "OUT.layout.json (needs pip install 'coopsim[foxglove]').")
@click.option("--ros2", "ros2_out", type=click.Path(), metavar="OUT",
              help="Write a ROS 2 bag: the folder OUT with OUT_0.mcap (ros2msg schemas, CDR) "
                   "and metadata.yaml, topics as coopsim run --ros2 publishes them, in sim "
                   "time (docs/ros2.md).")
@friendly
def export(file, out, metrics_out, feedback_out, fox_out, ros2_out) -> None:
    """Export a recording: one CSV row per robot per recorded step (and its metrics) with
    --csv; a Foxglove-ready MCAP with --foxglove; a ROS 2 bag with --ros2 (any of them
    together). A relative FILE that is not in the current folder is looked for among the
    bundled files, as ``run`` and ``replay`` do."""
    from ..model.bundled import resolve
    from .recordings import export_command

    export_command(resolve(file), out, metrics_out, fox_out, ros2_out, feedback_out)


@main.command()
@click.argument("file", type=click.Path())
@click.option("--out", type=click.Path(), help="Folder for the PNGs (default: FILE's name "
                                               "with -plots, beside it; in the current folder "
                                               "for a bundled FILE).")
@click.option("--robot", "robots", multiple=True, metavar="NAME",
              help="Plot this robot's speed and wheel commands (repeatable; default: the "
                   "first 12).")
@friendly
def plot(file, out, robots) -> None:
    """PNGs of a recording: trajectories over the floor plan, speed and wheel commands against
    time per robot, every rule's metrics against time, altitude against time in a 3D world's
    recording (needs matplotlib). A relative FILE that is not in the current folder is looked
    for among the bundled files, as ``run`` and ``replay`` do."""
    from ..model.bundled import resolve_outputs
    from .recordings import plot_command, plots_folder

    found, here = resolve_outputs(file)
    if out is None and here is not None:  # a bundled recording: its plots in this folder
        out = plots_folder(here)
    plot_command(found, out, robots)


@main.command()
@click.argument("file", type=click.Path())
@click.option("--headless/--gui", default=None,
              help="Without a window (default when there is no display) or with the viewer.")
@click.option("--port", type=int, default=10000, show_default=True,
              help="Name server port (0 = any free port).")
@click.option("--bind", default="127.0.0.1", show_default=True, help="Address servers bind.")
@ports_option
@click.option("--speed", type=float, default=1.0, show_default=True,
              help="Playback speed factor (negative plays backwards).")
@click.option("--start", type=float, help="Position to start at, s.")
@click.option("--paused", is_flag=True, help="Start paused.")
@click.option("--exit-at-end", is_flag=True,
              help="Exit when the playback reaches the end (exit status 2 when it stops at a "
                   "damaged chunk).")
@click.option("--fps", type=click.FloatRange(0.5, 240), default=10.0, show_default=True,
              help="Viewer frames per second (with the GUI).")
@keys_options
@foxglove_options
@friendly
def replay(file, headless, fps, foxglove, foxglove_rate, **settings) -> None:
    """Play a recording back on the network, as a live run would appear."""
    from .live import replay_command

    replay_command(file, headless, fps, foxglove, foxglove_rate, **settings)


@main.command()
@friendly
def warmup() -> None:
    """Compile every kernel into numba's disk cache now (a run otherwise compiles what it needs
    on first use, once after an install or an update, saying so on one line)."""
    from .warmup import warmup as compile_all

    compile_all()


@main.command()
@click.argument("nameserver", required=False)
@click.option("--gateway", metavar="HOST:PORT",
              help="Send the transcripts through this JSON-lines gateway instead.")
@click.option("--client", metavar="CMD",
              help="Send them through this client's transcript runner (a command reading "
                   "request lines on stdin, docs/protocol.md section 10).")
@click.option("--only", multiple=True, metavar="NAME",
              help="Run only this transcript (e.g. 02_robot; repeatable).")
@click.option("--transcripts", type=click.Path(exists=True, file_okay=False), metavar="DIR",
              help="Run the transcripts of DIR instead of the bundled ones.")
@click.option("--offer", multiple=True, metavar="FEATURE",
              help="Declare what the server offers beyond what is probed (idle_timeout: a "
                   "gateway started with --idle-timeout 1).")
@click.option("--keys", type=click.Path(), metavar="DIR",
              help="CurveZMQ client folder, for a server started with --keys.")
@click.option("-v", "--verbose", is_flag=True, help="Also list the steps skipped, and why.")
@click.option("--timeout", type=click.FloatRange(0.1), default=30.0, show_default=True,
              help="Seconds a reply may take before its step fails.")
@click.option("--scenario", is_flag=True,
              help="Print the path of the conformance scenario to run the server on, and exit.")
@click.option("--flight-scenario", is_flag=True,
              help="Print the path of the 3D scenario (a Crazyflie and an IRB 120 arm on the "
                   "mujoco engine) the 08_flight and 09_arms transcripts run against, and exit.")
@friendly
def conformance(nameserver, gateway, client, only, transcripts, offer, keys, verbose, timeout,
                scenario, flight_scenario) -> None:
    """Check a running server against the protocol's conformance transcripts.

    NAMESERVER is its name server (default $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000).
    Exit 0: all passed; 1: failures (listed); 2: cannot connect.
    """
    from .conformance import conformance_command

    conformance_command(nameserver, gateway, client, only, keys, verbose,
                        "3d" if flight_scenario else scenario, timeout, transcripts, offer)


@main.command()
@click.argument("folder", required=False, default="coopsim-keys", type=click.Path())
@click.option("--client", "clients", multiple=True, metavar="NAME",
              help="Add a client key pair NAME (repeatable; default for a new folder: client).")
@friendly
def keys(folder, clients) -> None:
    """Make CurveZMQ keys in FOLDER (default ./coopsim-keys): the servers' key pair and client
    key pairs. Serve with --keys FOLDER; give FOLDER/clients/NAME to client NAME."""
    from ..net.security import create_keys

    for line in create_keys(folder, tuple(clients)):
        click.echo(line)


@main.command()
@click.argument("file", type=click.Path())
@click.option("--out", type=click.Path(), help="Results table (Parquet; default: FILE with "
                                               ".parquet beside it, in the current folder for "
                                               "a bundled FILE). Re-running resumes it.")
@click.option("--scheduler", metavar="tcp://HOST:PORT",
              help="Run on this existing Dask cluster (`dask scheduler`, `dask worker "
                   "ADDRESS`), whose workers have coopsim installed (and the modules of any "
                   "`python` metric); default: a LocalCluster on this machine. Unreachable, "
                   "or not a Dask scheduler (no scheduler's answer to Dask's hello within 6 s, "
                   "e.g. an HTTP server): one line and exit 2 within 10 s; a malformed address "
                   "(not `[tcp://]HOST:PORT`): one line and exit 2 at once, before anything "
                   "is loaded.")
@click.option("--workers", type=click.IntRange(1), help="Without --scheduler: a LocalCluster "
                                                        "of N single-threaded worker processes "
                                                        "(default: one per core).")
@click.option("--csv", "csv_out", is_flag=False, flag_value="", default=None, metavar="[PATH]",
              help="Also write the table as CSV (default path: OUT with .csv).")
@click.option("--record", is_flag=True, help="Keep every run's MCAP recording in "
                                             "OUT-recordings/KEY-seedS.mcap (on the worker's "
                                             "disk; the row's `recording` names it).")
@click.option("--plot", is_flag=True, help="PNG plots in OUT-plots/: for each kept metric and "
                                           "each axis, a panel per statistic (max, mean, final, "
                                           "max_after) with a box of the values at each axis "
                                           "value (the spread over the seeds and the other "
                                           "axes) and the medians joined.")
@friendly
def sweep(file, out, scheduler, workers, csv_out, record, plot) -> None:
    """Run a .sweep FILE: every point and seed headless, one Dask task each, into a table.

    Exit status: 0 when every point ran, 1 when some failed (the last line says how many;
    their rows hold the error), 2 for a bad file or an unreachable scheduler, 130 on Ctrl-C
    (finished points are kept: run again to resume). A relative FILE that is not in the
    current folder is looked for among the bundled files, as ``run`` does.
    """
    from ..model.bundled import resolve_outputs
    from .sweep import default_out, sweep_command

    found, here = resolve_outputs(file)
    if out is None and here is not None:  # a bundled sweep: its table in this folder
        out = str(default_out(here))
    sweep_command(found, out, scheduler, workers, csv_out, record, plot)


main.add_command(analyze)
main.add_command(bench)
