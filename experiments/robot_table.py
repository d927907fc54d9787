"""docs/robots.md's table of every robot of the installed example-robot-data (issue 52): for
each URDF (and each package that ships none), its kind, whether coopsim loads it as shipped
(with how many repairs), its meshes, the CPU it took to load, its forward kinematics against
Pinocchio's, the check of its kind (experiments/robotchecks: h52-motion's wheeled, multirotor,
legged checks where present) and what is not supported and why.

    PYTHONPATH=.:experiments python experiments/robot_table.py [--write] [--only NAME...]

Without ``--write`` the table is printed; with it, docs/robots.md's text between the
``robot-table`` markers is replaced. Everything runs in this process from the package as
installed (no network). Goals (issue 52): loads 100 % of arms, wheeled bases and multirotors,
>= 90 % of all; arms' FK <= 1 mm / 0.1°; loading one robot <= 1 s of CPU after the imports.
"""

from __future__ import annotations

import argparse
import glob
import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from robotchecks import CHECKS, Check  # noqa: E402
from robotchecks.kinds import PACKAGES, kind_of, package_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "robots.md"
BEGIN, END = "<!-- robot-table: begin -->", "<!-- robot-table: end -->"
#: What coopsim drives of each kind (the section keys of docs/robots.md, "Your own robot").
MOVES = {"arm": "joints, tool (`tool`, `gripper`)", "wheeled": "base (`wheels`)",
         "multirotor": "rotors (`rotors`)", "legged": "joints (posture)",
         "humanoid": "joints (posture)", "hand": "joints (posture)", "bench": "joints (posture)"}
#: Files and packages that cannot load, and why (the table's last column).
KNOWN = {"ur3.urdf": "the file is an empty <robot> (its xacro was not expanded): the "
                     "ur3_robot.urdf beside it is the UR3",
         "cassie_description": "ships SDF only (no URDF): SDF is not a description format "
                               "coopsim reads"}


@dataclass
class Row:
    """One line of the table."""

    package: str
    file: str
    kind: str
    loads: str = ""
    meshes: str = ""
    cpu_s: float = float("nan")
    fk: Check | None = None
    motion: Check | None = None
    missing: str = ""

    @property
    def loaded(self) -> bool:
        return self.loads.startswith("yes")


def share() -> Path:
    """example-robot-data's ``robots`` folder (as installed)."""
    from importlib.metadata import distribution
    return Path(distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots"))


def urdfs(robots: Path) -> list[str]:
    return sorted(glob.glob(str(robots / "*" / "*" / "*.urdf")))


def _meshes(d) -> str:
    kinds: dict[str, int] = {}
    for path in {m.path for link in d.links for m in link.meshes}:
        ext = os.path.splitext(path)[1].lower().lstrip(".")
        kinds[ext] = kinds.get(ext, 0) + 1
    return ", ".join(f"{n} {ext}" for ext, n in sorted(kinds.items())) or "none"


def load_row(path: str) -> Row:
    """The row of one URDF: loaded (timed in CPU s: read, checked, meshes converted, MuJoCo's
    compile) and checked."""
    from coopsim.formats.description import load_description
    from coopsim.model.errors import CoopsimError
    from coopsim.model.imported import DescriptionSpec
    from coopsim.physics.mujoco_import import description_spec

    row = Row(package_of(path), os.path.basename(path), kind_of(path))
    start = time.process_time()
    try:
        d = load_description(DescriptionSpec(path))
        description_spec(d).compile()
    except CoopsimError as exc:
        row.loads = "no"
        row.missing = KNOWN.get(row.file, str(exc).replace(str(Path(path).parent) + "/", ""))
        return row
    except Exception as exc:  # noqa: BLE001 -- MuJoCo's compiler raises its own
        row.loads, row.missing = "no", f"MuJoCo: {str(exc).splitlines()[0]}"
        return row
    row.cpu_s = time.process_time() - start
    row.kind = kind_of(path, d)
    row.loads = f"yes ({len(d.repairs)} repaired)" if d.repairs else "yes"
    row.meshes = _meshes(d)
    row.fk = CHECKS["fk"](path)
    if row.kind in CHECKS:
        row.motion = CHECKS[row.kind](path)
    return row


def _cell(check: Check | None) -> str:
    if check is None:
        return "—"
    mark = {True: "", False: " ✗", None: " (not measured)"}[check.ok]
    return (check.figure or check.note) + mark


def markdown(rows: list[Row]) -> str:
    """The table and its summary lines."""
    lines = ["| package | file | kind | loads | meshes | load CPU s | FK vs Pinocchio | "
             "what moves | its check | not supported, why |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cpu = f"{r.cpu_s:.2f}" if r.cpu_s == r.cpu_s else "—"
        lines.append(f"| {r.package} | {r.file} | {r.kind} | {r.loads} | {r.meshes or '—'} | "
                     f"{cpu} | {_cell(r.fk)} | {MOVES[r.kind] if r.loaded else '—'} | "
                     f"{_cell(r.motion)} | {r.missing or '—'} |")
    lines += ["", summary(rows)]
    return "\n".join(lines)


def summary(rows: list[Row]) -> str:
    """Loads per kind and overall, and the arms' FK figure."""
    parts = []
    for kind in ("arm", "wheeled", "multirotor", "legged", "humanoid", "hand", "bench"):
        of = [r for r in rows if r.kind == kind]
        if of:
            parts.append(f"{kind} {sum(r.loaded for r in of)}/{len(of)}")
    loaded = sum(r.loaded for r in rows)
    fk_ok = [r for r in rows if r.fk is not None and r.fk.ok]
    cpu = [r.cpu_s for r in rows if r.loaded]
    return (f"Loaded as shipped: {loaded} of {len(rows)} ({100 * loaded / len(rows):.0f} %): "
            f"{', '.join(parts)}. FK within 1 mm / 0.1° of Pinocchio's: {len(fk_ok)} of "
            f"{loaded} loaded. Load CPU (first load in the process, meshes converted): "
            f"median {sorted(cpu)[len(cpu) // 2]:.2f} s, largest {max(cpu):.2f} s.")


def table(only: list[str] | None = None) -> list[Row]:
    """The rows of every URDF of the package (``only``: files or packages named), and one row
    for each package that ships no URDF."""
    robots = share()
    rows = []
    for path in urdfs(robots):
        if only and not any(n in (os.path.basename(path), package_of(path)) for n in only):
            continue
        rows.append(load_row(path))
    with_urdf = {package_of(p) for p in urdfs(robots)}
    for package in sorted(p.name for p in robots.iterdir() if p.is_dir()):
        if package not in with_urdf and (not only or package in only):
            rows.append(Row(package, "—", PACKAGES.get(package, "bench"), "no",
                            missing=KNOWN.get(package, "ships no URDF")))
    return rows


def write(text: str, doc: Path = DOC) -> None:
    """Replace the text between the markers of ``doc`` with ``text``."""
    old = doc.read_text()
    head, _, rest = old.partition(BEGIN)
    _, _, tail = rest.partition(END)
    doc.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite docs/robots.md's table")
    parser.add_argument("--only", nargs="*", help="files or packages to check (default all)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # the repairs are in the table, not on stderr
    text = markdown(table(args.only))
    if args.write:
        write(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
