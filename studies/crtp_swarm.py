"""N Crazyflies flown by cflib's Swarm over CRTP: position setpoints and a log block each at
RATE Hz, against a ``coopsim run --crtp`` process; reports the run's real-time factor (sim s
per wall s), its CPU time, the setpoint-to-motors latency and the log blocks' period by sim
time.

    python studies/crtp_swarm.py --n 10 --rate 100 --seconds 10
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import cflib.crtp
from cflib.crazyflie.log import LogConfig
from cflib.crazyflie.swarm import CachedCfFactory, Swarm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from crtp.crtphelpers import free_ports, scenario_file  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--rate", type=float, default=100.0)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    base = free_ports(args.n)
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "run",
                             str(scenario_file(tmp, args.n)), "--headless", "--port", "0",
                             "--crtp", "--crtp-port", str(base)], cwd=ROOT, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    from coopsim.client import Client
    try:
        ns = None
        for line in proc.stderr:
            m = re.search(r"name server: (tcp://\S+)", line)
            if m:
                ns = m[1]
                break
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        uris = [f"udp://127.0.0.1:{base + i}" for i in range(args.n)]
        cflib.crtp.init_drivers()
        stamps = {uri: [] for uri in uris}
        with Client(ns) as c, Swarm(uris, factory=CachedCfFactory(rw_cache=str(tmp))) as swarm:
            def logs(scf):
                lg = LogConfig("s", int(1000 / args.rate))
                lg.add_variable("stateEstimate.z", "float")
                lg.data_received_cb.add_callback(
                    lambda ts, d, _, u=scf.cf.link_uri: stamps[u].append(ts))
                scf.cf.log.add_config(lg)
                lg.start()
            swarm.parallel_safe(logs)

            def fly(scf):
                k = uris.index(scf.cf.link_uri)
                x, y = 0.6 * (k % 4) - 0.9, 0.6 * (k // 4) - 0.6
                end = time.perf_counter() + args.seconds
                period = 1.0 / args.rate
                nxt = time.perf_counter()
                while time.perf_counter() < end:
                    scf.cf.commander.send_position_setpoint(x, y, 0.5, 0.0)
                    nxt += period
                    time.sleep(max(0.0, nxt - time.perf_counter()))
            t0, w0 = c.sim().status()["time"], time.perf_counter()
            cpu0 = _cpu(proc.pid)
            swarm.parallel_safe(fly)
            t1, w1 = c.sim().status()["time"], time.perf_counter()
            cpu1 = _cpu(proc.pid)
            state = c.sim().state()["crtp"]["crazyflies"]
        p95 = max(s["setpoint_latency_ms"].get("p95", 0) for s in state.values())
        p50 = max(s["setpoint_latency_ms"].get("p50", 0) for s in state.values())
        gaps = [b - a for u in uris for a, b in zip(stamps[u][5:], stamps[u][6:])]
        print(f"{args.n} Crazyflies, {args.rate:g} Hz setpoints + logs, {w1 - w0:.1f} s wall: "
              f"real-time factor {(t1 - t0) / (w1 - w0):.3f}, sim process CPU "
              f"{(cpu1 - cpu0) / (w1 - w0):.2f} cores; setpoint latency p50 {p50:.2f} ms, "
              f"p95 {p95:.2f} ms (worst Crazyflie); log gaps (sim ms) min {min(gaps)} "
              f"max {max(gaps)} mean {sum(gaps) / len(gaps):.3f} over {len(gaps)}; "
              f"load {os.getloadavg()[0]:.1f}")
    finally:
        proc.kill()
        proc.wait()


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
