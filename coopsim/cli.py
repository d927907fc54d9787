"""The ``coopsim`` command: parse arguments, call the library, turn known errors into exit 2."""

from __future__ import annotations

import functools
import logging
import os
import sys

import click

from .errors import CoopsimError

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


@click.group()
@click.version_option(package_name="coopsim")
@click.option("-v", "--verbose", is_flag=True, help="Log warnings and info to stderr.")
def main(verbose: bool) -> None:
    """coopsim: a networked multi-robot simulator."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="coopsim: %(message)s")


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
def check(files: tuple[str, ...]) -> None:
    """Validate .world and .scenario FILES without running them."""
    from .files import check as check_files

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
@_friendly
def run(file, headless, mode, dt, duration, seed, speed, port, bind, no_controllers,
        controller_logs, json_port) -> None:
    """Run FILE (.scenario or .world); without FILE, the bundled demo."""
    from .runner import Run, RunOptions, load_scenario_or_world
    from .runview import run_headless

    scenario = load_scenario_or_world(file)
    options = RunOptions(mode=mode, dt=dt, duration=duration, seed=seed, speed=speed, port=port,
                         bind=bind, controllers=not no_controllers, log_dir=controller_logs,
                         json_port=json_port)
    gui = (not headless) if headless is not None else _has_display()
    if gui:
        click.echo("coopsim: the GUI is not available yet; running headless", err=True)
    with Run(scenario, options) as live:
        if live.gateway is not None:
            host, gw_port = live.gateway.address
            click.echo(f"json gateway: {host}:{gw_port}", err=True)
        run_headless(live)


@main.group()
def bench() -> None:
    """Benchmarks (figures go in docs/performance.md)."""


@bench.command("step")
@click.option("--robots", "counts", default="10,100,500,1000,2000", show_default=True,
              help="Comma-separated robot counts.")
@click.option("--steps", default=100, show_default=True, help="Timed steps per count.")
def bench_step(counts: str, steps: int) -> None:
    """Step time against robot count (single robots, sonar every step, dt 0.02 s)."""
    from .bench import bench_steps, format_table

    rows = []
    for n in (int(c) for c in counts.split(",")):
        rows.append(bench_steps(n, steps))
        click.echo(f"{n} robots: median {rows[-1].median:.2f} ms, p95 {rows[-1].p95:.2f} ms",
                   err=True)
    click.echo(format_table(rows))
