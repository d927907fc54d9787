"""cflib itself flies coopsim's Crazyflies over CRTP/UDP: connect (cold, then from its TOC
cache), logs at their period by sim time, params, the high-level commander, an uploaded
trajectory, the MotionCommander, the Swarm; values against coopsim's own state."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from .crtphelpers import crtp_run, sim_wait, truth, wait_until

from cflib.crazyflie import Crazyflie  # noqa: E402
from cflib.crazyflie.log import LogConfig  # noqa: E402
from cflib.crazyflie.mem import MemoryElement  # noqa: E402
from cflib.crazyflie.mem.trajectory_memory import Poly4D  # noqa: E402
from cflib.crazyflie.swarm import CachedCfFactory, Swarm  # noqa: E402
from cflib.crazyflie.syncCrazyflie import SyncCrazyflie  # noqa: E402
from cflib.positioning.motion_commander import MotionCommander  # noqa: E402


def connect(uri, cache):
    return SyncCrazyflie(uri, cf=Crazyflie(rw_cache=str(cache)))


def firmware(run, name="cf1"):
    return next(fw for fw in run.crtp.firmwares if fw.robot == name)


def test_connect_cold_then_cached_and_params(tmp_path):
    cache = tmp_path / "cache"
    with crtp_run(tmp_path) as (run, uris):
        fw = firmware(run)
        start = time.perf_counter()
        with connect(uris[0], cache) as scf:
            cold = time.perf_counter() - start
            cold_packets = fw.counts.received
            assert scf.cf.param.get_value("commander.enHighLevel") == "1"
            assert scf.cf.param.get_value("deck.bcFlow2") == "1"  # it carries the altimeter
            scf.cf.param.set_value("stabilizer.estimator", 1)  # answered with the new value
            wait_until(lambda: scf.cf.param.get_value("stabilizer.estimator") == "1")
            assert fw.params["stabilizer.estimator"] == 1
            with pytest.raises(AttributeError):  # cflib refuses a read-only write itself
                scf.cf.param.set_value("deck.bcFlow2", 0)
            assert len(scf.cf.log.toc.toc["stateEstimate"]) == 16
        before = fw.counts.received
        start = time.perf_counter()
        with connect(uris[0], cache) as scf:  # the TOCs come from cflib's cache
            cached = time.perf_counter() - start
            assert scf.cf.param.get_value("stabilizer.estimator") == "1"  # kept by the CF
        toc_items = len(fw.log_toc) + len(fw.param_toc)
        assert cold_packets > toc_items  # cold: every TOC item was asked for
        # cached: the set-up and the params' values, fewer packets than the TOCs' items
        assert fw.counts.received - before < toc_items
        print(f"connect cold {cold:.3f} s, cached {cached:.3f} s")


@pytest.mark.slow
def test_log_at_its_period_by_sim_time_and_values_against_the_run(tmp_path):
    with crtp_run(tmp_path) as (run, uris):
        got = []
        with connect(uris[0], tmp_path / "cache") as scf:
            lg = LogConfig("pose", 10)  # 100 Hz
            for name in ("stateEstimate.x", "stateEstimate.y", "stateEstimate.z",
                         "stabilizer.yaw"):
                lg.add_variable(name, "float")
            lg.data_received_cb.add_callback(lambda ts, data, _: got.append((ts, data)))
            scf.cf.log.add_config(lg)
            lg.start()
            wait_until(lambda: len(got) >= 200)
            lg.stop()
            stamps = np.array([ts for ts, _ in got[:200]])
            # every 10 ms of sim time, none lost, none doubled
            assert set(np.diff(stamps).tolist()) == {10}
            # the values are the simulated Crazyflie's (resting on the floor)
            x, y, z = truth(run, "cf1")
            last = got[-1][1]
            assert last["stateEstimate.x"] == pytest.approx(x, abs=1e-4)
            assert last["stateEstimate.y"] == pytest.approx(y, abs=1e-4)
            assert last["stateEstimate.z"] == pytest.approx(z, abs=1e-3)


@pytest.mark.slow
def test_values_against_coopsims_python_client(tmp_path):
    from coopsim.client import Client

    with crtp_run(tmp_path) as (run, uris):
        with connect(uris[0], tmp_path / "cache") as scf:
            scf.cf.high_level_commander.takeoff(0.6, 1.5)
            sim_wait(run, 3.0)
            lg = LogConfig("pose", 10)
            for name in ("stateEstimate.x", "stateEstimate.y", "stateEstimate.z"):
                lg.add_variable(name, "float")
            got = []
            lg.data_received_cb.add_callback(lambda ts, data, _: got.append(data))
            scf.cf.log.add_config(lg)
            lg.start()
            wait_until(lambda: len(got) >= 5)
            with Client(run.network.endpoint) as c:
                bot = c.robot("cf1")
                mocap = bot.mocap.read()
                state = c.sim().state()
            assert state["crtp"]["crazyflies"]["cf1"]["uri"] == uris[0]
            est = got[-1]
            assert est["stateEstimate.z"] == pytest.approx(0.6, abs=0.02)
            assert est["stateEstimate.z"] == pytest.approx(mocap[2], abs=0.01)
            assert est["stateEstimate.x"] == pytest.approx(mocap[0], abs=0.01)


@pytest.mark.slow
def test_high_level_takeoff_go_to_land(tmp_path):
    with crtp_run(tmp_path) as (run, uris):
        fw = firmware(run)
        with connect(uris[0], tmp_path / "cache") as scf:
            hl = scf.cf.high_level_commander
            start = truth(run, "cf1")
            hl.takeoff(0.5, 2.0)
            sim_wait(run, 3.5)
            hover = [truth(run, "cf1")[2]]
            for _ in range(50):
                sim_wait(run, 0.02)
                hover.append(truth(run, "cf1")[2])
            rms = math.sqrt(np.mean((np.array(hover) - 0.5) ** 2))
            assert rms < 0.02
            hl.go_to(start[0] + 0.5, start[1] + 0.3, 0.7, 0.0, 2.5)
            wait_until(lambda: fw.plan is not None and fw.plan.duration == 2.5)
            t_end = fw.plan.t0 + 2.5
            wait_until(lambda: run.stepper.snapshot.time >= t_end)
            err = np.linalg.norm(truth(run, "cf1") - (start + [0.5, 0.3, 0.7 - start[2]]))
            assert err < 0.05
            hl.land(0.0, 2.0)
            wait_until(lambda: fw.mode == "off")
            sim_wait(run, 0.5)
            assert truth(run, "cf1")[2] < 0.05
            print(f"hover RMS {rms * 1000:.1f} mm; go_to error at its duration "
                  f"{err * 1000:.1f} mm")


@pytest.mark.slow
def test_an_external_position_moves_the_estimate_and_so_the_flight(tmp_path):
    """A motion-capture frame 0.3 m off in x: the estimate follows extpos, so the Crazyflie,
    holding its high-level set point in the estimate, flies 0.3 m the other way and stays there
    once the mocap goes quiet; a reset of the estimator drops the offset (on the old code extpos
    was only logged: it stayed put)."""
    with crtp_run(tmp_path) as (run, uris):
        fw = firmware(run)
        with connect(uris[0], tmp_path / "cache") as scf:
            hl = scf.cf.high_level_commander
            start = truth(run, "cf1")
            hl.takeoff(0.5, 1.5)
            sim_wait(run, 2.5)
            for _ in range(150):  # mocap at ~50 Hz, off by +0.3 m in x, for ~3 s of sim time
                x, y, z = truth(run, "cf1")
                scf.cf.extpos.send_extpos(x + 0.3, y, z)
                sim_wait(run, 0.02)
            moved = truth(run, "cf1")
            assert moved[0] == pytest.approx(start[0] - 0.3, abs=0.05)
            assert fw.state[0] == pytest.approx(start[0], abs=0.05)  # what it believes
            sim_wait(run, 1.0)  # the mocap gone quiet: the offset is kept
            assert truth(run, "cf1")[0] == pytest.approx(start[0] - 0.3, abs=0.05)
            scf.cf.param.set_value("kalman.resetEstimation", 1)
            wait_until(lambda: not fw.offset.any())
            sim_wait(run, 2.0)
            assert truth(run, "cf1")[0] == pytest.approx(start[0], abs=0.05)
            hl.land(0.0, 1.5)
            wait_until(lambda: fw.mode == "off")


@pytest.mark.slow
def test_uploaded_trajectory(tmp_path):
    with crtp_run(tmp_path) as (run, uris):
        fw = firmware(run)
        with connect(uris[0], tmp_path / "cache") as scf:
            cf = scf.cf
            mem = cf.mem.get_mems(MemoryElement.TYPE_TRAJ)[0]
            # two pieces: 0.4 m along +x in 2 s at constant speed, then back along y
            mem.trajectory = [
                Poly4D(2.0, Poly4D.Poly([0, 0.2, 0, 0, 0, 0, 0, 0]),
                       Poly4D.Poly([0] * 8), Poly4D.Poly([0] * 8), Poly4D.Poly([0] * 8)),
                Poly4D(2.0, Poly4D.Poly([0.4, 0, 0, 0, 0, 0, 0, 0]),
                       Poly4D.Poly([0, 0.1, 0, 0, 0, 0, 0, 0]),
                       Poly4D.Poly([0] * 8), Poly4D.Poly([0] * 8))]
            assert mem.write_data_sync()
            cf.high_level_commander.define_trajectory(1, 0, 2)
            cf.high_level_commander.takeoff(0.5, 1.5)
            sim_wait(run, 2.5)
            start = truth(run, "cf1")
            cf.high_level_commander.start_trajectory(1, 1.0, relative_position=True)
            wait_until(lambda: fw.plan is not None and fw.plan.duration == 4.0)
            wait_until(lambda: run.stepper.snapshot.time >= fw.plan.t0 + 4.5)
            end = truth(run, "cf1")
            assert end - start == pytest.approx([0.4, 0.2, 0.0], abs=0.04)
            cf.high_level_commander.land(0.0, 1.5)
            wait_until(lambda: fw.mode == "off")


@pytest.mark.slow
def test_motion_commander_square(tmp_path):
    with crtp_run(tmp_path) as (run, uris):
        with connect(uris[0], tmp_path / "cache") as scf:
            start = truth(run, "cf1")
            path = []
            with MotionCommander(scf, default_height=0.5) as mc:
                wait_until(lambda: abs(truth(run, "cf1")[2] - 0.5) < 0.03)  # by sim time
                sim_wait(run, 0.5)
                path.append(truth(run, "cf1"))
                for move in (mc.forward, mc.left, mc.back, mc.right):
                    move(0.5, velocity=0.5)
                    sim_wait(run, 1.0)  # it settles where the leg ended
                    path.append(truth(run, "cf1"))
            path = np.array(path)
            assert path[0, 2] == pytest.approx(0.5, abs=0.05)
            # a square: out along x, then y, and back where it took off. MotionCommander
            # times its legs by the wall clock: a run slower than real time (a loaded
            # machine) flies them shorter than 0.5 m, alike
            legs = np.diff(path[:, :2], axis=0)
            assert legs[0, 0] > 0.05 and abs(legs[0, 1]) < 0.5 * legs[0, 0]
            assert legs[1, 1] > 0.05 and abs(legs[1, 0]) < 0.5 * legs[1, 1]
            assert legs[2, 0] < -0.05 and abs(legs[2, 1]) < 0.5 * abs(legs[2, 0])
            assert legs[3, 1] < -0.05 and abs(legs[3, 0]) < 0.5 * abs(legs[3, 1])
            print(f"MotionCommander square legs (m): {np.round(legs, 3).tolist()}")
        wait_until(lambda: truth(run, "cf1")[2] < 0.05)


@pytest.mark.slow
def test_swarm_of_four_beside_a_ground_robot(tmp_path):
    with crtp_run(tmp_path, n=4, ground=True) as (run, uris):
        factory = CachedCfFactory(rw_cache=str(tmp_path / "cache"))
        with Swarm(uris, factory=factory) as swarm:
            def takeoff(scf):
                scf.cf.high_level_commander.takeoff(0.4, 1.5)

            def up(scf, dz):
                scf.cf.high_level_commander.go_to(0, 0, dz, 0, 1.5, relative=True)

            def land(scf):
                scf.cf.high_level_commander.land(0.0, 1.5)
            swarm.parallel_safe(takeoff)
            sim_wait(run, 2.5)
            heights = [truth(run, f"cf{i + 1}")[2] for i in range(4)]
            assert heights == pytest.approx([0.4] * 4, abs=0.03)
            swarm.parallel_safe(up, {uri: [0.1 * (k + 1)] for k, uri in enumerate(uris)})
            sim_wait(run, 2.5)
            heights = [truth(run, f"cf{i + 1}")[2] for i in range(4)]
            assert heights == pytest.approx([0.5, 0.6, 0.7, 0.8], abs=0.03)
            positions = swarm.get_estimated_positions()
            for k, uri in enumerate(uris):
                assert positions[uri].z == pytest.approx(heights[k], abs=0.02)
            swarm.parallel_safe(land)
            wait_until(lambda: all(fw.mode == "off" for fw in run.crtp.firmwares))
        state = run.crtp.state()["crtp"]["crazyflies"]
        assert [state[f"cf{i + 1}"]["uri"] for i in range(4)] == uris
