"""``coopsim sweep``: run every point of a ``.sweep`` file as one Dask task, into a Parquet
table (docs/sweeps.md).

Points run on a ``distributed.LocalCluster`` sized to the machine, or on an existing cluster
(``--scheduler tcp://HOST:PORT``). Each finished point is one row; the table is rewritten
(atomically) every few seconds and at the end, so a sweep stopped by Ctrl-C or a lost worker
resumes: a point whose key (a hash of its canonical description: the scenario's and world's
text, the axis values, seed and duration; docs/sweeps.md) already has a row with status ``ok``
is not run again.

Dask, pyarrow and matplotlib are an optional extra (``pip install 'coopsim[experiments]'``):
nothing else in coopsim imports this module.
"""

from __future__ import annotations

import logging
import math
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import Callable

import click

from ..model.bundled import install_hint
from ..model.errors import CoopsimError
from .points import PointTask, point_key, resolve, run_point

INSTALL = install_hint("experiments")
SAVE_EVERY = 2.0  # s of wall time between rewrites of the table while points come in
BAR = 24  # characters of the progress bar
CONNECT_TIMEOUT = 6.0  # s to reach a --scheduler and hear it answer before saying it is unreachable


def check_dependencies(plot: bool = False) -> None:
    """Raise CoopsimError naming the pip command when Dask or pyarrow (or, with ``plot``,
    matplotlib) is missing."""
    names = ["dask", "distributed", "pyarrow"] + (["matplotlib"] if plot else [])
    missing = []
    for name in names:
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise CoopsimError(f"coopsim sweep needs {', '.join(missing)}: {INSTALL}")


def default_out(sweep_path: str) -> Path:
    """``name.parquet`` beside ``name.sweep``."""
    return Path(sweep_path).with_suffix(".parquet")


def plan(spec, out: Path, record: bool) -> list[PointTask]:
    """Every (point, seed) of the sweep as a task, in order."""
    tasks = []
    folder = out.with_name(out.stem + "-recordings")
    for values in spec.points():
        scenario = resolve(spec.scenario, spec.axes, values)
        duration = float(values.get("setting.duration", spec.duration))
        for seed in spec.seeds:
            key = point_key(spec.scenario, seed, duration, values)
            path = str(folder / f"{key[:12]}-seed{seed}.mcap") if record else ""
            tasks.append(PointTask(key, values, scenario, seed, duration, spec.metrics, path))
    return tasks


class Table:
    """The results: rows by key, read from and written to one Parquet file."""

    def __init__(self, path: Path) -> None:
        import pyarrow.parquet as pq

        self.path = path
        self.rows: dict[str, dict] = {}
        if path.exists():
            try:
                rows = pq.read_table(path).to_pylist()
            except Exception as exc:  # noqa: BLE001 -- a damaged table must not be overwritten
                raise CoopsimError(f"{path}: cannot read the results table ({exc}); move it "
                                   "away to start over") from None
            self.rows = {r["key"]: r for r in rows}
        self._saved = time.monotonic()

    def done(self, key: str) -> bool:
        """True when ``key`` has a row with status ok."""
        return self.rows.get(key, {}).get("status") == "ok"

    def add(self, row: dict) -> None:
        """Keep ``row`` (replacing an earlier one of its key) and save when it is time."""
        self.rows[row["key"]] = row
        if time.monotonic() - self._saved >= SAVE_EVERY:
            self.save()

    def columns(self) -> list[str]:
        """Every column, in the order first seen."""
        names: dict[str, None] = {}
        for row in self.rows.values():
            names.update(dict.fromkeys(row))
        return list(names)

    def save(self) -> None:
        """Write the table atomically (a temporary file renamed over the old one)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        names = self.columns()
        table = pa.Table.from_pylist([{n: r.get(n) for n in names} for r in self.rows.values()])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, self.path)
        self._saved = time.monotonic()

    def write_csv(self, path: Path) -> None:
        """The same rows as CSV (one header line)."""
        import csv

        names = self.columns()
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(names)
            for row in self.rows.values():
                writer.writerow(["" if _missing(row.get(n)) else row.get(n) for n in names])


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def check_scheduler(scheduler: str | None) -> None:
    """Refuse at once a ``--scheduler`` that is not ``[tcp://|tls://]HOST:PORT``.

    Raises:
        CoopsimError: one line saying what is wrong.
    """
    if scheduler is None:
        return
    match = _ADDRESS.fullmatch(scheduler)
    if match is None or not 0 < int(match.group("port")) < 65536:
        raise CoopsimError(f"--scheduler {scheduler!r} is not a Dask scheduler address: give "
                           "tcp://HOST:PORT (PORT a number from 1 to 65535)")


_ADDRESS = re.compile(r"(?:(?:tcp|tls)://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)"
                      r":(?P<port>[0-9]{1,5})")


def _probe(scheduler: str) -> None:
    """Say hello to ``scheduler`` and check a Dask scheduler answers, all within
    ``CONNECT_TIMEOUT`` s (Dask's own client waits forever on a server that accepts the
    connection but never answers its handshake, such as an HTTP server).

    Raises:
        CoopsimError: nothing answered in time, or something that is not a scheduler did.
    """
    import asyncio

    from distributed.comm import connect as dask_connect

    async def hello():
        comm = await dask_connect(scheduler, timeout=CONNECT_TIMEOUT)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    try:
        reply = asyncio.run(asyncio.wait_for(hello(), CONNECT_TIMEOUT))
    except (OSError, asyncio.TimeoutError, TimeoutError) as exc:
        raise CoopsimError(f"cannot reach the Dask scheduler at {scheduler} within "
                           f"{CONNECT_TIMEOUT:g} s ({type(exc).__name__})") from None
    except Exception as exc:  # noqa: BLE001 -- whatever a stranger answers with
        reply = exc
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise CoopsimError(f"{scheduler} is not a Dask scheduler (it did not answer as one); "
                           "start one with 'dask scheduler'")


def connect(scheduler: str | None, workers: int | None):
    """A Dask client: on the scheduler at ``scheduler``, or on a new LocalCluster of
    ``workers`` single-threaded worker processes (default: one per core)."""
    from distributed import Client, LocalCluster

    if not logging.getLogger().isEnabledFor(logging.INFO):  # coopsim -v shows Dask's chatter
        for name in ("distributed", "dask", "tornado", "bokeh", "asyncio"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    if scheduler:
        _probe(scheduler)
        try:
            return Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise CoopsimError(f"cannot reach the Dask scheduler at {scheduler} within "
                               f"{CONNECT_TIMEOUT:g} s ({type(exc).__name__})") from None
    # the workers start with SIGINT ignored (an ignored signal stays ignored in a child): a
    # Ctrl-C at the terminal reaches the whole process group, and the workers would each print
    # a KeyboardInterrupt traceback under the friendly message; this process stops them itself
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    # a worker per core: each runs its kernels on one thread (coopsim.model.threads), or the
    # workers' threads would queue for the same cores (the workers inherit the environment)
    os.environ.setdefault("COOPSIM_THREADS", "1")
    try:
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                               processes=True, dashboard_address=":0",
                               silence_logs=logging.CRITICAL)
    finally:
        signal.signal(signal.SIGINT, previous)
    return Client(cluster, set_as_default=False)


class Progress:
    """The progress line on stderr: points done, failed, skipped, and the ETA."""

    def __init__(self, total: int, skipped: int, echo: Callable[[str], None]) -> None:
        self.total, self.skipped, self.echo = total, skipped, echo
        self.done = self.failed = 0
        self.start = time.monotonic()

    def update(self, ok: bool) -> None:
        self.done += 1
        self.failed += not ok
        self.show()

    def show(self) -> None:
        left = self.total - self.skipped - self.done
        rate = self.done / max(time.monotonic() - self.start, 1e-9)
        eta = "-" if not self.done else _clock(left / rate)
        filled = round(BAR * (self.done + self.skipped) / max(self.total, 1))
        self.echo(f"\rsweep [{'#' * filled}{'.' * (BAR - filled)}] {self.done + self.skipped}"
                  f"/{self.total} points done ({self.skipped} from before), {self.failed} "
                  f"failed, ETA {eta}   ")


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def run_sweep(spec, out: Path, scheduler: str | None = None, workers: int | None = None,
              record: bool = False, echo: Callable[[str], None] = print) -> tuple[int, int]:
    """Run every point of ``spec`` not already done in ``out``; return (run, failed).

    Raises:
        CoopsimError: the scheduler cannot be reached, or the table cannot be read.
        KeyboardInterrupt: after saving every finished point.
    """
    table = Table(out)
    tasks = plan(spec, out, record)
    todo = [t for t in tasks if not table.done(t.key)]
    progress = Progress(len(tasks), len(tasks) - len(todo), echo)
    if not todo:
        progress.show()
        return 0, 0
    if record:
        out.with_name(out.stem + "-recordings").mkdir(parents=True, exist_ok=True)
    client = connect(scheduler, workers)
    try:
        progress.show()
        _gather(client, todo, table, progress)
    finally:
        echo("\n")  # first: a Ctrl-C while the cluster closes must not print on the bar's line
        table.save()
        cluster = client.cluster
        client.close()
        if cluster is not None:
            cluster.close()
    return progress.done, progress.failed


def _gather(client, todo: list[PointTask], table: Table, progress: Progress) -> None:
    """Submit every task and keep each row as it comes (a lost task becomes a failed row)."""
    from distributed import as_completed

    futures = {client.submit(run_point, task, pure=False,
                             key=f"point-{task.key}-{time.time_ns()}"): task for task in todo}
    for future in as_completed(list(futures), loop=client.loop):
        task = futures[future]
        try:
            row = future.result()
        except Exception as exc:  # noqa: BLE001 -- a worker lost for good, a bad pickle
            row = {"key": task.key, **task.values, "seed": task.seed, "status": "error",
                   "error": f"{type(exc).__name__}: {exc}"}
        table.add(row)
        progress.update(row["status"] == "ok")


def sweep_command(file: str, out: str | None, scheduler: str | None, workers: int | None,
                  csv_out: str | None, record: bool, plot: bool) -> None:
    """``coopsim sweep``: run FILE into its table, then its CSV and plots when asked.

    Exits 1 when some point failed, 130 on Ctrl-C (finished points kept).
    """
    check_scheduler(scheduler)
    check_dependencies(plot)
    from ..formats.sweep import load_sweep

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
