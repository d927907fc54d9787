"""The showcases (docs/usecases.md): each run to its rule's end in lockstep, headless, and what
its controllers and rule cost over stepping the same world without them (was
benchmarks/usecases_bench.py; the capture-the-flag games are studies/game_bench.py)."""

import dataclasses
import time

from .common import SMOKE, Case, alternate, build, root, unit


def _stepper(name: str, bare: bool):
    """A lockstep stepper of ``scenarios/<name>.scenario`` (``bare``: no drivers, no rules)."""
    from coopsim.formats.files import load

    spec = load(str(root() / "scenarios" / f"{name}.scenario"))
    if bare:
        spec = dataclasses.replace(spec, rules=(), robots=tuple(
            dataclasses.replace(r, drivers=()) for r in spec.robots))
    return build(spec, warm=0)


class Showcase(Case):
    """The showcase as written (in-process drivers and its rule) to its rule's end: wall s
    (goal < 60 s each), and over as many steps of the bare world (blocks alternating)."""

    params = (["transport", "formation"],)
    param_names = ("showcase",)
    timeout = 900

    def setup(self, showcase):
        steps = []

        def whole():
            stepper, t0 = _stepper(showcase, False), time.perf_counter()
            while not stepper.sim.rules.ended and not (SMOKE and stepper.snapshot.step >= 5):
                stepper.tick()
            steps.append(stepper.snapshot.step)
            return time.perf_counter() - t0

        def bare():
            stepper, t0 = _stepper(showcase, True), time.perf_counter()
            for _ in range(steps[-1]):
                stepper.tick()
            return time.perf_counter() - t0
        self.wall, self.bare = alternate(whole, bare, 3)

    @unit("s")
    def track_wall_s(self, showcase):
        return self.wall

    @unit("x bare")
    def track_over_bare(self, showcase):
        return self.wall / self.bare
