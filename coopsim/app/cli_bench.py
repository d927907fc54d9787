"""The ``coopsim analyze`` and ``coopsim bench`` command groups (their options and help).

As in cli.py, each body is a call into an app module (analyze.py, bench.py, bench_suite.py);
cli.py adds both groups to the ``coopsim`` command.
"""

from __future__ import annotations

import sys

import click

from .options import friendly, threads_option


@click.group()
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
@friendly
def analyze_tracking(recordings, robot, labels, plot, title) -> None:
    """Tracking error of RECORDINGS: statistics and its cumulative distribution F(d)."""
    from .analyze import tracking_command

    tracking_command(recordings, robot, labels, plot, title)


@click.group()
def bench() -> None:
    """Benchmarks (figures go in docs/performance.md)."""


@bench.command("step")
@click.option("--robots", "counts", default="10,100,500,1000,2000", show_default=True,
              help="Comma-separated robot counts.")
@click.option("--steps", default=100, show_default=True, help="Timed steps per count.")
@click.option("--engine", help="Physics engine, or several comma-separated (one panel "
                                "each); default: the default engine (pymunk: Engine.default).")
@click.option("--plot", type=click.Path(),
              help="Draw box plots of the step times into this image (needs matplotlib: pip "
                   "install 'coopsim[plot]').")
@click.option("--robot-type", metavar="TYPE",
              help="Robot type of the world's robots (default: the reference type, the one "
                   "declaring RobotType.reference).")
@threads_option
@friendly
def bench_step(counts: str, steps: int, engine: str, plot, robot_type,
               threads) -> None:
    """Step time against robot count (the reference robots, sonar every step, dt 0.02 s)."""
    from .bench import bench_step_command

    bench_step_command(counts, steps, engine, "jit", plot, robot_type, threads)


@bench.command("realtime")
@click.option("--robots", "counts", default="10000", show_default=True,
              help="Comma-separated robot counts (one run each).")
@click.option("--seconds", default=20.0, show_default=True, type=click.FloatRange(min=0.02),
              help="Sim time each run lasts, s (as much wall time when real time holds).")
@click.option("--engine", help="Physics engine, or several comma-separated; default: the swarm "
                                "engine (kinematic: the first with the swarm feature).")
@click.option("--robot-type", metavar="TYPE",
              help="Robot type of the world's robots (default: the reference type, the one "
                   "declaring RobotType.reference).")
@threads_option
@friendly
def bench_realtime(counts: str, seconds: float, engine: str, robot_type,
                   threads) -> None:
    """The step benchmark's world run in real time: missed deadlines and real-time factor."""
    from .bench import bench_realtime_command

    bench_realtime_command(counts, seconds, engine, "jit", robot_type, threads)


@bench.command("smoke")
@click.option("--only", metavar="REGEX", help="Only the suite's modules whose name matches.")
@friendly
def bench_smoke(only) -> None:
    """Every case of the suite (benchmarks/suite) once at a tiny size; exit 1 if one fails."""
    from .bench_suite import smoke

    if smoke(only):
        sys.exit(1)


@bench.command("compare")
@click.argument("base")
@click.argument("head")
@click.option("--factor", default=1.1, show_default=True, type=click.FloatRange(min=1.0),
              help="A case is listed as slower when HEAD's CPU time, or its figure where "
                   "that is a time (us, ms, s), exceeds BASE's x FACTOR.")
@click.option("--rounds", default=3, show_default=True, type=click.IntRange(1, 20),
              help="Rounds, each running every case on BASE then on HEAD, a fresh process "
                   "each; the medians are compared.")
@click.option("--bench", "regex", metavar="REGEX",
              help="The suite's cases whose asv name this regex finds, instead of the 10 "
                   "headline cases.")
@friendly
def bench_compare(base: str, head: str, factor: float, rounds: int, regex) -> None:
    """The headline cases of the suite on two commits (or two folders holding coopsim) by CPU
    time, each case in fresh processes alternating between them (benchmarks/README.md); lists
    the cases slower by more than FACTOR and exits 1 if there are any."""
    from .bench_suite import compare

    slower = compare(base, head, factor, rounds, regex)
    click.echo(f"{len(slower)} case(s) slower by more than {factor:g}x or failed"
               + "".join(f"\n{line}" for line in slower))
    if slower:
        sys.exit(1)
