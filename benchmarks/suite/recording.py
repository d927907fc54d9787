"""Recording: what the recorder costs a step and writes per robot-step, a seek in a recording,
and the damage check every reader makes (was benchmarks/recording_bench.py and
damage_check_bench.py)."""

import tempfile
import time
from pathlib import Path

from .common import Case, alternate, count, per_call_ms, record, sizes, swarm, tick_ms, unit


class Overhead(Case):
    """N driving robots of the reference type (dt 0.02 s, unpaced ticks): a tick with the
    recorder's hook in over one without (blocks alternate; the writer thread drains between
    them), and the file's bytes per robot per recorded step."""

    params = (sizes(100, smoke=2),)
    param_names = ("robots",)

    def setup(self, robots):
        from coopsim.recording.writer import Recorder

        self.tmp = tempfile.TemporaryDirectory()
        path = Path(self.tmp.name) / "overhead.mcap"
        stepper = swarm(robots)
        sim = stepper.sim
        rec = Recorder(path, sim.scenario, sim.scenario.settings, sim.seed, sim.dt)
        rec.attach(stepper)
        stepper.hooks.remove(rec)

        def recorded():
            stepper.hooks.append(rec)
            ms = tick_ms(stepper, 100, blocks=1)
            stepper.hooks.remove(rec)
            time.sleep(0.2)  # the writer drains outside the plain blocks
            return ms
        plain, with_rec = alternate(lambda: tick_ms(stepper, 100, blocks=1), recorded)
        self.ratio = with_rec / plain
        rec.close()
        self.bytes = path.stat().st_size / robots / max(rec.frames, 1)

    def teardown(self, robots):
        self.tmp.cleanup()

    @unit("x step")
    def track_ratio(self, robots):
        return self.ratio

    @unit("bytes/robot-step")
    def track_bytes_per_robot_step(self, robots):
        return self.bytes


class Read(Case):
    """A recording of 100 driving robots (5,000 steps, 100 s at 50 Hz): a random seek on a
    freshly opened file (``Recording.frame_at``, ms), and the damage check (every chunk's CRC
    and structure, ``Recording.check``) over decoding every step (docs/recording-format.md,
    section 7)."""

    def setup(self):
        from coopsim.recording.reader import Recording

        self.tmp = tempfile.TemporaryDirectory()
        self.path = Path(self.tmp.name) / "read.mcap"
        record(self.path, count(100, 2), count(5000, 20))
        self.rec = Recording(self.path)

    def teardown(self):
        self.rec.close()
        self.tmp.cleanup()

    @unit("ms")
    def track_seek_ms(self):
        import numpy as np

        times = iter(np.random.default_rng(2).uniform(self.rec.start, self.rec.end, 10**5))
        return per_call_ms(lambda: self.rec.frame_at(float(next(times))), 20)

    @unit("x decode")
    def track_check_over_decode(self):
        from coopsim.recording.reader import Recording

        def check():
            with Recording(self.path) as rec:
                assert rec.check() == ()

        def decode():
            with Recording(self.path) as rec:
                assert sum(1 for _ in rec.iter_frames()) == rec.frame_count
        checked, decoded = alternate(lambda: per_call_ms(check, 1, 1),
                                     lambda: per_call_ms(decode, 1, 1))
        return checked / decoded
