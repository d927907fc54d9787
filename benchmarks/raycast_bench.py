"""Benchmark: batched RayCaster.cast against per-ray pymunk ``segment_query_first``.

Builds the swarm load the ray caster is tuned for: N robots (circles of radius 0.2 m, each in its
own group) spread uniformly in a square arena of side sqrt(N) * 1.5 m, 40 static boxes (160
segments) and 4 boundary walls; every robot fans 11 rays of 2 m from -90 to +90 degrees, starting
on its chassis edge. Reports the median and p95 time of one cast of all rays, for both methods,
and checks they agree.

Usage: python benchmarks/raycast_bench.py [--robots 1000] [--repeat 200] [--cell-size 2.0]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pymunk

from coopsim.raycast.numpycast import RayCaster

RADIUS = 0.2  # m, robot chassis
RANGE = 2.0  # m, sensor range
N_RAYS = 11
N_BOXES = 40


def build_scene(n_robots: int, seed: int = 1):
    """Returns (circles, circle_group, segments, origins, directions, ray_group); world, m."""
    rng = np.random.default_rng(seed)
    side = math.sqrt(n_robots) * 1.5
    centres = rng.uniform(RADIUS, side - RADIUS, (n_robots, 2))
    circles = np.column_stack([centres, np.full(n_robots, RADIUS)])
    group = np.arange(1, n_robots + 1)
    lo = rng.uniform(0, side - 2.0, (N_BOXES, 2))
    hi = lo + rng.uniform(0.3, 2.0, (N_BOXES, 2))
    corners = [lo, np.column_stack([hi[:, 0], lo[:, 1]]), hi, np.column_stack([lo[:, 0], hi[:, 1]])]
    edges = [np.hstack([corners[i], corners[(i + 1) % 4]]) for i in range(4)]
    walls = np.array([[0, 0, side, 0], [side, 0, side, side], [side, side, 0, side],
                      [0, side, 0, 0]])
    segments = np.vstack(edges + [walls])
    heading = rng.uniform(-math.pi, math.pi, n_robots)
    angles = (heading[:, None] + np.linspace(-math.pi / 2, math.pi / 2, N_RAYS)).reshape(-1)
    directions = np.column_stack([np.cos(angles), np.sin(angles)])
    origins = np.repeat(centres, N_RAYS, axis=0) + RADIUS * directions
    return circles, group, segments, origins, directions, np.repeat(group, N_RAYS)


def pymunk_space(circles, group, segments) -> pymunk.Space:
    """A pymunk space holding the scene's shapes on the static body."""
    space = pymunk.Space()
    shapes = []
    for (x, y, r), g in zip(circles.tolist(), group.tolist()):
        shape = pymunk.Circle(space.static_body, r, (x, y))
        shape.filter = pymunk.ShapeFilter(group=g)
        shapes.append(shape)
    shapes += [pymunk.Segment(space.static_body, s[:2], s[2:], 0) for s in segments.tolist()]
    space.add(*shapes)
    return space


def pymunk_cast(space, origins, directions, ray_group) -> np.ndarray:
    """Casts the rays one by one with pymunk; returns distances, m."""
    out = np.full(len(origins), RANGE)
    ends = origins + RANGE * directions
    for i, (a, b, g) in enumerate(zip(origins.tolist(), ends.tolist(), ray_group.tolist())):
        hit = space.segment_query_first(a, b, 0, pymunk.ShapeFilter(group=g))
        if hit is not None:
            out[i] = hit.alpha * RANGE
    return out


def timings(fn, repeat: int) -> np.ndarray:
    """Wall-clock seconds of ``repeat`` calls of fn."""
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=1000, help="robots (default 1000)")
    parser.add_argument("--repeat", type=int, default=200, help="timed casts (default 200)")
    parser.add_argument("--pymunk-repeat", type=int, default=10,
                        help="timed per-ray pymunk passes (default 10)")
    parser.add_argument("--cell-size", type=float, default=2.0, help="grid cell, m (default 2)")
    args = parser.parse_args()

    circles, group, segments, origins, directions, ray_group = build_scene(args.robots)
    caster = RayCaster(args.cell_size)
    caster.set_static(segments=segments)
    space = pymunk_space(circles, group, segments)

    def batched():
        return caster.cast(origins, directions, RANGE, circles, None, ray_group, group)

    def per_ray():
        return pymunk_cast(space, origins, directions, ray_group)

    mine, ref = batched(), per_ray()
    err = np.abs(mine - ref).max()
    t_np, t_pm = timings(batched, args.repeat) * 1e3, timings(per_ray, args.pymunk_repeat) * 1e3

    print(f"{args.robots} robots, {len(origins)} rays, {len(segments)} segments, "
          f"cell {args.cell_size} m; {np.mean(mine < RANGE):.1%} of rays hit; "
          f"max |batched - pymunk| = {err:.2e} m")
    print(f"{'method (one step)':<28}{'median ms':>10}{'p95 ms':>10}{'us/ray':>9}")
    for name, t in (("RayCaster.cast (batched)", t_np), ("pymunk segment_query_first", t_pm)):
        print(f"{name:<28}{np.median(t):>10.2f}{np.percentile(t, 95):>10.2f}"
              f"{np.median(t) * 1e3 / len(origins):>9.3f}")
    ratio = np.median(t_np) / np.median(t_pm)
    print(f"ratio batched / per-ray (medians): {ratio:.3f} ({1 / ratio:.1f}x faster)")
    if err > 1e-6:
        raise SystemExit("batched and pymunk distances disagree by more than 1e-6 m")


if __name__ == "__main__":
    main()
