"""Benchmark: the numba JitRayCaster against the numpy RayCaster, in the same run.

The load is the simulator's sonar sensing on ``coopsim.app.bench.swarm_scenario`` geometry: N robots
(circles of radius 0.2 m, each in its own group) on a 1.5 m grid with jitter, one static
obstacle per 25 robots (boxes as 4 segments, cylinders as circles) and the arena's boundary
boxes. Every robot casts the Sonar's 11 rays from its centre, -90 to +90 degrees, 2.2 m long
(2 m range + the chassis radius; its own chassis skipped by group), as ``modules.Sonar`` does.
The geometry is read from the scenario spec, not from a pymunk world (100,000 robots).

For each robot count it times one ``cast`` of all rays (moving shapes binned in the call, as
every simulation step does): numpy; numba on 1 thread; numba on the default threads; and the
one-kernel ``sonar_distances`` on the default threads. Prints a markdown table of the median and
p95 times with the speed-ups over numpy, and checks that every method gives the same distances.

Usage: python benchmarks/jitcast_bench.py [--robots 1000 10000 100000] [--repeat 30]
"""

from __future__ import annotations

import argparse
import math
import time

import numba
import numpy as np

from coopsim.model import threads as policy
from coopsim.app.bench import swarm_scenario
from coopsim.raycast.jitcast import JitRayCaster, sonar_distances
from coopsim.plugins.modules.sonar import ANGLES as SONAR_ANGLES
from coopsim.raycast.numpycast import RayCaster
from coopsim.plugins.robots.single import CHASSIS_RADIUS
from coopsim.physics.pymunk_engine import WALL_THICKNESS

RANGE = 2.0  # m, the Sonar's default max_range


def _box(cx, cy, length, width, yaw=0.0) -> np.ndarray:
    """(4, 4) edges [x1, y1, x2, y2] of a rectangle centred on (cx, cy), m."""
    c, s = math.cos(yaw), math.sin(yaw)
    pts = [(cx + c * x - s * y, cy + s * x + c * y) for x, y in
           ((-length / 2, -width / 2), (length / 2, -width / 2), (length / 2, width / 2),
            (-length / 2, width / 2))]
    return np.array([[*pts[i], *pts[(i + 1) % 4]] for i in range(4)])


def scene(n: int) -> dict:
    """Static circles and segments, robot circles, groups and poses of swarm_scenario(n)."""
    spec = swarm_scenario(n)
    floor, t = spec.world.floor, WALL_THICKNESS
    hl, hw = floor.length / 2, floor.width / 2
    walls = [_box((l + r) / 2, (b + tp) / 2, r - l, tp - b) for l, b, r, tp in (
        (-hl - t, -hw - t, hl + t, -hw), (-hl - t, hw, hl + t, hw + t),
        (-hl - t, -hw, -hl, hw), (hl, -hw, hl + t, hw))]
    boxes = [_box(o.position[0], o.position[1], o.size[0], o.size[1], o.yaw)
             for o in spec.world.objects if o.shape == "box"]
    cyl = [(o.position[0], o.position[1], o.size[0] / 2) for o in spec.world.objects
           if o.shape != "box"]
    poses = np.array([(r.position[0], r.position[1], r.yaw) for r in spec.robots])
    groups = np.arange(1, n + 1)
    return {"static_circles": np.array(cyl).reshape(-1, 3),
            "static_segments": np.vstack(walls + boxes),
            "robots": np.column_stack([poses[:, :2], np.full(n, CHASSIS_RADIUS)]),
            "groups": groups, "poses": poses}


def rays(sc: dict):
    """The Sonar's rays of every robot: origins, directions, max_range, ray groups."""
    poses, k = sc["poses"], len(SONAR_ANGLES)
    angles = (poses[:, 2:3] + SONAR_ANGLES[None, :]).ravel()
    return (np.repeat(poses[:, :2], k, axis=0), np.column_stack((np.cos(angles),
            np.sin(angles))), RANGE + CHASSIS_RADIUS, np.repeat(sc["groups"], k))


def timings(fn, repeat: int) -> np.ndarray:
    """Wall-clock milliseconds of ``repeat`` calls of fn, after one warm-up call."""
    fn()
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return np.array(out) * 1e3


def bench(n: int, repeat: int) -> list[tuple[str, np.ndarray]]:
    """Times of each method at ``n`` robots; checks that they agree."""
    sc = scene(n)
    o, d, mr, rg = rays(sc)
    casters = {"numpy": RayCaster(), "numba": JitRayCaster()}
    for c in casters.values():
        c.set_static(sc["static_circles"], sc["static_segments"])
    calls = {name: (lambda c=c: c.cast(o, d, mr, sc["robots"], None, rg, sc["groups"]))
             for name, c in casters.items()}
    sonar = (lambda: sonar_distances(casters["numba"], sc["poses"], np.full(n, CHASSIS_RADIUS),
                                     SONAR_ANGLES, np.full(n, RANGE), sc["groups"], sc["robots"],
                                     sc["groups"], None, None))
    ref = calls["numpy"]()
    if not np.array_equal(calls["numba"](), ref):
        raise SystemExit(f"{n} robots: numba and numpy distances differ")
    edge = np.where(ref >= mr, RANGE, ref - CHASSIS_RADIUS).reshape(n, -1)
    if np.abs(sonar() - edge).max() > 1e-9:
        raise SystemExit(f"{n} robots: sonar_distances differs from the cast")
    threads, rep = numba.get_num_threads(), max(3, repeat // (1 + n // 20000))
    out = [("numpy RayCaster", timings(calls["numpy"], rep))]
    numba.set_num_threads(1)
    policy.use(1)  # the kernels set their count from the policy (coopsim/model/threads.py)
    out.append(("JitRayCaster, 1 thread", timings(calls["numba"], rep)))
    numba.set_num_threads(threads)
    policy.use(threads)
    out.append((f"JitRayCaster, {threads} threads", timings(calls["numba"], rep)))
    out.append((f"sonar_distances, {threads} threads", timings(sonar, rep)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--repeat", type=int, default=30,
                        help="timed casts per method (fewer above 20,000 robots)")
    args = parser.parse_args()
    print(f"numba {numba.__version__}, threading layer default, {numba.get_num_threads()} "
          f"threads (NUMBA_NUM_THREADS); 11 Sonar rays of 2.2 m per robot\n")
    print("| robots | method | median ms | p95 ms | speed-up (median) |")
    print("|---:|---|---:|---:|---:|")
    for n in args.robots:
        rows = bench(n, args.repeat)
        base = np.median(rows[0][1])
        for name, t in rows:
            print(f"| {n} | {name} | {np.median(t):.2f} | {np.percentile(t, 95):.2f} | "
                  f"{base / np.median(t):.1f}x |", flush=True)


if __name__ == "__main__":
    main()
