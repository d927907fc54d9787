"""The table of every robot of the installed example-robot-data (docs/experiments/robot-files.md):
for each URDF (and each package that ships none), its kind, whether coopsim loads it as shipped
(with how many repairs), its meshes, the CPU it took to load, its forward kinematics against
Pinocchio's, the check of its kind (tests/robots/robotchecks: wheeled, multirotor,
legged checks where present) and what is not supported and why.

    PYTHONPATH=. python tests/robots/robot_table.py [--write] [--only NAME...]

Without ``--write`` the table is printed; with it, the page's text between the
``robot-table`` markers is replaced. Everything runs in this process from the package as
installed (no network). Goals: loads 100 % of arms, wheeled bases and multirotors,
>= 90 % of all; arms' FK <= 1 mm / 0.1°; loading one robot <= 1 s of CPU after the imports.
"""

from __future__ import annotations

import argparse
import glob
import logging
import os
import pickle
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from robotchecks import CHECKS, Check  # noqa: E402
from robotchecks.kinds import PACKAGES, kind_of, package_of, share  # noqa: E402,F401

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "experiments" / "robot-files.md"
BEGIN, END = "<!-- robot-table: begin -->", "<!-- robot-table: end -->"
#: What coopsim drives of each kind (the section keys of docs/robots.md, "Your own robot").
MOVES = {"arm": "joints, tool (`tool`, `gripper`)", "wheeled": "base (`wheels`)",
         "multirotor": "rotors (`rotors`)", "legged": "joints (posture)",
         "humanoid": "joints (posture)", "hand": "joints (posture)", "bench": "joints (posture)"}
PLANAR = "base (`base planar`)"  # a wheeled base without a left and right wheel joint (PR2)
#: Files and packages that cannot load, and why (the table's last column).
KNOWN = {"ur3.urdf": "the file is an empty <robot> (its xacro was not expanded): the "
                     "ur3_robot.urdf beside it is the UR3",
         "romeo_laas_small.urdf": "its meshes are Ogre .mesh files at a path of its "
                                  "author's machine (file:///usr/Romeo/...): not in the "
                                  "package, and not a format coopsim reads",
         "cassie_description": "ships SDF only (no URDF): SDF is not a description format "
                               "coopsim reads"}


#: Why a robot misses its check's goal, where that was looked into (the table's last column).
MISSES = {
    "simple_humanoid.urdf": "the file's waist efforts (30 N m) are below the upper body's own "
                            "weight's torque (WAIST_LINK2 alone: 30 kg 0.11 m forward of the "
                            "waist, 32 N m): it cannot hold itself up (a limit of the file)",
    "simple_humanoid_classical.urdf": "as simple_humanoid.urdf"}


@dataclass
class Row:
    """One line of the table."""

    package: str
    file: str
    kind: str
    loads: str = ""
    meshes: str = ""
    cpu_s: float = float("nan")
    cold_s: float = float("nan")
    fk: Check | None = None
    motion: Check | None = None
    missing: str = ""
    moves: str = ""  # what coopsim drives, where not its kind's (MOVES)

    @property
    def loaded(self) -> bool:
        return self.loads.startswith("yes")


def urdfs(robots: Path) -> list[str]:
    return sorted(glob.glob(str(robots / "*" / "*" / "*.urdf")))


def _meshes(d) -> str:
    kinds: dict[str, int] = {}
    for path in {m.path for link in d.links for m in link.meshes}:
        ext = os.path.splitext(path)[1].lower().lstrip(".")
        kinds[ext] = kinds.get(ext, 0) + 1
    return ", ".join(f"{n} {ext}" for ext, n in sorted(kinds.items())) or "none"


def _load(path: str):
    """The checked description of ``path`` and its MuJoCo model compiled (what a run's load
    does), timed in CPU s."""
    from coopsim.formats.description import load_description
    from coopsim.description.robot import DescriptionSpec
    from coopsim.physics.mujoco.imported import description_spec

    start = time.process_time()
    d = load_description(DescriptionSpec(path))
    description_spec(d).compile()
    return d, time.process_time() - start


def _first_loads(path: str) -> tuple:
    """(description, CPU s, CPU s with no mesh cache): two first loads of ``path`` in this
    process (its own mesh cache emptied before each), the first with an empty converted-mesh
    cache folder (:mod:`coopsim.description.meshcache`: as on a machine that never loaded it),
    the second with the entries the first wrote (every later process)."""
    from coopsim.description import collada

    old = os.environ.get("COOPSIM_MESH_CACHE")
    with tempfile.TemporaryDirectory(prefix="coopsim-table-") as cache:
        os.environ["COOPSIM_MESH_CACHE"] = cache
        try:
            collada._cached.cache_clear()
            _, cold = _load(path)
            collada._cached.cache_clear()
            d, warm = _load(path)
        finally:
            os.environ.pop("COOPSIM_MESH_CACHE") if old is None else \
                os.environ.__setitem__("COOPSIM_MESH_CACHE", old)
    return d, warm, cold


def _motion(kind: str, path: str) -> Check | None:
    """The kind's check of ``path``; a check that fails to run is a failed row saying why."""
    if kind not in CHECKS:
        return None
    try:
        return CHECKS[kind](path)
    except Exception as exc:  # noqa: BLE001 -- the row says what stopped it
        why = str(exc).replace(str(Path(path).parent) + "/", "").splitlines()
        return Check("", False, f"the check stopped: {why[0] if why else type(exc).__name__}")


def _planar(path: str) -> bool:
    """Whether the wheeled base of ``path`` is driven as a planar base (robotchecks)."""
    try:
        from robotchecks.motion import planar
    except ImportError:  # no motion checks: the kind's drive
        return False
    return planar(path)


def load_row(path: str) -> Row:
    """The row of one URDF: loaded (timed in CPU s: read, checked, meshes converted, MuJoCo's
    compile) and checked."""
    from coopsim.model.errors import CoopsimError

    row = Row(package_of(path), os.path.basename(path), kind_of(path))
    try:
        d, row.cpu_s, row.cold_s = _first_loads(path)
    except CoopsimError as exc:
        row.loads = "no"
        why = str(exc).replace(str(Path(path).parent) + "/", "")
        row.missing = f"{KNOWN[row.file]} ({why})" if row.file in KNOWN else why
        return row
    except Exception as exc:  # noqa: BLE001 -- MuJoCo's compiler raises its own
        row.loads, row.missing = "no", f"MuJoCo: {str(exc).splitlines()[0]}"
        return row
    row.kind = kind_of(path, d)
    row.loads = f"yes ({len(d.repairs)} repaired)" if d.repairs else "yes"
    row.meshes = _meshes(d)
    row.fk = CHECKS["fk"](path)
    row.motion = _motion(row.kind, path)
    if row.kind == "wheeled" and _planar(path):
        row.moves = PLANAR
    if row.motion is not None and row.motion.ok is False and not row.missing:
        row.missing = row.motion.note or "its check misses its goal (the column before)"
    return row


def _cell(check: Check | None) -> str:
    if check is None:
        return "—"
    mark = {True: "", False: " ✗", None: " (not measured)"}[check.ok]
    return (check.figure or check.note) + mark


def markdown(rows: list[Row]) -> str:
    """The table and its summary lines."""
    lines = ["| package | file | kind | loads | meshes | load CPU s (no mesh cache) | "
             "FK vs Pinocchio | what moves | its check | not supported, why |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cpu = f"{r.cpu_s:.2f} ({r.cold_s:.2f})" if r.cpu_s == r.cpu_s else "—"
        missing = MISSES.get(r.file, r.missing) if r.motion and r.motion.ok is False \
            else r.missing
        moves = (r.moves or MOVES[r.kind]) if r.loaded else "—"
        lines.append(f"| {r.package} | {r.file} | {r.kind} | {r.loads} | {r.meshes or '—'} | "
                     f"{cpu} | {_cell(r.fk)} | {moves} | "
                     f"{_cell(r.motion)} | {missing or '—'} |")
    lines += ["", summary(rows)]
    return "\n".join(lines)


#: Each kind's goal, as the summary names it.
GOALS = {"arm": "move_to <= 5 mm", "wheeled": "odometry <= 1 % and 1°, 0 at rest",
         "multirotor": "hover <= 2 cm, eight <= 0.1 m",
         "legged": "stands 10 s within 2 cm, no joint past its limit",
         "humanoid": "held joints within 0.1 rad, base fixed", "hand": "the same",
         "bench": "the same"}


def _goals(rows: list[Row]) -> str:
    """Per kind: rows whose check met its goal, of those loaded (and how many not measured)."""
    parts = []
    for kind in GOALS:
        of = [r for r in rows if r.kind == kind and r.loaded]
        if not of:
            continue
        met = sum(r.motion is not None and r.motion.ok is True for r in of)
        unmeasured = sum(r.motion is None or r.motion.ok is None for r in of)
        parts.append(f"{kind} {met}/{len(of)}" + (f" ({unmeasured} not measured)"
                                                   if unmeasured else "")
                     + f" ({GOALS[kind]})")
    return "; ".join(parts)


def _cpu(values: list[float]) -> str:
    values = sorted(values)
    return (f"median {values[len(values) // 2]:.2f} s, largest {values[-1]:.2f} s, "
            f"{sum(v <= 1.0 for v in values)} of {len(values)} within 1 s")


def summary(rows: list[Row]) -> str:
    """Loads per kind and overall, the FK figure, each kind's goal met, and load CPU."""
    parts = []
    for kind in ("arm", "wheeled", "multirotor", "legged", "humanoid", "hand", "bench"):
        of = [r for r in rows if r.kind == kind]
        if of:
            parts.append(f"{kind} {sum(r.loaded for r in of)}/{len(of)}")
    loaded = sum(r.loaded for r in rows)
    fk_ok = [r for r in rows if r.fk is not None and r.fk.ok]
    done = [r for r in rows if r.loaded]
    return (f"Loaded as shipped: {loaded} of {len(rows)} ({100 * loaded / len(rows):.0f} %): "
            f"{', '.join(parts)}. FK within 1 mm / 0.1° of Pinocchio's: {len(fk_ok)} of "
            f"{loaded} loaded. Its check's goal met: {_goals(rows)}. Load CPU (a first load "
            f"in the process, after its imports), converted meshes in the cache folder: "
            f"{_cpu([r.cpu_s for r in done])}; with an empty cache folder: "
            f"{_cpu([r.cold_s for r in done])}.")


def table(only: list[str] | None = None, save: str | None = None) -> list[Row]:
    """The rows of every URDF of the package (``only``: files, packages or kinds named), and
    one row for each package that ships no URDF; ``save``: a folder each row is kept in."""
    robots = share()
    _imports(robots)
    rows = []
    for path in urdfs(robots):
        if only and not any(n in (os.path.basename(path), package_of(path), kind_of(path))
                            for n in only):
            continue
        rows.append(load_row(path))
        if save:
            Path(save, f"{rows[-1].package}__{rows[-1].file}.row").write_bytes(
                pickle.dumps(rows[-1]))
    with_urdf = {package_of(p) for p in urdfs(robots)}
    for package in sorted(p.name for p in robots.iterdir() if p.is_dir()):
        if package not in with_urdf and (not only or package in only):
            rows.append(Row(package, "—", PACKAGES.get(package, "bench"), "no",
                            missing=KNOWN.get(package, "ships no URDF")))
    for row in rows if save else ():
        Path(save, f"{row.package}__{row.file}.row").write_bytes(pickle.dumps(row))
    return rows


def _imports(robots: Path) -> None:
    """Import what a load uses (coopsim, MuJoCo, pycollada, Pinocchio) before any row is
    timed: the goal counts a robot's load after the process's imports."""
    import collada  # noqa: F401
    import mujoco  # noqa: F401

    _load(str(robots / "double_pendulum_description" / "urdf" / "double_pendulum.urdf"))


def _check_of(cell: str) -> Check | None:
    """The :class:`Check` a table cell shows (:func:`_cell`'s inverse)."""
    if cell == "—":
        return None
    for mark, ok in ((" ✗", False), (" (not measured)", None)):
        if cell.endswith(mark):
            text = cell[:-len(mark)]
            return Check(text, ok) if ok is False else Check("", None, text)
    return Check(cell, True)


def written(doc: Path = DOC) -> list[Row]:
    """The rows of ``doc``'s table as written (:func:`markdown`'s inverse, the figures as
    text): what ``--merge`` keeps of the rows it does not check again."""
    table = doc.read_text().split(BEGIN, 1)[1].split(END, 1)[0]
    rows = []
    for line in table.splitlines()[3:]:
        if not line.startswith("| "):
            continue
        c = line[2:-2].split(" | ")
        cpu, _, cold = c[5].partition(" (")
        row = Row(c[0], c[1], c[2], c[3], "" if c[4] == "—" else c[4],
                  float(cpu) if cpu != "—" else float("nan"),
                  float(cold[:-1]) if cold else float("nan"), _check_of(c[6]),
                  _check_of(c[8]), "" if c[9] == "—" else c[9],
                  c[7] if c[7] not in ("—", MOVES.get(c[2])) else "")
        rows.append(row)
    return rows


def write(text: str, doc: Path = DOC) -> None:
    """Replace the text between the markers of ``doc`` with ``text``."""
    old = doc.read_text()
    head, _, rest = old.partition(BEGIN)
    _, _, tail = rest.partition(END)
    doc.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the page's table")
    parser.add_argument("--only", nargs="*", help="files or packages to check (default all)")
    parser.add_argument("--save", help="also keep each row in this folder (one file a row)")
    parser.add_argument("--rows", help="make the table of the rows kept in this folder (by "
                                       "--save runs, e.g. one per kind) instead of checking")
    parser.add_argument("--merge", action="store_true", help="with --rows: the rows kept "
                        "replace the same files' rows of the page, the others stay")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # the repairs are in the table, not on stderr
    if args.rows:
        rows = [pickle.loads(p.read_bytes()) for p in sorted(Path(args.rows).glob("*.row"))]
        kept = {(r.package, r.file) for r in rows}
        rows += [r for r in written() if (r.package, r.file) not in kept] if args.merge \
            else []
        rows.sort(key=lambda r: (r.file == "—", r.package, r.file))
    else:
        rows = table(args.only, args.save)
    text = markdown(rows)
    if args.write:
        write(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
