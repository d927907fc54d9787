"""Whether an engine can run a scenario: :func:`check_engine`, the loaders' last check
(``coopsim run`` and ``coopsim check`` with an engine named; docs/files.md).

An engine refuses what it cannot build (a mesh, a height field, an object's shape, a robot's
assembly) and, where its placement is strict, a body that starts below the floor or inside one
placed before it (:mod:`coopsim.model.placement`). The first refusal in file order is raised as
``path:line: reason``, the world's objects before the scenario's robots and objects.
"""

from __future__ import annotations

import os
import re

from ..model.errors import CoopsimError, FileFormatError
from ..model.placement import Solids, assembly_rows, first_problem, object_rows
from ..model.plugins import ENGINES, default_engine
from ..model.specs import ScenarioSpec
from ..model.validate import check_robot_spec
from .description import read_bytes, read_xml
from .sections import PathLike


def check_engine(scenario: ScenarioSpec, label: str | None = None) -> None:
    """Check that the engine (``label``, default the scenario's) can run every robot and
    object of ``scenario``.

    Raises:
        FileFormatError: at the line of the first robot or object it refuses (the
            world's objects first, then the scenario's by line; the ``[SETTINGS] engine``
            line, or line 0, for an unknown engine); what MuJoCo refuses of a robot's
            description file at that file's line (``order_line``: the robot's).
    """
    path = scenario.path or scenario.name
    try:
        engine = ENGINES.get(label or scenario.settings.engine or default_engine())
    except CoopsimError as exc:
        raise FileFormatError(path, getattr(scenario.settings, "line", 0), str(exc)) from None
    if engine.missing():  # an optional library it needs is not installed
        raise FileFormatError(path, getattr(scenario.settings, "line", 0), engine.missing())
    scenery = engine.refuses_scenery(scenario.world)  # meshes, a height field
    if scenery:
        raise FileFormatError(scenario.world.path or path, *scenery)
    for obj in scenario.world.objects:  # the world file is read first
        reason = engine.refuses_object(obj)
        if reason:
            raise FileFormatError(scenario.world.path or path, obj.line, reason)
    assemblies = [check_robot_spec(spec) for spec in scenario.robots]
    refused = []
    for spec, assembly in zip(scenario.robots, assemblies):
        try:
            reason = engine.refuses_assembly(assembly)
        except FileFormatError as exc:  # in the robot's description file, at its line
            if not exc.line and hasattr(exc, "prefix"):
                exc = _at_line(exc)
            exc.order_line = spec.line
            refused.append((spec.line, exc))
            continue
        if reason:
            refused.append((spec.line, f"robot {spec.name} ({spec.type}): {reason}"))
    refused += [(obj.line, reason) for obj in scenario.objects
                for reason in [engine.refuses_object(obj)] if reason]
    if refused:
        line, first = min(refused, key=lambda r: r[0])
        if isinstance(first, FileFormatError):
            raise first
        raise FileFormatError(path, line, first)
    if engine.strict_placement:
        _check_placements(scenario, assemblies, path)


def _check_placements(scenario: ScenarioSpec, assemblies: list, path: PathLike) -> None:
    """Raise FileFormatError at the first object or robot (the world's objects first, then
    the scenario's by line) that starts below the floor or inside a body placed before it
    (:mod:`coopsim.model.placement`; objects inserted later by an event are checked then)."""
    solids, where = Solids(), []
    for obj in scenario.world.objects:
        if obj.start:
            solids.add(f"object {obj.name}", object_rows(obj))
            where.append((scenario.world.path or path, obj.line))
    mine = [(obj.line, f"object {obj.name}", object_rows(obj)) for obj in scenario.objects
            if obj.start]
    mine += [(spec.line, f"robot {spec.name} ({spec.type})", assembly_rows(assembly))
             for spec, assembly in zip(scenario.robots, assemblies)]
    for line, label, rows in sorted(mine, key=lambda m: m[0]):
        solids.add(label, rows)
        where.append((path, line))
    problem = first_problem(solids)
    if problem is not None:
        raise FileFormatError(*where[problem.item], problem.reason)


_ELEMENT = re.compile(r"Element name '([^']*)', id (\d+)")
#: A description's shapes and the attributes of their sizes (URDF's, then MJCF's geom).
_SHAPES = {"box": ("size",), "sphere": ("radius",), "cylinder": ("radius", "length"),
           "capsule": ("radius", "length"), "geom": ("size",)}


def _at_line(exc: FileFormatError) -> FileFormatError:
    """MuJoCo's refusal of a description file (:func:`coopsim.physics.mujoco.imported.refusal`)
    at the file's line of what its message names: an element of that name (its prefix
    ``exc.prefix`` taken off; an URDF's mesh by its file's stem), the root link
    (``exc.root_line``) for the base it is welded in, the first shape of a zero size for a
    size MuJoCo refuses; line 0 when none."""
    why = exc.reason
    try:
        root, lines = read_xml(exc.path, read_bytes(exc.path))
    except FileFormatError:
        return exc
    line = 0
    found = _ELEMENT.search(why)
    if "size 0 must be positive" in why or "size must be positive" in why:
        line = next((lines.get(id(e), 0) for e in root.iter()
                     if e.tag in _SHAPES and _zero_size(e)), 0)
    elif found is not None and found.group(1):
        name = found.group(1)
        if not name.startswith(exc.prefix):  # the mount: the root link is welded in it
            line = exc.root_line
        else:
            name = name.removeprefix(exc.prefix)
            stem = lambda e: os.path.splitext(os.path.basename(e.get("filename", "")))[0]  # noqa: E731
            line = next((lines.get(id(e), 0) for e in root.iter() if e.get("name") == name
                         or (e.tag == "mesh" and stem(e) == name)), 0) or \
                _memory_mesh_line(exc.path, root, lines, name)
    return FileFormatError(exc.path, line, why)


_MEMORY = re.compile(r"coopsim_(obj|dae)_(\d+)$")


def _memory_mesh_line(path: str, root, lines: dict, name: str) -> int:
    """The line of the URDF ``<mesh>`` whose file MuJoCo was given from memory as ``name``
    (``coopsim_obj_K``, ``coopsim_dae_K``: the K-th OBJ or COLLADA file, by resolved path,
    as coopsim.description.robotxml._urdf_text numbers them); 0 when none is found."""
    found = _MEMORY.match(name)
    if found is None:
        return 0
    here = os.path.dirname(os.path.abspath(path))
    meshes = [(os.path.realpath(os.path.join(here, e.get("filename", ""))), e)
              for e in root.iter("mesh") if e.get("filename", "").lower().endswith(
                  "." + found.group(1))]
    paths = sorted({p for p, _ in meshes})
    k = int(found.group(2))
    if k >= len(paths) or any("://" in e.get("filename", "") for _, e in meshes):
        return 0  # a package:// name resolves elsewhere: no line rather than a wrong one
    return next((lines.get(id(e), 0) for p, e in meshes if p == paths[k]), 0)


def _zero_size(element) -> bool:
    """Whether a shape's size has a zero (an MJCF plane, mesh or height field is sized
    otherwise)."""
    if element.tag == "geom" and element.get("type") in ("plane", "mesh", "hfield"):
        return False
    for attr in _SHAPES[element.tag]:
        try:
            if any(float(v) == 0 for v in element.get(attr, "1").split()):
                return True
        except ValueError:
            return False
    return False
