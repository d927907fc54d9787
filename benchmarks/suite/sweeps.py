"""Sweeps: ``coopsim sweep`` on a Dask LocalCluster against running the same points directly
in this process (was benchmarks/sweep_bench.py). The load: the AMSA leader/follower rovers
(scenarios/amsa_follow.scenario: two robots, two in-process drivers, one monitor, dt 0.05 s),
30 s of sim time per point."""

import tempfile
import time
from pathlib import Path

from .common import Case, count, root, unit


class Sweep(Case):
    """A sweep of 8 points (the follower's ``kv`` x 8 values, one seed) on a new LocalCluster
    of one single-threaded worker: s per point from submission to the last row (cluster
    start-up apart), and over the same points run directly (``run_point``): what loading,
    scheduling, moving the scenario and writing the row add."""

    timeout = 900

    def setup(self):
        try:
            from coopsim.app import sweep as sw
            from coopsim.app.points import run_point
            from coopsim.formats.sweep import load_sweep
        except ImportError as e:  # the sweep extra (dask.distributed) is not installed
            raise NotImplementedError(str(e))
        points, seconds = count(8, 1), (30.0 if count(2, 1) == 2 else 1.0)
        values = " ".join(str(round(0.05 + 0.05 * i, 2)) for i in range(points))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "bench.sweep"
            path.write_text(f"[SWEEP]\nscenario {root() / 'scenarios' / 'amsa_follow.scenario'}\n"
                            f"seeds 0-0\nduration {seconds}\n"
                            f"[AXIS_1]\nparam follower.driver.kv\nvalues {values}\n")
            out = Path(tmp) / "out.parquet"
            table, tasks = sw.Table(out), sw.plan(load_sweep(path), out, record=False)
            client = sw.connect(None, 1)
            client.wait_for_workers(1)
            try:
                t0 = time.perf_counter()
                sw._gather(client, tasks, table, sw.Progress(len(tasks), 0, lambda text: None))
                table.save()
                self.dask = (time.perf_counter() - t0) / len(tasks)
            finally:
                cluster = client.cluster
                client.close()
                cluster.close()
            assert all(r["status"] == "ok" for r in table.rows.values())
            t0 = time.perf_counter()
            for task in tasks:
                assert run_point(task)["status"] == "ok"
            self.direct = (time.perf_counter() - t0) / len(tasks)

    @unit("s")
    def track_s_per_point(self):
        return self.dask

    @unit("x direct")
    def track_over_direct(self):
        return self.dask / self.direct
