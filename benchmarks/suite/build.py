"""Building worlds and starting up: seconds from a scenario to the first snapshot, peak
memory, a fresh interpreter's start (was benchmarks/build_bench.py, swarmscale_bench.py's
memory figure)."""

import time

from .common import Case, sizes, swarm, unit


class Build(Case):
    """``coopsim bench step``'s world of N robots, kinematic engine, jit caster: seconds
    from the scenario to the first snapshot (``Simulation(...)``)."""

    params = (sizes(1000, 10000, 100000, smoke=2),)
    param_names = ("robots",)

    def setup(self, robots):
        from coopsim.app.bench import make_caster, swarm_scenario

        self.spec, self.caster = swarm_scenario(robots), make_caster("jit")

    @unit("s")
    def track_s(self, robots):
        from coopsim.sim.simulation import Simulation

        t0 = time.perf_counter()
        Simulation(self.spec, engine="kinematic", caster=self.caster)
        return time.perf_counter() - t0


class Memory(Case):
    """The process's peak resident memory over building N robots' world (kinematic, jit
    caster) and 5 ticks, imports included (the goal at 10,000 robots: < 1 GB)."""

    params = (sizes(10000, 100000, smoke=2),)
    param_names = ("robots",)

    def peakmem_world(self, robots):
        swarm(robots, "kinematic", warm=5)


class StartUp(Case):
    """A fresh interpreter importing coopsim and building scenarios/one_robot.scenario, s."""

    def timeraw_one_robot(self):
        return ("from coopsim.formats.files import load_scenario\n"
                "from coopsim.sim.simulation import Simulation\n"
                "from coopsim.model.bundled import BUNDLED\n"
                "Simulation(load_scenario(BUNDLED / 'scenarios' / 'one_robot.scenario'))\n")
