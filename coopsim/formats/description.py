"""A robot section's description file (URDF or MJCF): its keys, its paths and its safe reading
(normative spec: docs/files.md "Robots from a description file").

A ``[ROBOT_n]`` section names the file with ``description PATH`` and may add ``base``,
``search`` and the per-module keys of :data:`DESCRIPTION_KEYS` (one row per key: the other
modules' keys are rows of the same table). :func:`description_spec` turns a parsed section into
a :class:`~coopsim.description.robot.DescriptionSpec`; :func:`load_description` reads the file
(defusedxml: no DTD, no entity, no external entity; bounded in bytes, links, joints and mesh
triangles), resolves its meshes through the search path and checks it
(:mod:`coopsim.description.robotxml`), or raises ``FileFormatError`` at the file's line: nothing is
half-loaded.

Paths: ``description`` and ``search`` are relative to the scenario's folder; a mesh is relative
to the description's folder, ``package://NAME/REST`` is ``DIR/NAME/REST`` (or ``DIR/REST`` when
``DIR`` is itself called ``NAME``) for each search folder ``DIR`` in order: the section's
``search`` folders, then ``$COOPSIM_DESCRIPTION_PATH`` (``:``-separated), then the folders
above the description file. A scenario loaded over the network (``folders`` given) reads
nothing outside its data folders.
"""

from __future__ import annotations

import logging
import math
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace

import defusedxml
import defusedxml.ElementTree as DET
import numpy as np

from ..model.errors import CoopsimError, FileFormatError, NotAllowedError
from ..description.robot import BASES, Description, DescriptionSpec, Mesh, imported_type, type_label
from ..model.plugins import ROBOT_TYPES
from ..description import robotxml
from ..description.robotxml import UnknownBody
from ..description.meshes import mesh_info
from .sections import Bad, Key, PathLike, Section, fixed, open_regular, pick, real

SUFFIXES = (".urdf", ".xml", ".mjcf")
SEARCH_ENV = "COOPSIM_DESCRIPTION_PATH"
MAX_BYTES = 8 << 20  # bytes of a description file
MAX_ROBOT_TRIANGLES = 4_000_000  # triangles of all of one description's meshes
ANCESTORS = 5  # package:// is looked for in the description's folder and the 4 above it
log = logging.getLogger(__name__)


def _names(what: str, low: int = 1, high: int = 64):
    """Parser of a key taking ``low`` to ``high`` names of the description (links, joints,
    sites), as written; the description's checks say whether each exists."""
    def parse(key: str, tokens: list, rest: str) -> tuple:
        if not low <= len(tokens) <= high:
            count = f"{low}" if low == high else f"{low} to {high}"
            raise Bad(f"{key} needs {count} {what} name(s), got {len(tokens)}")
        return tuple(tokens)
    return parse


def _whole_name(key: str, tokens: list, rest: str) -> tuple:
    """Parser of a key taking one name, the rest of the line (an MJCF name may hold spaces:
    gymnasium-robotics' ``robot0:hand mount``)."""
    if not rest.strip():
        raise Bad(f"{key} needs a name")
    return (rest.strip(),)


def _numbers(low: int, high: int, ok=lambda v: True, what: str = "a number"):
    """Parser of a key taking ``low`` to ``high`` finite numbers, each ``what``."""
    conv = real(what, ok)

    def parse(key: str, tokens: list, rest: str) -> tuple:
        if not low <= len(tokens) <= high:
            raise Bad(f"{key} needs {low} to {high} numbers, got {len(tokens)}")
        return tuple(conv(t) for t in tokens)
    return parse


def _search(key: str, tokens: list, rest: str) -> tuple:
    """``search DIR...``: folders, space- or ``:``-separated."""
    dirs = tuple(d for token in tokens for d in token.split(":") if d)
    if not dirs:
        raise Bad("search needs at least one folder")
    return dirs


#: What a ``rotors`` key naming a link the file lacks adds: how to name rotors.
ROTOR_HINT = ("; a multirotor's rotors are links of the file (one per propeller, its origin at "
              "the hub, its joint axis or z axis the thrust) or, where the file has none, one "
              "'rotor X Y Z AX AY AZ cw|ccw' line each (docs/files.md, Rotors)")


def _rotor_line(key: str, tokens: list, rest: str) -> tuple:
    """``rotor X Y Z AX AY AZ cw|ccw``: a rotor's hub (m) and thrust axis in the root link's
    frame and its spin seen from above."""
    if len(tokens) != 7 or tokens[6] not in ("cw", "ccw"):
        raise Bad(f"{key} needs X Y Z AX AY AZ cw|ccw (a hub in m, a thrust axis, a spin), "
                  f"got {rest!r}")
    conv = real("a number", lambda v: abs(v) <= 100)
    values = tuple(conv(t) for t in tokens[:6])
    if not math.hypot(*values[3:6]) > 1e-9:  # refused at its own line, not the rotors'
        raise Bad(f"{key}: the thrust axis {tokens[3]} {tokens[4]} {tokens[5]} has no length: "
                  "give the direction the rotor pushes (e.g. 0 0 1)")
    return (*values, tokens[6])


@dataclass(frozen=True)
class DescKey:
    """One row of the description keys.

    Attributes:
        key: The scenario key.
        parse: Its value's parser (:mod:`coopsim.formats.sections` style).
        refers: What each name of its value must be in the description: ``link``, ``joint``,
            ``moving`` (a revolute, continuous or prismatic joint), ``link_or_site`` or ""
            (not a name of the description: checked by the module itself).
        repeat: The key may be given several times (``sensor``).
        doc: One line for docs/files.md.
        modules: The module labels the key gives the robot (in the robot's module order).
    """

    key: str
    parse: object
    refers: str = ""
    repeat: bool = False
    doc: str = ""
    modules: tuple[str, ...] = ()


ARM = ("joints", "tool", "force", "pose")  # an arm's modules (coopsim.description.arm)
#: The per-module keys of a described robot, one row each (docs/files.md's table).
DESCRIPTION_KEYS: dict[str, DescKey] = {row.key: row for row in (
    DescKey("tool", _names("link or site", 1, 1), "link_or_site",
            doc="the link or site that is the tool point (tool module)", modules=ARM),
    DescKey("gripper", _names("joint or site", 1, 2), "",
            doc="two finger joints, or a grasp site (gripper module)",
            modules=ARM + ("gripper",)),
    DescKey("home", _numbers(1, 7), doc="the arm's start angles, rad, one per joint from the "
            "root to the tool (joints)"),
    DescKey("payload", _numbers(1, 1, lambda v: v > 0, "> 0"),
            doc="the arm's payload, kg (default 3): a heavier grasp is refused (gripper)"),
    DescKey("omega", _numbers(1, 1, lambda v: 0 < v <= 1000, "in (0, 1000]"),
            doc="the arm's servo natural frequency, rad/s (default 60: the built-in arms')"),
    DescKey("kp", _numbers(1, 7, lambda v: v > 0, "> 0"),
            doc="the arm's servo stiffness per joint, N m/rad (default: derived)"),
    DescKey("effort", _numbers(1, 7, lambda v: v > 0, "> 0"),
            doc="the arm's top torque per joint, N m, overriding the file's (URDF <limit "
            "effort>, an MJCF's actuator ranges; default 10 where it gives none)"),
    DescKey("kv", _numbers(1, 7, lambda v: v > 0, "> 0"),
            doc="the arm's servo damping per joint, N m s/rad (default: derived)"),
    DescKey("wheels", _names("joint", 2, 2), "moving",
            doc="the left and right wheel joints (motors, odometry, gps, compass; the left "
            "one has the larger y in the base's frame). From the file: the axle is the distance "
            "between the two joints' origins across the base (their y in the root link's frame "
            "at the zero pose); the wheel radius half the largest extent of the wheel link's "
            "mesh, else the wheel joint's height above the root link's origin; "
            "motors.max_speed the joints' <limit velocity> (rad/s) times the radius (at most "
            "the module's 5 m/s; the module's default without a limit); the drive caps both "
            "wheels' <limit effort> at the rim, else the robot's weight x 1 g, the torque that "
            "force at half the axle; the chassis radius the farthest link origin from the "
            "base's z axis, at least 0.55 x the axle"),
    DescKey("rotors", _names("link", 1, 16), "link",
            doc="the rotor links (rotors module, flight driver)"),
    DescKey("sensor", _names("module and link", 2, 2), "", repeat=True,
            doc="a sensor module and the link it is mounted on (sensor imu base_link): the "
            "mount is the link's origin in the robot's frame at the zero pose; lidar: its x, "
            "y, z (z above the chassis's middle: the scan is cast from the link's height) and "
            "yaw (the link's x axis); camera3d: x, y, z (above the robot's origin) and yaw; "
            "proximity: one sensor a line, in order, at most 8 (angle0, angle1... the links' "
            "yaws, count their number); light: x; imu, sonar, camera, altimeter, gps, compass, "
            "mocap: nothing, the link must exist. A link's tilt is not used"),
    DescKey("rotor", _rotor_line, "", repeat=True,
            doc="a rotor the file lacks: X Y Z AX AY AZ cw|ccw (hub m, thrust axis; rotors)",
            modules=()),
    DescKey("body", _whole_name, "",
            doc="the MJCF body that is the robot, with everything below it (default: the first "
            "<body> of the <worldbody>); for a scene file whose first body is not the robot "
            "(gymnasium-robotics' fetch/reach.xml: body robot0:base_link)", modules=()),
    DescKey("stance", _names("joint and position", 2, 128), "",
            doc="held joints' start positions: pairs JOINT VALUE (rad or m; servos module)"),
    DescKey("spin", _names("cw or ccw", 1, 16), "",
            doc="each rotor's turn seen from above, in the rotors' order (rotors module)"),
    DescKey("kf", fixed(("N s^2",), real("> 0", lambda v: v > 0)), "",
            doc="the rotors' thrust coefficient, N s^2 (rotors module)"),
    DescKey("km", fixed(("N m s^2",), real("> 0", lambda v: v > 0)), "",
            doc="the rotors' drag-torque coefficient, N m s^2 (rotors module)"),
)}

#: The ``[ROBOT_n]`` keys this module adds to the scenario format (coopsim.formats.keys).
ROBOT_KEYS = {
    "description": Key(lambda key, tokens, rest: _path(key, rest),
                       doc="PATH: a URDF (.urdf) or MJCF (.xml, .mjcf) file the robot is built "
                           "from; the keys below go with it only"),
    "base": Key(pick("base", BASES)),
    "search": Key(_search),
    **{row.key: Key(row.parse, repeat=row.repeat, doc=row.doc)
       for row in DESCRIPTION_KEYS.values()},
}
DESCRIPTION_ONLY = tuple(k for k in ROBOT_KEYS if k != "description")


def _path(key: str, rest: str) -> str:
    if not rest:
        raise Bad(f"{key} needs a value (path to a .urdf or MJCF .xml file)")
    return rest


# --- paths ----------------------------------------------------------------------------------------

def _confined(real: str, folders, what: str, path: PathLike, line: int) -> str:
    """``real``, when a network load may read it (``folders``: the run's DataFolders)."""
    if folders is not None and not folders.inside(real):
        raise NotAllowedError(f"{os.fspath(path)}:{line}: {what} is outside the simulation's "
                              f"data folders ({folders.describe()})")
    return real


def description_spec(section: Section, path: PathLike, folders=None) -> DescriptionSpec | None:
    """The description keys of a parsed ``[ROBOT_n]`` section (None when it has none).

    Raises:
        FileFormatError: a description key without ``description``, or the file is missing.
        NotAllowedError: (``folders`` given) the file or a search folder is outside them.
    """
    given = section.get("description")
    phi, psi, _ = section.get("orientation", (0.0, 0.0, 0.0))
    if given is None:
        extra = [k for k, _, _ in section.entries if k in DESCRIPTION_ONLY]
        if extra:
            raise FileFormatError(path, section.line_of(extra[0]),
                                  f"{extra[0]} is a key of a robot from a description file: "
                                  "add 'description PATH'")
        if phi or psi:
            raise FileFormatError(path, section.line_of("orientation"),
                                  "orientation phi and psi must be 0 for a built-in robot type "
                                  "(only theta, the yaw, is used; phi and psi turn a robot from "
                                  f"a description file), got {phi:g} {psi:g}")
        return None
    here = os.path.dirname(os.path.abspath(os.fspath(path))) if path else os.getcwd()
    line = section.line_of("description")
    search = tuple(os.path.realpath(os.path.join(here, d)) for d in section.get("search", ()))
    for d in search:
        _confined(d, folders, f"search folder {d!r}", path, section.line_of("search"))
    if not given.endswith(SUFFIXES):
        raise FileFormatError(path, line, f"description {given!r}: give a "
                                          f"{' or '.join(SUFFIXES)} file (URDF or MJCF)")
    where = os.path.realpath(os.path.join(here, given))
    _confined(where, folders, f"description {given!r}", path, line)
    if not os.path.isfile(where):
        raise FileFormatError(path, line, f"description file {given!r} not found (looked for "
                                          f"{where})")
    keys = tuple((k, v) for k, v, _ in section.entries if k in DESCRIPTION_KEYS)
    lines = tuple((k, n) for k, _, n in section.entries if k in ROBOT_KEYS)
    modules = tuple(dict.fromkeys(m for k, _ in keys for m in DESCRIPTION_KEYS[k].modules))
    base = section.get("base", "fixed")
    if phi or psi:
        _tiltable(section, base, path)
    return DescriptionSpec(where, given, base, search, keys, lines, line, modules,
                           (math.radians(phi), math.radians(psi)))


#: The keys whose modules take the root link's frame as z up (a multirotor's thrust axes,
#: its mixer and its inertia about the root's axes): a robot with one of them takes no roll
#: or pitch. An arm (``tool``, ``gripper``) takes them (the turn folds into its first joint's
#: origin), as does a wheeled base (its axle and wheels measured in the mount's level frame).
LEVEL_KEYS = ("rotors", "rotor")


def _tiltable(section: Section, base: str, path: PathLike) -> None:
    """Refuse a tilted root link (``orientation`` phi or psi) where what the robot carries
    needs it level (:data:`LEVEL_KEYS`, a planar base)."""
    level = next((k for k, _, _ in section.entries if k in LEVEL_KEYS), None)
    if level is None and base == "planar":
        level = "base planar"
    if level is not None:
        raise FileFormatError(path, section.line_of("orientation"),
                              f"orientation phi and psi turn the root link of a robot "
                              f"without {', '.join(LEVEL_KEYS)} or base planar "
                              f"(their modules take the file's root link as z up); this robot "
                              f"has {level}: give 0 0 theta")


def search_path(spec: DescriptionSpec) -> tuple[str, ...]:
    """The folders meshes and ``package://`` names are looked for in, in order."""
    env = tuple(os.path.realpath(d) for d in os.environ.get(SEARCH_ENV, "").split(":") if d)
    up, folder = [], os.path.dirname(spec.path)
    for _ in range(ANCESTORS):
        up.append(folder)
        folder = os.path.dirname(folder)
    return tuple(dict.fromkeys((*spec.search, *env, *up)))


def resolve(name: str, spec: DescriptionSpec, base: str,
            inside=None) -> tuple[str, list[str]]:
    """The file a description's ``name`` (``package://``, ``file://``, relative or absolute)
    means, relative to ``base``, and where it was looked for up to it (the first candidate
    that exists, or "" when none does); with ``inside`` (a predicate on resolved paths) only the
    candidates it accepts are looked at, so that nothing outside is ever tested for existence."""
    if name.startswith("file://"):
        tried = [name[len("file://"):]]
    elif name.startswith("package://"):
        package, _, rest = name[len("package://"):].partition("/")
        tried = []
        for d in search_path(spec):
            tried.append(os.path.join(d, package, rest))
            if os.path.basename(d) == package:
                tried.append(os.path.join(d, rest))
    elif os.path.isabs(name):
        tried = [name]
    else:
        tried = [os.path.join(base, name)] + [os.path.join(d, name) for d in spec.search]
        if spec.path.lower().endswith(".urdf"):  # as PyBullet does (pybullet's diff_ring.urdf
            tried += [os.path.join(d, name) for d in search_path(spec)[1:]]  # names a
            # folder's file from the folder above), the folders above the file's too
    looked = []  # resolved one by one up to the first found: realpath stats every folder
    for real in map(os.path.realpath, tried):
        if inside is None or inside(real):
            looked.append(real)
            if os.path.isfile(real):
                return real, looked
    return "", looked


# --- safe reading ---------------------------------------------------------------------------------

class _Lines(ET.TreeBuilder):
    """A tree builder noting each element's line (ElementTree keeps none)."""

    def __init__(self) -> None:
        super().__init__()
        self.parser = None
        self.lines: dict[int, int] = {}

    def start(self, tag, attrs):
        element = super().start(tag, attrs)
        self.lines[id(element)] = self.parser.parser.CurrentLineNumber
        return element


def read_xml(path: str, data: bytes) -> tuple[ET.Element, dict]:
    """The root element of ``data`` and each element's line (by ``id``), parsed with
    defusedxml: a DTD (so any entity, internal or external) is refused.

    Raises:
        FileFormatError: ``path:line:`` a DTD or entity, or malformed XML.
    """
    # what PyBullet's reader takes and expat does not: an XML declaration after blank lines
    # (pybullet's biped2d_pybullet.urdf; blanked, so that the lines stay), NULs after the
    # root (its humanoid.urdf)
    data = data.rstrip(b"\0")
    late = re.match(rb"\s+(<\?xml[^>]*\?>)", data)
    if late:
        data = data[:late.start(1)] + b" " * len(late.group(1)) + data[late.end(1):]
    builder = _Lines()
    parser = DET.DefusedXMLParser(target=builder, forbid_dtd=True, forbid_entities=True,
                                  forbid_external=True)
    builder.parser = parser
    try:
        parser.feed(data)
        root = parser.close()
    except defusedxml.DTDForbidden:
        raise FileFormatError(path, parser.parser.CurrentLineNumber,
                              "a DTD (<!DOCTYPE ...>) is refused: description files may "
                              "declare no entities") from None
    except defusedxml.DefusedXmlException as exc:
        raise FileFormatError(path, parser.parser.CurrentLineNumber,
                              f"refused: {type(exc).__name__} (no entities, no external "
                              "references)") from None
    except ET.ParseError as exc:
        raise FileFormatError(path, exc.position[0], f"not well-formed XML: "
                              f"{str(exc).split(':')[0]}") from None
    return root, builder.lines


def read_bytes(path: str, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the description file ``path``, at most ``limit``.

    Raises:
        FileFormatError: missing, unreadable, not a regular file, or too large.
    """
    try:
        fh = open_regular(path)
    except OSError as exc:
        raise FileFormatError(path, 0, f"cannot read description: {exc.strerror or exc}") \
            from None
    with fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise FileFormatError(path, 0, f"description file too large (over {limit} bytes)")
    return data


def mesh_reader(spec: DescriptionSpec, folders=None):
    """The function the tree checks call for each mesh a description names:
    ``(name, line, scale, use) -> Mesh`` (``use`` ``file``: another file MuJoCo reads, only
    found and confined), the file resolved (:func:`resolve`), confined to
    ``folders`` when given, and checked (:func:`coopsim.description.meshes.mesh_info`), with a
    running total of triangles bounded by :data:`MAX_ROBOT_TRIANGLES`.

    Raises (from the returned function):
        FileFormatError: at the description's line: not found, another format, too many
            triangles; at the mesh's own line: malformed.
        NotAllowedError: outside ``folders``.
    """
    total = [0]

    def read(name: str, line: int, scale: tuple, use: str) -> Mesh:
        what = "file" if use in ("file", "dropped") else "mesh"
        real, tried = resolve(name, spec, os.path.dirname(spec.path),
                              None if folders is None else folders.inside)
        if folders is not None and not tried:  # outside: said without looking (no oracle)
            raise NotAllowedError(f"{spec.path}:{line}: {what} {name!r} is outside the "
                                  f"simulation's data folders ({folders.describe()})")
        if use == "dropped":  # a COLLADA file MuJoCo is not given: confined, not needed
            return Mesh(real, use, tuple(scale), 0, ((0.0,) * 3, (0.0,) * 3), line)
        if not real:
            raise FileFormatError(spec.path, line, f"{what} {name!r} not found (looked for "
                                                   f"{', '.join(tried[:4]) or 'nothing'})")
        if use == "file":  # another asset MuJoCo reads itself (an MJCF's texture): found, inside
            return Mesh(real, use, tuple(scale), 0, ((0.0,) * 3, (0.0,) * 3), line)
        try:
            info = mesh_info(real, hull=True)
        except FileFormatError as exc:
            if exc.line:  # a line inside the mesh file: that file's own message
                raise
            raise FileFormatError(spec.path, line, f"mesh {name!r}: {exc.reason}") from None
        total[0] += info.triangles
        if total[0] > MAX_ROBOT_TRIANGLES:
            raise FileFormatError(spec.path, line, f"the description's meshes hold over "
                                                   f"{MAX_ROBOT_TRIANGLES} triangles (the limit)")
        s = np.asarray(scale, dtype=float)
        lo, hi = np.asarray(info.lower) * s, np.asarray(info.upper) * s
        bounds = (tuple(map(float, np.minimum(lo, hi))), tuple(map(float, np.maximum(lo, hi))))
        return Mesh(real, use, tuple(scale), info.triangles, bounds, line)
    return read


def load_description(spec: DescriptionSpec, folders=None) -> Description:
    """The description ``spec`` names, read safely, its meshes resolved and checked, the
    whole checked (links, joints, inertias, masses, the tree, the section's names).

    Raises:
        FileFormatError: ``file:line: what is wrong`` (the description's file and line, or a
            mesh's).
        NotAllowedError: (``folders`` given) a mesh outside the run's data folders.
    """
    data = read_bytes(spec.path)
    root, lines = read_xml(spec.path, data)
    files: dict[int, str] = {}
    if root.tag == "mujoco":
        _include(spec.path, root, lines, files, folders, [len(data)], ())
    described = robotxml.parse(spec, root, lines, mesh_reader(spec, folders), files)
    for line in described.repairs:  # warned once per read: a repair is no refusal
        log.warning("%s", line)
    return described


MAX_INCLUDE_DEPTH = 8  # an MJCF's <include> within <include>d files


def _include(path: str, root: ET.Element, lines: dict, files: dict, folders, total: list,
             chain: tuple) -> None:
    """Replace each ``<include file=...>`` under ``root`` (an MJCF's, read from ``path``) by
    the children of the included file's root (``<mujoco>``, or ``<mujocoinclude>`` as
    gymnasium-robotics' Adroit hand and kitchen write it), in place, as MuJoCo does: the file
    relative to the main file's folder (``files``' first path), confined to that folder's
    tree (as meshes are) and to ``folders`` when given; ``lines`` and ``files`` learn the
    included elements' lines and file; ``total``: the bytes read so far, bounded by
    :data:`MAX_BYTES` over all the files.

    Raises:
        FileFormatError: at the ``<include>``'s line: no file, outside the folder, missing,
            included twice in one chain (a cycle), nested too deep, too many bytes; the
            included file's own line of a problem in it.
        NotAllowedError: (``folders`` given) outside the run's data folders.
    """
    main = chain[0] if chain else path
    top = os.path.dirname(os.path.realpath(main))
    for parent in list(root.iter()):
        for k, child in reversed(list(enumerate(parent))):
            if child.tag != "include":
                continue
            where, line = files.get(id(child), path), lines.get(id(child), 0)
            name = child.get("file", "")
            if not name:
                raise FileFormatError(where, line, "<include> needs a file")
            real = os.path.realpath(os.path.join(top, name))
            if not real.startswith(top + os.sep):
                raise FileFormatError(where, line, f"<include file={name!r}> is outside the "
                                      f"description's folder {top} (includes stay in its tree)")
            _confined(real, folders, f"included file {name!r}", where, line)
            if real in chain or real == os.path.realpath(main) or \
                    len(chain) >= MAX_INCLUDE_DEPTH:
                raise FileFormatError(where, line, f"<include file={name!r}>: an include "
                                      f"cycle or more than {MAX_INCLUDE_DEPTH} levels")
            if not os.path.isfile(real):
                raise FileFormatError(where, line, f"included file {name!r} not found "
                                      f"(looked for {real})")
            data = read_bytes(real, MAX_BYTES - total[0])
            total[0] += len(data)
            sub, sub_lines = read_xml(real, data)
            if sub.tag not in ("mujoco", "mujocoinclude"):  # MuJoCo drops the root itself
                raise FileFormatError(real, sub_lines.get(id(sub), 0), f"an included file's "
                                      f"root is <mujoco> or <mujocoinclude>, not <{sub.tag}>")
            lines.update(sub_lines)
            for element in sub.iter():
                files[id(element)] = real
            _include(real, sub, lines, files, folders, total, (chain or (main,)) + (real,))
            parent.remove(child)
            for j, grand in enumerate(list(sub)):
                parent.insert(k + j, grand)
            files.pop(id(sub), None), lines.pop(id(sub), None)  # it is dropped: its id too


def check_names(described: Description, spec: DescriptionSpec) -> tuple[str, str] | None:
    """The first per-module key of ``spec`` naming what ``described`` lacks, as (key, why),
    or None (each row's ``refers`` says what its names must be)."""
    links = {l.name for l in described.links}
    kinds = {"link": links, "joint": {j.name for j in described.joints},
             "moving": {j.name for j in described.moving},
             "link_or_site": links | {s.name for s in described.sites}}
    for key, value in spec.keys:
        refers = DESCRIPTION_KEYS[key].refers
        for name in (value if refers else ()):
            if name not in kinds[refers]:
                what = refers.replace("_or_", " or ").replace("moving", "moving joint")
                return key, f"{key}: {described.source} has no {what} {name!r}" + (
                    ROTOR_HINT if key == "rotors" else "")
    return None


def described_robot(section: Section, path: PathLike, folders=None,
                    taken: dict | None = None) -> tuple:
    """The robot type label and the :class:`DescriptionSpec` of a ``[ROBOT_n]`` section: the
    section's ``type`` and None when it names no description; else the type derived from the
    file (:func:`coopsim.description.robot.imported_type`: the section's ``type`` or the
    description's name), registered in this process.

    Args:
        taken: The labels earlier sections of the same scenario made, label -> (what made it,
            section name); updated. Two robots of one file with other keys get two types.

    Raises:
        FileFormatError: the description's own ``file:line`` problem; at the section's line,
            a name its keys give that the description lacks, or a type that is not imported
            or that an earlier section made from other keys.
        NotAllowedError: (``folders`` given) a file outside the run's data folders.
    """
    spec = description_spec(section, path, folders)
    if spec is None:
        return section.get("type"), None
    try:
        described = load_description(spec, folders)
    except UnknownBody as exc:  # the section's key names it: its line
        raise FileFormatError(path, spec.line_of("body"), str(exc)) from None
    problem = check_names(described, spec)
    if problem:
        raise FileFormatError(path, spec.line_of(problem[0]), problem[1])
    label = own_label(section, path, type_label(described.name), (described, spec),
                      {} if taken is None else taken)
    try:
        imported_type(label, described, spec, ROBOT_TYPES)
    except CoopsimError as exc:  # an arm's key (imported_arm.ArmError) says which
        key = getattr(exc, "key", "")
        raise FileFormatError(path, spec.line_of(key) if key else section.line_of("type"),
                              str(exc)) from None
    return label, spec


def own_label(section: Section, path: PathLike, default: str, made: tuple, taken: dict) -> str:
    """The type label of a described robot that no earlier section of the scenario made from
    other keys: the section's ``type``, else ``default`` (the file's name), else ``default_2``,
    ``default_3``... (two robots of one file, one with a lidar and one without, are two types;
    sharing one label would give both the last one's modules).

    Args:
        made: (description, spec) of this section; what tells two sections' robots apart
            (the spec's line numbers and path as written do not).
        taken: label -> (what made it, section name), updated with this section's label.

    Raises:
        FileFormatError: at the ``type`` line, a ``type`` an earlier section made otherwise.
    """
    description, spec = made
    same = (description, replace(spec, given="", lines=(), line=0))
    label, n = section.get("type") or default, 2
    while label in taken and taken[label][0] != same:
        if section.get("type"):
            raise FileFormatError(path, section.line_of("type"), f"type {label!r} is "
                                  f"[{taken[label][1]}]'s, built from other keys: give this "
                                  "robot a type of its own")
        label, n = f"{default}_{n}", n + 1
    taken.setdefault(label, (same, section.name))
    return label
