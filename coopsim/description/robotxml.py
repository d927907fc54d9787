"""The tree of a URDF or MJCF description, parsed and checked into a
:class:`~coopsim.description.robot.Description` (docs/files.md "Robots from a description file").

Every problem is ``FileFormatError`` at the element's line: a name missing or given twice, a
number that is not one, a negative mass, an unknown parent or child link, a joint cycle, two
roots, too many links or joints. An inertia that is not positive definite, or a link that moves
but weighs nothing, is repaired with a warning (:mod:`coopsim.description.inertia`).
The text MuJoCo compiles is made here too: an URDF's mesh paths resolved, its visuals in
formats MuJoCo cannot read dropped, and its compiler told to keep every link (a tool link on
a fixed joint keeps its name).
"""

from __future__ import annotations

import copy
import math
import os
import re
import xml.etree.ElementTree as ET

import numpy as np

from ..model.errors import CoopsimError, FileFormatError
from .robot import (Description, DescriptionSpec, Joint, Link, Site,
                              obj_memory_name)
from ..model.limits import LINK_MASS
from . import collada, inertia as inertiarepair
from .meshes import SUFFIXES
from .meshes import ascii_stl_as_binary, msh_as_binary_stl, obj_as_binary_stl
from .mjcf import ACTUATORS, Defaults, body_frame

MESH_SUFFIXES = SUFFIXES + (".dae",)  # a description's meshes: STL, OBJ, COLLADA (converted)
MAX_LINKS = 500  # links (MJCF: bodies) of one description
MAX_JOINTS = 500  # joints of one description
URDF_JOINTS = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
MJCF_JOINTS = {"hinge": "revolute", "slide": "prismatic", "ball": "ball", "free": "floating"}
#: The compiler options MuJoCo reads an URDF with: every link kept, mesh paths as given
#: (already resolved), visuals kept (MuJoCo gives them no contacts).
URDF_COMPILER = {"fusestatic": "false", "strippath": "false", "discardvisual": "false",
                 "balanceinertia": "true"}


class _Tree:
    """An XML tree with its lines: the context of every message."""

    def __init__(self, path: str, root: ET.Element, lines: dict,
                 files: dict | None = None) -> None:
        self.path, self.root, self.lines = path, root, lines
        self.files = files or {}  # id -> the included file an element came from
        self.repairs: dict[str, inertiarepair.Repair] = {}  # link name -> its repair
        self.notes: list[str] = []  # other warnings, ``path:line: what was done``

    def line(self, element: ET.Element) -> int:
        return self.lines.get(id(element), 0)

    def error(self, element: ET.Element, reason: str) -> FileFormatError:
        return FileFormatError(self.files.get(id(element), self.path), self.line(element),
                               reason)

    def numbers(self, element: ET.Element, attr: str, n: int, default: tuple) -> tuple:
        """``n`` finite numbers of ``attr`` (space-separated), or ``default`` when absent."""
        text = element.get(attr)
        if text is None:
            return default
        try:
            values = tuple(float(v) for v in text.split())
        except ValueError:
            values = ()
        if len(values) != n or not all(math.isfinite(v) for v in values):
            raise self.error(element, f"<{element.tag} {attr}> needs {n} finite number(s), got "
                                      f"{text!r}")
        return values

    def name(self, element: ET.Element, what: str) -> str:
        name = element.get("name", "").strip()
        if not name:
            raise self.error(element, f"a {what} needs a name")
        return name


def parse(spec: DescriptionSpec, root: ET.Element, lines: dict, mesh,
          files: dict | None = None) -> Description:
    """The checked description of the XML tree ``root`` (``lines``: each element's line by
    ``id``; ``files``: by ``id``, the file of each element an MJCF ``<include>`` brought in;
    ``mesh(name, line, scale, use) -> Mesh`` resolves and checks a mesh).

    Raises:
        FileFormatError: at the file's line of the first problem.
    """
    tree = _Tree(spec.path, root, lines, files)
    if root.tag == "robot":
        _xacro_defaults(tree)
        return _urdf(tree, mesh, spec)
    if root.tag == "mujoco":
        return _mjcf(tree, mesh, spec.get("body"))
    if spec.get("body"):
        raise UnknownBody("body: names an MJCF body; a URDF's robot is its root link "
                          f"({os.path.basename(spec.path)})")
    raise tree.error(root, f"not a description: the root element is <{root.tag}>, not <robot> "
                           "(URDF) or <mujoco> (MJCF)")


_OPTENV = re.compile(r"\$\(optenv\s+([^\s)]+)\s*([^)]*)\)")
_XACRO = re.compile(r"\$\{|\$\(")


def _xacro_defaults(tree: _Tree) -> None:
    """Replace each xacro leftover with a default, ``$(optenv NAME DEFAULT)`` (pybullet's
    husky.urdf: ``$(optenv HUSKY_IMU_XYZ 0.19 0 0.149)``), by its default, with a warning at
    its line (the environment is not read: a description loads the same everywhere); any
    other (``$(arg ...)``, ``${...}``, ``$(find ...)``) is refused at its line: the file's
    xacro was not expanded."""
    for element in tree.root.iter():
        for attr, value in element.attrib.items():
            if "$" not in value:
                continue
            taken = _OPTENV.sub(lambda m: m.group(2).strip(), value)
            left = _XACRO.search(taken)
            if left:
                raise tree.error(element, f"<{element.tag} {attr}> holds the xacro expression "
                                          f"{value!r}: expand the file with xacro first")
            element.set(attr, taken)
            tree.notes.append(f"{tree.path}:{tree.line(element)}: <{element.tag} {attr}> "
                              f"{value!r} is a xacro leftover: its default {taken!r} is taken")


def _count(tree: _Tree, elements: list, limit: int, what: str) -> None:
    if len(elements) > limit:
        raise tree.error(elements[limit], f"more than {limit} <{what}> elements (the limit)")


# --- URDF --------------------------------------------------------------------------------------

def _urdf(tree: _Tree, mesh, spec: DescriptionSpec) -> Description:
    links_xml, joints_xml = tree.root.findall("link"), tree.root.findall("joint")
    _count(tree, links_xml, MAX_LINKS, "link")
    _count(tree, joints_xml, MAX_JOINTS, "joint")
    if not links_xml:
        raise tree.error(tree.root, "the robot has no <link>")
    links, resolved = {}, {}

    def noting(name: str, line: int, scale: tuple, use: str):
        found = resolved[name] = mesh(name, line, scale, use)
        return found

    for element in links_xml:
        link = _urdf_link(tree, element, noting)
        if link.name in links:
            raise tree.error(element, f"link {link.name!r} is defined twice (first at line "
                                      f"{links[link.name].line})")
        links[link.name] = link
    joints = [_urdf_joint(tree, element) for element in joints_xml]
    parents = _check_tree(tree, links, joints)
    root = next(name for name in links if name not in parents)
    ordered = [links[root]] + [Link(l.name, parents[l.name].name, l.mass, l.inertia, l.meshes,
                                    l.com, l.line) for l in links.values() if l.name != root]
    ordered = _check_masses(tree, ordered, joints, spec.base != "fixed")
    text, assets = _urdf_text(tree, {name: m.path for name, m in resolved.items()})
    return Description(tree.root.get("name", "") or os.path.splitext(
        os.path.basename(tree.path))[0], tree.path, tuple(ordered), tuple(joints), (), root,
        "urdf", text, assets, tuple(inertiarepair.warning(tree.path, fix)
                                    for fix in tree.repairs.values()) + tuple(tree.notes))


def _urdf_link(tree: _Tree, element: ET.Element, mesh) -> Link:
    name = tree.name(element, "link")
    mass, inertia, com = 0.0, (), (0.0, 0.0, 0.0)
    inertial = element.find("inertial")
    if inertial is not None:
        m = inertial.find("mass")
        if m is None:
            raise tree.error(inertial, f"link {name!r}: <inertial> without <mass>")
        mass = tree.numbers(m, "value", 1, (None,))[0]
        if mass is None or mass < 0:
            raise tree.error(m, f"link {name!r}: mass must be >= 0 kg, got {m.get('value')!r}")
        if LINK_MASS.problem(mass):
            raise tree.error(m, f"link {name!r}: link mass {LINK_MASS.problem(mass)}")
        origin = inertial.find("origin")
        if origin is not None:
            com = tree.numbers(origin, "xyz", 3, com)
        i = inertial.find("inertia")
        if i is not None:
            inertia = tuple(tree.numbers(i, k, 1, (math.nan,))[0]
                            for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
            if any(inertia) or not all(math.isfinite(v) for v in inertia):
                _check_inertia(tree, i, name, inertia)  # all zero: a massless frame's
                fix = inertiarepair.inertia_fix(name, tree.line(i), mass, inertia)
                if fix is not None:
                    tree.repairs[name], inertia = fix, fix.inertia
    meshes = []
    for use in ("visual", "collision"):
        for geometry in element.iterfind(f"{use}/geometry/mesh"):
            filename = geometry.get("filename", "")
            if not filename:
                raise tree.error(geometry, f"link {name!r}: <mesh> without filename")
            scale = tree.numbers(geometry, "scale", 3, (1.0, 1.0, 1.0))
            if not filename.lower().endswith(MESH_SUFFIXES):
                raise tree.error(geometry, f"mesh {filename!r} is not a mesh file: give "
                                           f"{', '.join(MESH_SUFFIXES)}")
            meshes.append(mesh(filename, tree.line(geometry), scale, use))
    return Link(name, "", mass, inertia, tuple(meshes), com, tree.line(element))


def _check_inertia(tree: _Tree, element: ET.Element, link: str, inertia: tuple) -> None:
    """Refuse an inertia that is missing or not finite (one that is not positive definite is
    repaired: :mod:`coopsim.description.inertia`; a broken triangle inequality MuJoCo
    balances)."""
    if not all(math.isfinite(v) for v in inertia):
        raise tree.error(element, f"link {link!r}: <inertia> needs ixx ixy ixz iyy iyz izz")


def _urdf_joint(tree: _Tree, element: ET.Element) -> Joint:
    name = tree.name(element, "joint")
    kind = element.get("type", "")
    if kind not in URDF_JOINTS:
        raise tree.error(element, f"joint {name!r}: unknown type {kind!r} (expected "
                                  f"{', '.join(URDF_JOINTS)})")
    ends = []
    for end in ("parent", "child"):
        e = element.find(end)
        if e is None or not e.get("link"):
            raise tree.error(element, f"joint {name!r} needs <{end} link=...>")
        ends.append(e.get("link"))
    origin = element.find("origin")
    xyz, rpy = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    if origin is not None:
        xyz, rpy = tree.numbers(origin, "xyz", 3, xyz), tree.numbers(origin, "rpy", 3, rpy)
    axis_e = element.find("axis")
    axis = (1.0, 0.0, 0.0) if axis_e is None else tree.numbers(axis_e, "xyz", 3, (1.0, 0, 0))
    norm = math.sqrt(sum(a * a for a in axis))
    if not norm > 0 and kind in ("revolute", "continuous", "prismatic", "planar"):
        raise tree.error(axis_e, f"joint {name!r}: the axis is zero")
    if not norm > 0:  # a fixed or floating joint's axis means nothing (often written 0 0 0)
        axis, norm = (1.0, 0.0, 0.0), 1.0
    lower, upper, speed, effort = -math.inf, math.inf, math.inf, math.inf
    limit = element.find("limit")
    if limit is not None:
        speed = tree.numbers(limit, "velocity", 1, (math.inf,))[0]
        effort = tree.numbers(limit, "effort", 1, (math.inf,))[0]
        if kind in ("revolute", "prismatic"):
            lower = tree.numbers(limit, "lower", 1, (0.0,))[0]
            upper = tree.numbers(limit, "upper", 1, (0.0,))[0]
            if lower > upper:
                raise tree.error(limit, f"joint {name!r}: lower limit {lower:g} is above the "
                                        f"upper {upper:g}")
            if lower == upper:  # no range: MuJoCo and PyBullet leave the joint unlimited
                if limit.get("lower") is not None or limit.get("upper") is not None:
                    tree.notes.append(f"{tree.path}:{tree.line(limit)}: joint {name!r}: "
                                      f"equal lower and upper limits ({lower:g}): no limit, "
                                      "as MuJoCo and PyBullet take it")
                lower, upper = -math.inf, math.inf  # (pybullet's Minitaur's knees)
    return Joint(name, kind, ends[0], ends[1], tuple(a / norm for a in axis), xyz, rpy,
                 lower, upper, speed, effort, tree.line(element))


def _check_tree(tree: _Tree, links: dict, joints: list) -> dict:
    """Link name -> its parent joint, once the joints are known to make one tree.

    Raises:
        FileFormatError: duplicate joint, unknown link, two parents, no root or two, a cycle.
    """
    seen, parents = {}, {}
    for j in joints:
        if j.name in seen:
            raise FileFormatError(tree.path, j.line, f"joint {j.name!r} is defined twice "
                                                     f"(first at line {seen[j.name].line})")
        seen[j.name] = j
        for end, link in (("parent", j.parent), ("child", j.child)):
            if link not in links:
                raise FileFormatError(tree.path, j.line, f"joint {j.name!r}: unknown {end} "
                                                          f"link {link!r}")
        if j.child in parents:
            raise FileFormatError(tree.path, j.line, f"link {j.child!r} is the child of two "
                                  f"joints ({parents[j.child].name!r} at line "
                                  f"{parents[j.child].line} and {j.name!r}): a joint cycle")
        parents[j.child] = j
    roots = [name for name in links if name not in parents]
    if not roots:
        j = joints[-1]
        raise FileFormatError(tree.path, j.line, f"joint cycle: every link has a parent joint "
                                                 f"(joint {j.name!r} closes it)")
    if len(roots) > 1:
        raise FileFormatError(tree.path, links[roots[1]].line, f"links {roots[0]!r} and "
                              f"{roots[1]!r} both have no parent joint: a description is one "
                              "tree with one root")
    reached = _reached(joints, roots[0])
    stray = [j for j in joints if j.child not in reached]
    if stray:
        raise FileFormatError(tree.path, stray[0].line, f"joint cycle through joint "
                                                        f"{stray[0].name!r}: its links do not "
                                                        f"hang from the root {roots[0]!r}")
    return parents


def _reached(joints: list, root: str) -> set:
    """The links hanging from ``root`` through ``joints``."""
    reached, todo = {root}, [root]
    children: dict[str, list] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j.child)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in reached:
                reached.add(child)
                todo.append(child)
    return reached


def _check_masses(tree: _Tree, links: list, joints: list, free_root: bool = False) -> list:
    """``links`` with each link that moves (on a joint that is not fixed) but has a zero mass
    or inertia of its own repaired (:func:`coopsim.description.inertia.moving_fix`: MuJoCo
    cannot move it; a massless link on a fixed joint is a frame, and fine). A moving link
    without ``<inertial>`` takes its mass from its geometry; with none it is repaired too.
    With ``free_root`` (a floating or planar base) the root link moves too: its zero inertia
    (pybullet's Laikago) is repaired as a moving link's.

    Raises:
        FileFormatError: the whole robot weighs nothing.
    """
    by_name = {l.name: k for k, l in enumerate(links)}
    elements = {e.get("name", "").strip(): e for e in tree.root.findall("link")}
    out = list(links)
    root = Joint("the floating base", "floating", "", links[0].name, (0.0, 0.0, 1.0))
    for j in joints + ([root] if free_root else []):
        link = out[by_name[j.child]]
        element = elements[link.name]
        inertial = element.find("inertial")
        if j is root and (inertial is None or not link.mass > 0):
            continue  # a massless root frame: the links welded to it weigh
        if j.kind == "fixed" or (inertial is None and (element.find("collision") is not None
                                                       or element.find("visual") is not None)):
            continue
        if inertial is not None and link.mass > 0 and _positive(link.inertia):
            continue
        at = element if inertial is None else inertial
        fix = inertiarepair.moving_fix(link.name, tree.line(at), link.mass, link.inertia, j.name)
        tree.repairs[link.name] = inertiarepair.merged(tree.repairs.get(link.name), fix)
        out[by_name[j.child]] = Link(link.name, link.parent_joint, fix.mass, fix.inertia,
                                     link.meshes, link.com, link.line)
    if not sum(l.mass for l in out) > 0 and not any(
            e.find("collision") is not None for e in tree.root.findall("link")):
        raise FileFormatError(tree.path, links[0].line, "the robot has zero mass: no link has "
                                                        "an <inertial> with a mass > 0")
    return out


def _positive(inertia: tuple) -> bool:
    """True when ``inertia`` (six components, or () for none given) has positive principal
    moments."""
    if not inertia:
        return True
    xx, xy, xz, yy, yz, zz = inertia
    return bool(np.linalg.eigvalsh(np.array([[xx, xy, xz], [xy, yy, yz],
                                             [xz, yz, zz]])).min() > inertiarepair.MIN_MOMENT)


def _no_size(shape: ET.Element) -> bool:
    """Whether a URDF ``<box>``, ``<sphere>``, ``<cylinder>`` or ``<capsule>`` has a zero
    size (pybullet's laikago_toes.urdf: ``<sphere radius="0.0"/>``)."""
    for attr in {"box": ("size",), "sphere": ("radius",), "cylinder": ("radius", "length"),
                 "capsule": ("radius", "length")}.get(shape.tag, ()):
        try:
            if any(float(v) == 0 for v in shape.get(attr, "1").split()):
                return True
        except ValueError:
            return False
    return False


def big_stl(path: str) -> bool:
    """True when ``path`` names an STL of over :data:`~coopsim.description.collada.ENGINE_FACES`
    triangles (binary; an ASCII one of that size is converted anyway): MuJoCo is given it
    decimated (``coopsim_stl_K.stl``)."""
    return path.lower().endswith(".stl") and os.path.getsize(path) > 84 + 50 * \
        collada.ENGINE_FACES


def _engine_stl(path: str) -> bytes:
    """The binary STL file ``path`` decimated for MuJoCo (:func:`collada.for_engine`)."""
    with open(path, "rb") as fh:
        data = fh.read()
    return collada.stl_bytes(collada.for_engine(collada.stl_triangles(data)))


def _urdf_text(tree: _Tree, resolved: dict) -> tuple[str, tuple]:
    """The URDF MuJoCo compiles and the mesh files it is given as bytes: mesh paths resolved,
    meshes in formats MuJoCo cannot read dropped, ASCII STL given as binary (MuJoCo reads
    only binary STL, ``coopsim_ascii_K.stl``; a binary STL over
    :data:`~coopsim.description.collada.ENGINE_FACES` triangles decimated, ``coopsim_stl_K.stl``,
    K counting every binary STL: :func:`big_stl`), COLLADA as binary STL
    (``coopsim_dae_K.stl``, decimated: :func:`coopsim.description.collada.for_engine`), OBJ
    as binary STL (``coopsim_obj_K.stl``, decimated, cached: :func:`.meshes.obj_as_binary_stl`;
    one MuJoCo cannot take so stays the OBJ file), K
    counting the files of each kind in sorted order; the compiler options of :data:`URDF_COMPILER`
    (replacing any ``<mujoco>`` element) and the repairs of :mod:`.inertiarepair`."""
    ascii_names, assets, counts = {}, [], {"dae": 0, "ascii": 0, "stl": 0, "obj": 0}
    for path in sorted(set(resolved.values())):
        kind, data = "ascii", None
        if path.lower().endswith(".dae"):
            kind, data = "dae", collada.stl_bytes(collada.dae_engine(path))
        elif path.lower().endswith(".obj"):  # K counts every OBJ
            kind, data = "obj", obj_as_binary_stl(path)
        else:
            data = ascii_stl_as_binary(path)
            if data is None and path.lower().endswith(".stl"):  # K counts every binary STL
                kind, data = "stl", _engine_stl(path) if big_stl(path) else None
        if data is not None:
            ascii_names[path] = f"coopsim_{kind}_{counts[kind]}.stl"
            assets.append((ascii_names[path], data))
        counts[kind] += kind != "ascii" or data is not None
    root = copy.deepcopy(tree.root)  # a copy: the parsed tree stays as read
    originals = {id(c): o for c, o in zip(root.iter(), tree.root.iter())}  # for their lines
    for old in root.findall("mujoco"):
        root.remove(old)
    inertiarepair.apply(root, tree.repairs)
    extra = ET.Element("mujoco")
    ET.SubElement(extra, "compiler", URDF_COMPILER)
    root.insert(0, extra)
    for link in root.findall("link"):
        for shape in link.findall("visual") + link.findall("collision"):
            m = shape.find("geometry/mesh")
            if m is not None and not m.get("filename", "").lower().endswith(MESH_SUFFIXES):
                link.remove(shape)
        for shape in link.findall("visual"):  # MuJoCo refuses a shape of no size
            empty = next((g for g in shape.iterfind("geometry/*") if _no_size(g)), None)
            if empty is not None:
                link.remove(shape)
                tree.notes.append(f"{tree.path}:{tree.line(originals[id(empty)])}: link "
                                  f"{link.get('name')!r}: a visual <{empty.tag}> of no size "
                                  "is not drawn")
        for m in link.iterfind("*/geometry/mesh"):
            path = resolved[m.get("filename")]
            m.set("filename", ascii_names.get(path, path))
    for joint in root.findall("joint"):  # MuJoCo refuses a repeated one; coopsim reads the
        for tag in ("origin", "axis", "limit", "dynamics"):  # first, as PyBullet does
            for extra_one in joint.findall(tag)[1:]:
                joint.remove(extra_one)
                tree.notes.append(f"{tree.path}:{tree.line(originals[id(extra_one)])}: joint "
                                  f"{joint.get('name')!r}: a second <{tag}> is ignored (the "
                                  "first counts)")
    return ET.tostring(root, encoding="unicode"), tuple(assets)


# --- MJCF --------------------------------------------------------------------------------------

class UnknownBody(CoopsimError):
    """The section's ``body`` key names no body of the description (reported at its line)."""


def _mjcf(tree: _Tree, mesh, body: tuple | None = None) -> Description:
    root = tree.root
    for element in root.iter():  # bounds as for every mass coopsim takes (model/limits.py)
        why = LINK_MASS.problem(tree.numbers(element, "mass", 1, (0.0,))[0])
        if why:
            raise tree.error(element, f"link mass {why}")
    bodies = list(root.iter("body"))
    joints_xml = [e for e in root.iter() if e.tag in ("joint", "freejoint")]
    _count(tree, bodies, MAX_LINKS, "body")
    _count(tree, joints_xml, MAX_JOINTS, "joint")
    first = _named_body(tree, body[0]) if body else _first_body(tree)
    compiler = root.find("compiler")
    defaults = Defaults(root)
    read = _MjcfRead(tree, compiler is None or compiler.get("angle", "degree") == "degree",
                     "xyz" if compiler is None else compiler.get("eulerseq", "xyz"),
                     defaults, _efforts(tree, defaults))
    read.body(first, "", "main")
    meshes = _mjcf_meshes(tree, mesh)
    name = root.get("model", "") or os.path.splitext(os.path.basename(tree.path))[0]
    timestep, gravity = _option(tree)
    return Description(name, tree.path, tuple(read.links), tuple(read.joints),
                       tuple(read.sites), read.links[0].name, "mjcf", "",
                       assets=_mjcf_obj_assets(tree), meshes=meshes, timestep=timestep,
                       gravity=gravity)


def _option(tree: _Tree) -> tuple[float, float]:
    """The MJCF's ``<option>`` timestep (s; 0: none given) and gravity's z (its units; 0: none
    given, or zero: the world's; its horizontal part, if any, is not taken: coopsim's world
    pulls along -z). A timestep that is not > 0 is refused."""
    timestep = gravity = 0.0
    for option in tree.root.iter("option"):
        step = tree.numbers(option, "timestep", 1, (None,))[0]
        if step is not None:
            if step <= 0:
                raise tree.error(option, f"<option timestep> must be > 0 s, got {step:g}")
            timestep = step
        pull = tree.numbers(option, "gravity", 3, None)
        if pull is not None:
            gravity = pull[2]
    return timestep, gravity


#: MJCF elements that make bodies MuJoCo's compiler expands (not read here)
_MADE = ("replicate", "flexcomp", "composite", "attach", "frame")


def _named_body(tree: _Tree, name: str) -> ET.Element:
    """The ``<body>`` named ``name`` anywhere in the model's ``<worldbody>`` sections (the
    section's ``body`` key: the robot of a scene whose first body is something else).

    Raises:
        UnknownBody: no body of that name.
    """
    for world in tree.root.findall("worldbody"):
        for found in world.iter("body"):
            if found.get("name") == name:
                return found
    raise UnknownBody(f"body: {os.path.basename(tree.path)} has no body {name!r}")


def _first_body(tree: _Tree) -> ET.Element:
    """The first ``<body>`` of the model's ``<worldbody>`` sections, in order (MuJoCo merges
    them: an included scene's comes first in MuJoCo's SDF plugin examples), as MuJoCo's
    ``worldbody.first_body()`` finds it: none where an element that makes bodies comes
    before it.

    Raises:
        FileFormatError: at the element that makes the model's bodies where MuJoCo makes
            them (``<replicate>``, ``<flexcomp>``, ``<composite>``, ``<attach>``,
            ``<frame>``: not read), else at the root: no body at all (a scene, an arena).
    """
    made = None
    for world in tree.root.findall("worldbody"):
        for child in world:
            if child.tag == "body" and made is None:
                return child
            if child.tag in _MADE and made is None and (
                    child.tag != "frame" or child.find(".//body") is not None):
                made = child  # its bodies come before any given after it
    if made is not None:
        raise tree.error(made, f"the model's bodies are made by <{made.tag}>, which coopsim "
                               "does not read: a description's robot is the first <body> of "
                               "its <worldbody>")
    raise tree.error(tree.root, "the MJCF model has no <worldbody> with a <body> (a scene or "
                                "an arena: no robot)")


def _mjcf_obj_assets(tree: _Tree) -> tuple[tuple[str, bytes], ...]:
    """An MJCF's OBJ meshes, its binary STL meshes over
    :data:`~coopsim.description.collada.ENGINE_FACES` triangles and its MSH meshes over that
    as binary STL from memory, decimated to that (:func:`.meshes.obj_as_binary_stl`,
    :func:`_engine_stl`, :func:`.meshes.msh_as_binary_stl`; named by
    :func:`~coopsim.description.robot.obj_memory_name` of the ``<mesh file>`` as written,
    the name MuJoCo's spec keeps under its compiler's meshdir or assetdir, where the file is
    read from as :func:`_mjcf_meshes` reads it): MuJoCo's compiler parses OBJ text on every
    compile (robosuite's arms and Spot: tens of MB) and its compile's CPU grows with the
    triangles (robosuite's GR1: 437,000 in 33 STL files; dm_control's dog: 347,000). Not an
    OBJ or MSH where a texture may need its texture coordinates; an OBJ that is not all
    triangles stays an OBJ."""
    folder = _mesh_folder(tree)
    textured = tree.root.find(".//texture") is not None
    out = {}
    for m in tree.root.iter("mesh"):
        file = m.get("file") or ""
        if obj_memory_name(file) in out:
            continue
        path = os.path.join(folder, file)
        path = path if os.path.isabs(path) else os.path.join(os.path.dirname(tree.path), path)
        data, suffix = None, file.lower()[-4:]
        if suffix == ".obj" and not textured:
            data = obj_as_binary_stl(path)
        elif suffix == ".msh" and not textured:
            data = msh_as_binary_stl(path)
        elif suffix == ".stl" and big_stl(path) and not _ascii_stl_file(path):
            data = _engine_stl(path)
        if data is not None:
            out[obj_memory_name(file)] = data
    return tuple(out.items())


def _mesh_folder(tree: _Tree) -> str:
    """The folder an MJCF's ``<mesh file>`` is under: its compiler's meshdir, else its
    assetdir, else none (relative to the model's file)."""
    compiler = tree.root.find("compiler")
    return "" if compiler is None else compiler.get("meshdir", compiler.get("assetdir", ""))


def _ascii_stl_file(path: str) -> bool:
    """True when the STL file ``path`` is ASCII (its size is no binary STL's of its count)."""
    with open(path, "rb") as fh:
        head = fh.read(84)
    count = int.from_bytes(head[80:84], "little") if len(head) == 84 else -1
    return os.path.getsize(path) != 84 + 50 * count


class _MjcfRead:
    """An MJCF body tree into links, joints (a jointless child body hangs on a fixed joint)
    and sites, each joint's origin the frame of its body in its parent body's
    (:mod:`coopsim.description.mjcf`), with the ``<default>`` classes applied."""

    def __init__(self, tree: _Tree, degrees: bool, seq: str, defaults: Defaults,
                 efforts: dict | None = None) -> None:
        self.tree, self.degrees, self.seq, self.defaults = tree, degrees, seq, defaults
        self.efforts = efforts or {}  # joint name -> its actuators' top torque or force
        self.links: list = []
        self.joints: list = []
        self.sites: list = []

    def body(self, body, parent: str, cls: str) -> None:
        """The links, joints and sites of ``body`` and its children (depth first)."""
        tree = self.tree
        name = body.get("name") or f"body{len(self.links)}"
        cls = body.get("childclass", cls)
        xyz, rpy = body_frame(tree, body, self.degrees, self.seq) if parent else ((0.0,) * 3,
                                                                                  (0.0,) * 3)
        first = ""
        for j in body:
            if j.tag in ("joint", "freejoint"):
                first = first or self._joint(j, parent, name, cls, xyz, rpy)
                xyz, rpy = (0.0,) * 3, (0.0,) * 3  # a second joint turns in the same frame
        if not first and parent:
            first = f"{name}_fixed"
            self.joints.append(Joint(first, "fixed", parent, name, (0.0, 0.0, 1.0), xyz, rpy,
                                     0.0, 0.0, line=tree.line(body)))
        mass, com = self._mass(body, name)
        self.links.append(Link(name, first, mass, com=com, line=tree.line(body)))
        for s in body.findall("site"):  # a nameless one (MuJoCo's car) names no tool
            if s.get("name", "").strip():
                self.sites.append(Site(tree.name(s, "site"), name,
                                       tree.numbers(s, "pos", 3, (0.0,) * 3), tree.line(s)))
        for child in body.findall("body"):
            self.body(child, name, cls)

    def _joint(self, j, parent: str, name: str, cls: str, xyz, rpy) -> str:
        tree, get = self.tree, self.defaults.get
        kind = ("floating" if j.tag == "freejoint"
                else MJCF_JOINTS.get(get(j, cls, "type", "hinge")))
        if kind is None:
            raise tree.error(j, f"joint type {get(j, cls, 'type')!r} is not read (expected "
                                f"{', '.join(MJCF_JOINTS)})")
        jname = j.get("name") or f"{name}_joint{len(self.joints)}"
        scale = math.pi / 180 if self.degrees and kind == "revolute" else 1.0
        lo, hi = _floats(tree, j, get(j, cls, "range"), 2, (-math.inf, math.inf))
        axis = _floats(tree, j, get(j, cls, "axis"), 3, (0.0, 0.0, 1.0))
        effort = self.efforts.get(jname, math.inf)
        if _limited(get(j, cls, "actuatorfrclimited"), get(j, cls, "actuatorfrcrange")):
            low, high = _floats(tree, j, get(j, cls, "actuatorfrcrange"), 2, (0.0, 0.0))
            effort = min(effort, max(abs(low), abs(high)))
        self.joints.append(Joint(jname, kind, parent, name, axis, xyz, rpy, lo * scale,
                                 hi * scale, effort=effort if effort > 0 else math.inf,
                                 line=tree.line(j)))
        return jname

    def _mass(self, body, name: str) -> tuple[float, tuple]:
        """The body's ``<inertial>`` mass and its ``pos`` (the centre of mass, m), else its
        geoms' given masses at their ``pos`` (MuJoCo's inference from geom densities and
        shapes is not repeated here: 0 then)."""
        inertial = body.find("inertial")
        if inertial is None:
            geoms = [(_floats(self.tree, g, g.get("mass"), 1, (0.0,))[0],
                      np.asarray(self.tree.numbers(g, "pos", 3, (0.0,) * 3)))
                     for g in body.findall("geom")]
            mass = sum(m for m, _ in geoms)
            com = sum(m * p for m, p in geoms) / mass if mass > 0 else np.zeros(3)
            return mass, tuple(float(v) for v in com)
        mass = self.tree.numbers(inertial, "mass", 1, (0.0,))[0]
        if mass < 0:  # 0 is a massless frame (robosuite's mounts): MuJoCo compiles it
            raise self.tree.error(inertial, f"body {name!r}: mass must be >= 0 kg")
        return mass, self.tree.numbers(inertial, "pos", 3, (0.0,) * 3)


def _limited(flag, given) -> bool:
    """MuJoCo's ``ctrllimited``/``forcelimited``/``actuatorfrclimited``: ``true``, or ``auto``
    (the default, with ``<compiler autolimits="true">``, MuJoCo's default) and a range given."""
    return flag == "true" or (flag in (None, "auto") and given is not None)


def _efforts(tree: _Tree, defaults: Defaults) -> dict[str, float]:
    """Joint name -> the top torque (N m) or force (N) the file's actuators on it give:
    ``|gear|`` times the actuator's force bound, the smaller of its ``forcerange`` and, for a
    ``motor`` or a ``general`` actuator without a bias (its control a force), its
    ``ctrlrange`` times its gain (robosuite's UR5e: ``<motor ctrlrange="-150 150">``, 150 N m).
    An actuator bounded by neither gives none; of several on a joint the largest counts."""
    out: dict[str, float] = {}
    for group in tree.root.findall("actuator"):
        for a in group:
            if a.tag not in ACTUATORS or not a.get("joint"):
                continue
            get = defaults.get
            bound = math.inf
            force = get(a, "main", "forcerange")
            if _limited(get(a, "main", "forcelimited"), force):
                bound = max(map(abs, _floats(tree, a, force, 2, (math.inf, math.inf))))
            ctrl = get(a, "main", "ctrlrange")
            gain = 1.0
            if a.tag == "general":
                gain = abs(float(_first(tree, a, get(a, "main", "gainprm"), 1.0)))
            by_ctrl = a.tag == "motor" or (a.tag == "general" and get(
                a, "main", "biastype", "none") == "none" and get(
                a, "main", "gaintype", "fixed") == "fixed")
            if by_ctrl and _limited(get(a, "main", "ctrllimited"), ctrl):
                bound = min(bound, gain * max(map(abs, _floats(tree, a, ctrl, 2, (0.0, 0.0)))))
            gear = abs(_first(tree, a, get(a, "main", "gear"), 1.0))
            if math.isfinite(bound):
                joint = a.get("joint")
                out[joint] = max(out.get(joint, 0.0), gear * bound)
    return out


def _first(tree: _Tree, element, text, default: float) -> float:
    """The first number of ``text`` (``gear``, ``gainprm``: up to 10 numbers)."""
    if text is None or not str(text).split():
        return default
    try:
        value = float(str(text).split()[0])
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise tree.error(element, f"expected a finite number first, got {text!r}")
    return value


def _floats(tree: _Tree, element, text, n: int, default: tuple) -> tuple:
    """``n`` finite numbers of ``text`` (an attribute's, maybe from a default class)."""
    if text is None:
        return default
    try:
        values = tuple(float(v) for v in str(text).split())
    except ValueError:
        values = ()
    if len(values) != n or not all(math.isfinite(v) for v in values):
        raise tree.error(element, f"expected {n} finite numbers, got {text!r}")
    return values


def _mjcf_meshes(tree: _Tree, mesh) -> tuple:
    """Check every mesh file the model names, from its compiler's meshdir (or assetdir);
    returns the meshes (what the links document's visuals name: ``Description.meshes``)."""
    compiler = tree.root.find("compiler")
    folder = _mesh_folder(tree)
    found = []
    for m in tree.root.iter("mesh"):
        if m.get("file"):
            found.append(mesh(os.path.join(folder, m.get("file")), tree.line(m),
                              tree.numbers(m, "scale", 3, (1.0, 1.0, 1.0)), "collision"))
    textures = "" if compiler is None else compiler.get("texturedir", compiler.get("assetdir",
                                                                                   ""))
    for element in tree.root.iter():  # textures, height fields, skins: found and confined
        if element.tag != "mesh" and element.get("file"):
            mesh(os.path.join(textures, element.get("file")), tree.line(element),
                 (1.0, 1.0, 1.0), "file")
    return tuple(found)
