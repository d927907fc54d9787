"""Shared control over real sockets: a person steers a squad of three quadrotors by its velocity
on /squads (steer, 4), reads its feedback force (feedback, 5) every step; the squad flies in
formation, slows before a pillar and is pushed back by it (the force points away from it);
a steer lapses after the driver's hold; errors 3, 4, 5 and 16 for bad steers (one paused run
on the aerial engine, stepped by hand); a robot it can neither fly nor drive is named."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from coopsim.client import Client, RemoteError
from coopsim.client.squads import Squads
from coopsim.formats.files import load

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nethelpers import live, wait_until  # noqa: E402

WORLD = """[FLOOR]
size 8 4 0.1

[WALL_1]
type cylinder
size 0.4 0.4 2.5
position 1.2 0 1.25
"""

ROBOTS = "".join(f"""
[ROBOT_{k}]
type crazyflie
name {name}
position {x} {y} 0
driver {driver}
""" for k, (name, x, y, driver) in enumerate((
    ("cf1", -1.5, -0.6, "shared height 1"), ("cf2", -1.5, 0.0, "shared height 1"),
    ("cf3", -1.5, 0.6, "shared height 1"), ("solo", -3.0, 1.5, "flight shape hover")), 1))

SCENARIO = f"""[WORLD]
file shared.world
{ROBOTS}
[SQUAD_1]
name flock
robots cf1 cf2 cf3
formation line
spacing 0.6

[SQUAD_2]
name idle
robots solo

[SETTINGS]
engine aerial
dt 0.004
seed 3
"""
PILLAR = np.array([1.2, 0.0])


@pytest.fixture(scope="module")
def person(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shared")
    (folder / "shared.world").write_text(WORLD)
    (folder / "shared.scenario").write_text(SCENARIO)
    with live(load(folder / "shared.scenario"), paused=True) as run, \
            Client(run.network.endpoint) as client:
        yield client, Squads(client)


def fly(client, squads, seconds: float, v=None) -> list:
    """Step the run ``seconds`` of sim time, steering ``v`` every 0.1 s (as a hand does); the
    feedback after each tenth, and the members' positions."""
    out = []
    for _ in range(round(seconds / 0.1)):
        if v is not None:
            squads.steer("flock", *v)
        client.sim().step(25)
        out.append((squads.feedback("flock"), np.array(
            [client.robot(n).mocap.read()[:3] for n in ("cf1", "cf2", "cf3")])))
    return out


def test_a_bad_steer_is_refused_with_its_code(person):
    client, squads = person
    client.sim().step(1)  # answered after 8 s at most: under load the step may come later
    wait_until(lambda: not squads_error(squads, "flock"))  # the driver has taken a step
    for args, code in ((("nobody", 0.1, 0.0), 5), (("idle", 0.1, 0.0), 16),
                       (("flock", 60.0, 0.0), 4), (("flock", 0.0, 0.0, 0.0, 11.0), 4)):
        with pytest.raises(RemoteError) as err:
            squads.steer(*args)
        assert err.value.code == code, err.value.text
    for name, code in (("idle", 16), ("nobody", 5)):
        with pytest.raises(RemoteError) as err:
            squads.feedback(name)
        assert err.value.code == code
    assert "not under shared control" in squads_error(squads, "idle")
    with pytest.raises(RemoteError) as err:  # one number is not a velocity
        client.request(squads.endpoint, 4, "flock", data=(0.5,))
    assert err.value.code == 3


def squads_error(squads, name) -> str:
    try:
        squads.feedback(name)
    except RemoteError as exc:
        return exc.text
    return ""


@pytest.mark.slow
def test_the_person_steers_the_squad_in_formation_and_feels_the_pillar(person):
    client, squads = person
    rows = fly(client, squads, 2.5)  # take off; nobody steers
    fb, pos = rows[-1]
    assert fb.seq == 0 and fb.step == client.sim().status()["step"] - 1
    assert pos[:, 2] == pytest.approx([1.0] * 3, abs=0.1)
    assert np.linalg.norm(fb.force) == 0.0  # nothing near: no force
    start = np.array(fb.centre)
    rows += fly(client, squads, 2.0, (0.5, 0.0, 0.0))
    fb, pos = rows[-1]
    assert fb.seq > 0 and fb.velocity[0] == pytest.approx(0.5, abs=0.15)
    assert np.array(fb.centre)[0] - start[0] > 0.6  # forward, along the person's x
    spread = np.diff(pos[np.argsort(pos[:, 1]), 1])
    assert spread == pytest.approx([0.6, 0.6], abs=0.1)  # still abreast, 0.6 m apart
    rows += fly(client, squads, 4.0, (0.5, 0.0, 0.0))
    clearance = min(np.linalg.norm(p[:, :2] - PILLAR, axis=1).min() - 0.2 for _, p in rows)
    assert clearance > 0.1  # around the pillar, never into it
    pushed = [f for f, _ in rows if np.linalg.norm(f.force) > 0.1]
    assert pushed and all(f.force[0] < 0 for f in pushed)  # the pillar pushes back, in -x
    assert all(f.force == pytest.approx(np.add(f.obstacles, f.neighbours)) for f in pushed)


@pytest.mark.slow
def test_a_steer_lapses_after_the_hold_and_the_squad_stops(person):
    client, squads = person
    steered, _ = fly(client, squads, 0.8, (0.0, 0.4, 0.0))[-1]
    assert steered.seq > 0 and steered.velocity[1] > 0.25
    rows = fly(client, squads, 2.0)  # the hand lets go: 0.5 s later the command lapses
    fb, _ = rows[-1]
    # sideways no more (the pillar behind still pushes it along x)
    assert fb.seq == 0 and abs(fb.velocity[1]) < 0.05


def test_a_flood_of_steers_is_coalesced_and_the_latest_wins(person):
    client, squads = person
    client.sim().step(1)  # the driver's first step (when this test runs alone)
    seqs = [squads.steer("flock", 0.001 * k, 0.0)[0] for k in range(300)]
    assert seqs == list(range(seqs[0], seqs[0] + 300))
    client.sim().step(2)  # on the board after one step, in the set points of the next
    fb = squads.feedback("flock")
    assert fb.seq == seqs[-1]  # the run took the last one
    assert client.sim().status()["step"] == fb.step + 1  # and went on as ever
    state = client.sim().state()["squad_orders"]
    assert state["steers"] >= 300 and set(state["steered"]) == {"flock"}
    assert state["steered"]["flock"]["seq"] == seqs[-1]
    # one steer a step ahead: the next step's feedback still carries the one before it
    previous = squads.steer("flock", 0.0, 0.0)[0]
    client.sim().step(1)
    assert squads.feedback("flock").seq == seqs[-1]
    client.sim().step(1)
    assert squads.feedback("flock").seq == previous


def test_a_robot_it_cannot_steer_is_named_by_the_driver():
    from coopsim.model.errors import SimulationError
    from coopsim.plugins.drivers.shared import _kind

    assert [_kind(m, "r") for m in (("rotors", "imu", "mocap", "motors"), ("velocity", "gps"),
                                     ("motors", "sonar"))] == ["fly", "planar", "wheels"]
    with pytest.raises(SimulationError) as err:  # an arm: no drive the driver knows
        _kind(("joints", "tool", "gripper"), "r1")
    assert "robot r1 has no rotors, imu, mocap module, nor velocity or motors" in \
        str(err.value)


def test_one_connection_steers_a_squad_at_a_time(person):
    """The first connection steering a squad owns its steering; another's
    steer and release are error 11 naming it, until it releases it or its connection closes."""
    client, squads = person
    squads.steer("flock", 0.0, 0.0)  # this connection steers it
    with Client(client.nameserver) as other_client:
        other = Squads(other_client)
        for call in (lambda: other.steer("flock", -0.3, 0.0), lambda: other.release("flock")):
            with pytest.raises(RemoteError) as err:
                call()
            assert err.value.code == 11 and "steered by the connection from" in err.value.text
        assert squads.release("flock") and not squads.release("flock")
        assert other.steer("flock", 0.0, 0.0)[0] > 0  # free: the other steers it now
        with pytest.raises(RemoteError) as err:
            squads.steer("flock", 0.3, 0.0)
        assert err.value.code == 11
    wait_until(lambda: not steer_refused(squads))  # its connection closed: free again
    assert squads.release("flock")


def steer_refused(squads) -> bool:
    try:
        squads.steer("flock", 0.0, 0.0)
    except RemoteError as exc:
        assert exc.code == 11
        return True
    return False


@pytest.mark.slow
def test_a_group_teleop_frozen_with_a_key_held_stops_steering(person):
    """The dead man for squads: ``coopsim teleop --group`` frozen (SIGSTOP) while a key is
    held: its last steer lapses after the driver's hold (0.5 s of simulated time), the squad
    hovers; woken and quit, it gives the steering up."""
    import os
    import pty
    import select
    import signal
    import subprocess

    client, squads = person
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "coopsim", "teleop", "--group", "flock", "--nameserver",
         client.nameserver, "--speed", "0.3"], stdin=slave, stdout=slave, stderr=slave,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    os.close(slave)
    out = bytearray()

    def said(text: bytes) -> bool:
        while select.select([master], [], [], 0.05)[0]:
            try:
                out.extend(os.read(master, 4096))
            except OSError:
                break
        return text in out

    def driving() -> bool:
        os.write(master, b"i")  # held: the keyboard repeats it
        client.sim().step(25)
        fb = squads.feedback("flock")
        return fb.seq > 0 and fb.velocity[0] > 0.1

    try:
        wait_until(lambda: said(b"currently:"), timeout=60)
        wait_until(driving, timeout=120, every=0.05)
        os.kill(proc.pid, signal.SIGSTOP)
        frozen = client.sim().status()["time"]

        def later():  # steps are queued: a step reply may come before they are all taken
            client.sim().step(25)
            fb = squads.feedback("flock")
            return fb.time > frozen + 1.0 and fb  # 1 s of simulated time: past the hold

        fb = wait_until(later, timeout=300, every=0.05)
        assert fb.seq == 0, "the frozen person's steer lapsed: the squad hovers"
        os.kill(proc.pid, signal.SIGCONT)
        os.write(master, b"\x03")
        assert proc.wait(60) == 0, out.decode(errors="replace")
        assert not squads.release("flock"), "the teleop gave the steering up"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            proc.wait()
        os.close(master)


def test_a_person_takes_a_squad_from_its_steerer_and_gives_it_back(person):
    """A person (``coopsim teleop --group``) takes a squad another connection steers, as a
    teleop claim takes a robot: that connection's steers and releases get error 13 meanwhile,
    a third connection's error 11 naming the person; when the person lets go (Ctrl+C; or its
    connection closes) the squad is the displaced connection's again, without asking."""
    import os
    import pty
    import select
    import subprocess

    client, squads = person
    client.sim().step(1)
    wait_until(lambda: not squads_error(squads, "flock"))  # the driver has taken a step
    squads.wait_while_teleoperated = False  # the 13 itself, not the wait
    squads.steer("flock", 0.0, 0.0)  # a script's connection steers it
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "coopsim", "teleop", "--group", "flock", "--nameserver",
         client.nameserver], stdin=slave, stdout=slave, stderr=slave,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    os.close(slave)
    out = bytearray()

    def said(text: bytes) -> bool:
        while select.select([master], [], [], 0.05)[0]:
            try:
                out.extend(os.read(master, 4096))
            except OSError:
                break
        return text in out or proc.poll() is not None

    try:
        wait_until(lambda: said(b"currently:"), timeout=120)
        assert b"steering squad flock (taken from the connection from" in out, out.decode(
            errors="replace")
        for call in (lambda: squads.steer("flock", 0.3, 0.0), lambda: squads.release("flock")):
            with pytest.raises(RemoteError) as err:
                call()
            assert err.value.code == 13 and "steered by a person" in err.value.text
        with Client(client.nameserver) as third:
            with pytest.raises(RemoteError) as err:
                Squads(third).steer("flock", 0.0, 0.0)
            assert err.value.code == 11
        os.write(master, b"\x03")
        assert proc.wait(60) == 0, out.decode(errors="replace")
        said(b"has it back")
        assert b"has it back" in out, out.decode(errors="replace")
        assert squads.steer("flock", 0.0, 0.0)[0] > 0, "given back when the person let go"
        with Client(client.nameserver) as other:  # a person whose connection closes
            Squads(other).steer("flock", 0.0, 0.0, person=True)
            with pytest.raises(RemoteError) as err:
                squads.steer("flock", 0.0, 0.0)
            assert err.value.code == 13
        wait_until(lambda: not refused(squads, 13))
        assert squads.release("flock")
    finally:
        squads.wait_while_teleoperated = True
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


def refused(squads, code: int) -> bool:
    try:
        squads.steer("flock", 0.0, 0.0)
    except RemoteError as exc:
        assert exc.code == code
        return True
    return False
