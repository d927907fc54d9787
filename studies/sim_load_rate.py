"""The real-time factor of a running world while ``/sim load`` reads hostile and large COLLADA
files (docs/reliability.md *Mesh files*).

    python studies/sim_load_rate.py TREE [--rounds 1]

Starts ``coopsim run --headless`` of checkout ``TREE`` (its coopsim first on PYTHONPATH, the
mesh cache off) on a one-arm MuJoCo world in real time (dt 0.01 s), measures its real-time
factor for 3 s (the baseline), then sends ``/sim load`` of each file below while a second
connection asks ``status`` every 20 ms, and prints one JSON line a load: the reply (error
code, its first 100 characters), the load's wall time, the real-time factor over it (sim time
gained / wall time, counted on the old world until the new one replaced it) and the longest
gap between two status answers. The files (tests/daehelpers.py): 100,000 nested nodes,
200,000 instances (14 MB), a negative index, a NaN position, a 50 MB array whose last
index is out of range (parsed whole, then refused), and last a valid 50 MB array (loaded: it
replaces the world).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def files(folder: Path) -> list[tuple[str, Path]]:
    """(name, scenario) of each load, the running world's scenario first."""
    sys.path.insert(0, str(HERE.parent / "tests"))
    import daehelpers as dae
    made = [("running", dae.scenario(folder, dae.write(folder / "cube.dae", dae.text()).name))]
    hostile = {"nested 100000": dae.nested(folder / "nested.dae"),
               "instances 200000": dae.instances(folder / "instances.dae"),
               "negative index": dae.write(folder / "negative.dae",
                                           dae.text(p=dae.CUBE_P.replace("0 2 1", "0 2 -1", 1))),
               "nan position": dae.write(folder / "nan.dae",
                                         dae.text(positions=dae.CUBE.replace("1 1 1", "1 nan 1"))),
               "50 MB, a bad index last": dae.big_positions(folder / "bad50.dae", 50),
               "valid 50 MB": dae.big_positions(folder / "big.dae", 50)}
    bad = hostile["50 MB, a bad index last"]
    bad.write_text(bad.read_text().replace("3 4 7</p>", "3 4 99999999</p>"))
    for name, path in hostile.items():
        made.append((name, dae.scenario(folder, path.name)))
    return made


def rate(sim, until: threading.Event, samples: list) -> None:
    """Ask status every 20 ms until ``until``, noting (wall, sim time, steps)."""
    while not until.is_set():
        st = sim.status()
        samples.append((time.monotonic(), st["time"], st["step"]))
        time.sleep(0.02)


def factor(samples: list) -> tuple[float, float, float]:
    """(sim time gained / wall time, the longest wall gap between answers, when it began
    after the first sample, s), counting only increases of sim time (a new world starts at
    0)."""
    gained = sum(max(0.0, b[1] - a[1]) for a, b in zip(samples, samples[1:]))
    wall = samples[-1][0] - samples[0][0]
    gap, at = max(((b[0] - a[0], a[0] - samples[0][0]) for a, b in zip(samples, samples[1:])),
                  default=(0.0, 0.0))
    return gained / wall if wall > 0 else 0.0, gap, at


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    args = ap.parse_args()
    tree = str(Path(args.tree).resolve())
    sys.path.insert(0, tree)
    from coopsim.client import Client
    from coopsim.model.errors import CoopsimError

    folder = Path(tempfile.mkdtemp(prefix="sim_load_rate_"))
    made = files(folder)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": tree, "COOPSIM_MESH_CACHE": "off", "DISPLAY": ""}
    proc = subprocess.Popen([sys.executable, "-m", "coopsim", "run", "--headless", "--port",
                             str(port), str(made[0][1])], env=env, cwd=tree,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:
            if "name server" in line:
                break
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        endpoint = f"tcp://127.0.0.1:{port}"
        watcher, loader = Client(endpoint, timeout=120.0), Client(endpoint, timeout=300.0)
        sim = watcher.sim()
        samples: list = []
        stop = threading.Event()
        threading.Timer(3.0, stop.set).start()
        rate(sim, stop, samples)
        base, base_gap, _ = factor(samples)
        print(json.dumps(dict(tree=tree, load="baseline", rtf=round(base, 3),
                              gap_s=round(base_gap, 3), uptime=os.getloadavg()[0])), flush=True)
        for name, scenario in made[1:]:
            samples, done, reply = [], threading.Event(), {}

            def load(path=str(scenario)):
                started = time.monotonic()
                try:
                    loader.sim().load(path)
                    reply.update(error=0, text="loaded")
                except CoopsimError as exc:
                    reply.update(error=getattr(exc, "code", -1), text=str(exc)[:100])
                reply["wall_s"] = round(time.monotonic() - started, 2)
                done.set()
            thread = threading.Thread(target=load)
            thread.start()
            rate(sim, done, samples)
            thread.join()
            rtf, gap, at = factor(samples)
            print(json.dumps(dict(load=name, **reply, rtf=round(rtf, 3), gap_s=round(gap, 3),
                                  gap_at_s=round(at, 2), uptime=os.getloadavg()[0])),
                  flush=True)
    finally:
        proc.send_signal(signal.SIGINT)  # coopsim run's Ctrl-C: a clean exit
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
