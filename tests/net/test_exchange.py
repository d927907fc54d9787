"""Protocol 13's exchange (robot command 6): a motion command and reads in one request, over
the real sockets. Its reply carries, bit for bit, what separate reads answer after the same
step; bad requests get their documented codes; a lockstep run driven by exchanges is the run
driven by the two-request loop with the same commands."""

from __future__ import annotations

import hashlib
import os
import random
import struct
import subprocess
import sys

import pytest

from coopsim.client import Client
from coopsim.net import protocol as p

from helpers import box, robot, scenario, target
from nethelpers import ROOT, Lines, Peer, live, lookup

DT = 0.01
READS = (200, 500, 300, 400, 700)  # sonar, gps, target, odometry, bumper: reads of no text


def _world(mode: str = "lockstep", seed: int = 3):
    noisy = [("sonar", "noise", 0.02), ("sonar", "lost", 10.0), ("gps", "noise", 0.01)]
    return scenario(robots=[robot("r1", -0.6, 0.0, params=noisy)],
                    objects=[box("crate", 0.0, 0.0, size=(0.4, 0.4), mass=0.5)],
                    targets=[target("red", 3.0, 0.0)], mode=mode, dt=DT, seed=seed)


def _bits(values) -> bytes:
    return struct.pack(f"<{len(values)}d", *values)


def test_the_exchange_reply_is_what_separate_reads_answer_after_the_same_step():
    with live(_world()) as run:
        endpoint = lookup(run.network.endpoint, "/r1")
        driver, reader = Peer(endpoint), Peer(endpoint)
        for k in range(40):
            err, text, command, params, data = driver.ask(6, params=[100, *READS],
                                                          data=[0.4, 0.3 - 0.01 * k])
            assert (err, text, command) == (0, "lockstep", 6), text
            step, counts = params[0], params[1::2]
            assert params[2::2] == [step] * len(READS), "taken at the step itself (no rate)"
            assert data[0] == pytest.approx(step * DT)
            at = 1
            for cid, n in zip(READS, counts):
                read = reader.ok(cid)  # the run waits for the next exchange: same step
                assert read[3][0] == step
                assert _bits(data[at:at + n]) == _bits(read[4]), cid
                at += n
            assert at == len(data)


def test_an_exchange_in_realtime_answers_at_once_with_the_latest_reads():
    with live(_world("realtime")) as run:
        bot = Peer(lookup(run.network.endpoint, "/r1"))
        err, text, _, params, data = bot.ask(6, params=[100, 600], data=[0.1, 0.1])
        assert (err, text, params[1], len(data)) == (0, "realtime", 1, 2)


@pytest.mark.parametrize("params, data, code, said", [
    ([], [0.1, 0.1], p.WRONG_ARITY, "exchange takes 1 to 17 params"),
    ([100, *([200] * 17)], [0.1, 0.1], p.WRONG_ARITY, "exchange takes 1 to 17 params"),
    ([9999], [], p.UNKNOWN_COMMAND, "params[0]: /r1 has no command 9999"),
    ([100, 4100], [0.1, 0.1], p.UNKNOWN_COMMAND, "params[1]: /r1 has no command 4100"),
    ([200], [], p.OUT_OF_RANGE, "200 is sonar read (kind read)"),
    ([100, 101], [0.1, 0.1], p.OUT_OF_RANGE, "101 is motors set_power, which is of kind motion"),
    ([100, 301], [0.1, 0.1], p.OUT_OF_RANGE, "301 is target read_color, which needs a text"),
    ([1], [], p.OUT_OF_RANGE, "1 is the robot's own modules"),
    ([100, 6], [0.1, 0.1], p.OUT_OF_RANGE, "6 is the robot's own exchange"),
    ([100, 200], [0.1], p.WRONG_ARITY, "set_speeds takes 2 data, got 1"),
    ([100, 200], [0.1, float("nan")], p.OUT_OF_RANGE, "data must be finite"),
])
def test_a_malformed_exchange_gets_its_code_and_moves_nothing(params, data, code, said):
    with live(_world("lockstep")) as run:
        bot = Peer(lookup(run.network.endpoint, "/r1"))
        err, text, command, _, _ = bot.ask(6, params=params, data=data)
        assert (err, command) == (code, 6) and said in text, text
        assert Peer(lookup(run.network.endpoint, "/sim")).ok(1)[3][5] == 0, "nothing attached"


def test_an_exchange_is_the_owners_alone_as_a_motion_command():
    with live(_world("realtime")) as run:
        endpoint = lookup(run.network.endpoint, "/r1")
        owner, other = Peer(endpoint), Peer(endpoint)
        assert owner.ok(6, params=[100, 200], data=[0.1, 0.1])[1] == "realtime"
        err, text, *_ = other.ask(6, params=[100, 200], data=[0.2, 0.2])
        assert err == p.OWNED and "r1 is owned by" in text
        assert other.ok(200)[0] == 0, "reads stay open to everyone"


def _drive(seed: int, one_request: bool) -> tuple[list, str]:
    """A lockstep run driven by a fixed script through the Python client, with the two-request
    loop (read, then set_speeds) or with exchanges; each step's readings, and a digest of
    them and of where everything ended."""
    script, observed = random.Random(99), []
    with live(_world(seed=seed), start=False) as run, Client(run.network.endpoint) as client:
        bot, sim = client.robot("r1"), client.sim()
        bot.motors.set_speeds(0.4, 0.4)  # attaches before the first step; answered "queued"
        run.start()
        assert run.stepper.wait_step(0, 5.0)
        for _ in range(150):
            left, right = script.uniform(-0.2, 0.6), script.uniform(-0.2, 0.6)
            if one_request:
                got = bot.step("motors.set_speeds", left, right, read=("sonar", "gps"))
                observed.append((got.step, list(got.sonar), list(got.gps)))
            else:
                step = bot.motors.set_speeds(left, right).step
                observed.append((step, list(bot.sonar.read()), list(bot.gps.read())))
        ends = (sim.robots(), sim.objects())
    digest = hashlib.sha256(repr((observed, ends)).encode()).hexdigest()
    return observed, digest


def test_a_run_driven_by_exchanges_is_the_run_of_the_two_request_loop_bit_for_bit():
    two, two_digest = _drive(5, one_request=False)
    one, one_digest = _drive(5, one_request=True)
    assert one == two and one_digest == two_digest
    assert [s for s, _, _ in one] == list(range(one[0][0], one[0][0] + 150))
    assert _drive(6, one_request=True)[1] != one_digest, "another seed draws other noise"


@pytest.mark.slow
def test_the_example_controller_steps_once_a_request_in_its_own_process():
    """clients/python/avoid_step.py, a process of its own: one step an iteration, each
    reading taken at the step its reply names."""
    with live(_world()) as run:
        env = dict(os.environ, COOPSIM_NAMESERVER=run.network.endpoint, PYTHONPATH=str(ROOT))
        proc = subprocess.Popen([sys.executable, str(ROOT / "clients/python/avoid_step.py"), "r1",
                                 "--steps", "60", "--print"], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out = Lines(proc)
        code, err = out.finish(120)
        assert code == 0, err
        records = out.records()
        steps = [r["step"] for r in records]
        assert len(records) == 60 and steps == list(range(steps[0], steps[0] + 60))
        assert all(r["taken"] == r["step"] and 0 < r["ahead"] < 3.0 for r in records)
