"""The ``links`` document of a robot from a description file: its kinematic tree and every
link's visual shapes, read from the model MuJoCo compiles of the file alone, so an URDF and an
MJCF say the same (the format: :mod:`coopsim.model.linkposes`; docs/protocol.md).

Bounded: no triangle goes in it (a mesh is its file's basename, scale and placement), at most
:data:`~coopsim.description.robotxml.MAX_LINKS` links and :data:`MAX_VISUALS` shapes per link.
A link's visual shapes are its geoms without contacts (URDF ``<visual>``, an MJCF's visual
class), or its collision geoms when it has none. MuJoCo re-centres a mesh on its centre of mass
and turns it to its principal axes; the document undoes that (``mesh_pos``/``mesh_quat``), so
a mesh's ``xyz``/``quat`` place the *file's* frame and a client draws the file as it is.
"""

from __future__ import annotations

import os

import numpy as np

from ...description.robot import Description, obj_memory_name
from ...model.linkposes import COLUMNS, quat_mul, quat_rotate
from ...model.scenery import rpy_quat

try:
    import mujoco
except ImportError:  # the engine is optional: mujoco.engine says how to install it
    mujoco = None

MAX_VISUALS = 64  # shapes per link in the document
_KINDS = {"box": "box", "sphere": "sphere", "cylinder": "cylinder", "capsule": "capsule",
          "ellipsoid": "ellipsoid", "mesh": "mesh"}
_DOCS: dict[int, tuple] = {}  # id(description) -> (description, document)


def _r(values, n: int = 6) -> list:
    return [round(float(v), n) for v in values]


def _standalone(d: Description):
    """The description compiled alone (its names unprefixed)."""
    from .imported import description_spec
    return description_spec(d).compile()


def _mesh_files(d: Description) -> dict[str, str]:
    """The names MuJoCo's model gives mesh files -> their names in the document
    (:meth:`~coopsim.description.robot.Description.mesh_names`; a file given from memory,
    ``coopsim_ascii_K.stl``, ``coopsim_dae_K.stl``, ``coopsim_stl_K.stl`` or
    ``coopsim_obj_K.stl`` of description.robotxml._urdf_text, is the K-th ASCII STL, COLLADA,
    binary STL or OBJ file; an
    MJCF's ``coopsim_obj_<hash>.stl``, its OBJ file named by its ``<mesh file>``), and
    ("bounds", name) -> the mesh's bounds."""
    paths = sorted({m.path for link in d.links for m in link.meshes})
    names = d.mesh_names()  # basenames, with folders where two files share one
    memory = {"coopsim_ascii": [p for p in paths if _ascii_stl(p)],
              "coopsim_dae": [p for p in paths if p.lower().endswith(".dae")],
              "coopsim_stl": [p for p in paths if p.lower().endswith(".stl")
                              and not _ascii_stl(p)],
              "coopsim_obj": [p for p in paths if p.lower().endswith(".obj")]}
    for name, _ in d.assets:  # coopsim_<kind>_K.stl: the K-th file of that kind
        kind, _, k = name[:-len(".stl")].rpartition("_")
        if kind in memory and k.isdigit() and int(k) < len(memory[kind]):
            names[name] = names[memory[kind][int(k)]]
    if d.kind != "urdf" and d.meshes:
        # an MJCF's meshes: MuJoCo's model has each at its resolved path, an OBJ given as
        # binary STL at obj_memory_name of its <mesh file> as written
        spec = mujoco.MjSpec.from_file(d.source)
        folder = os.path.join(os.path.dirname(d.source), spec.meshdir or "")
        for mesh in spec.meshes:
            path = os.path.realpath(os.path.join(folder, mesh.file))
            if mesh.file and path in names:  # (found by its basename: _visual)
                names[obj_memory_name(mesh.file)] = names[path]
    for m in [m for link in d.links for m in link.meshes] + list(d.meshes):
        if m.path in names:  # a mesh's bounds (scaled, its file's frame), by name
            names[("bounds", names[m.path])] = m.bounds
    return names


def _ascii_stl(path: str) -> bool:
    if not path.lower().endswith(".stl"):
        return False
    with open(path, "rb") as f:
        head = f.read(84)
    if not head.lstrip().lower().startswith(b"solid"):
        return False
    n = int.from_bytes(head[80:84], "little") if len(head) == 84 else -1
    return os.path.getsize(path) != 84 + 50 * n  # a binary STL may start with "solid" too


def _joints(model, body: int, moving: dict) -> list:
    out = []
    for j in range(model.body_jntadr[body], model.body_jntadr[body] + model.body_jntnum[body]):
        kind = {int(mujoco.mjtJoint.mjJNT_HINGE): "hinge",
                int(mujoco.mjtJoint.mjJNT_SLIDE): "slide"}.get(int(model.jnt_type[j]))
        if kind is None:
            continue  # a ball or free joint: not streamed
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or ""
        k = moving.get(name)
        out.append({"name": name, "kind": kind, "axis": _r(model.jnt_axis[j]),
                    "anchor": _r(model.jnt_pos[j]),
                    "zero": round(float(model.qpos0[model.jnt_qposadr[j]]), 9),
                    "column": COLUMNS[k] if k is not None and k < len(COLUMNS) else None})
    return out


def _visual(model, g: int, files: dict) -> dict | None:
    kind = _KINDS.get(mujoco.mjtGeom(model.geom_type[g]).name[7:].lower())
    if kind is None:
        return None  # a plane or height field on a robot: not drawn
    xyz, quat = np.array(model.geom_pos[g]), np.array(model.geom_quat[g])
    size = model.geom_size[g]
    shape = {"kind": kind, "size": {"box": _r(2 * size[:3]), "sphere": _r(size[:1]),
                                    "cylinder": _r((size[0], 2 * size[1])),
                                    "capsule": _r((size[0], 2 * size[1])),
                                    "ellipsoid": _r(size[:3])}.get(kind, [])}
    if kind == "mesh":
        m = model.geom_dataid[g]
        path = model.paths[model.mesh_pathadr[m]:].split(b"\0", 1)[0].decode() \
            if model.mesh_pathadr[m] >= 0 else ""
        # the file frame in the geom frame: v_geom = R(mq)^-1 (scale v_file - mp)
        inv = np.array([model.mesh_quat[m][0], *(-model.mesh_quat[m][1:])])
        quat = quat_mul(quat, inv)
        xyz = xyz - quat_rotate(quat, model.mesh_pos[m])
        name = files.get(path) or files.get(os.path.basename(path), os.path.basename(path))
        shape.update(file=name, scale=_r(model.mesh_scale[m]),
                     bounds=[_r(b) for b in files.get(("bounds", name), ((0,) * 3, (0,) * 3))])
    shape.update(xyz=_r(xyz), quat=_r(quat), color=_r(_color(model, g), 3))
    return shape


_DEFAULT_RGBA = (0.5, 0.5, 0.5, 1.0)  # MuJoCo's geom rgba when none is given


def _color(model, g: int) -> np.ndarray:
    """Geom ``g``'s colour as MuJoCo draws it: its material's where it has one and gives no
    rgba of its own (robosuite's Spot: yellow and black materials), else its rgba."""
    mat = int(model.geom_matid[g])
    if mat >= 0 and np.allclose(model.geom_rgba[g], _DEFAULT_RGBA):
        return model.mat_rgba[mat]
    return model.geom_rgba[g]


def _visuals(model, body: int, files: dict) -> list:
    geoms = range(model.body_geomadr[body], model.body_geomadr[body] + model.body_geomnum[body]) \
        if model.body_geomadr[body] >= 0 else range(0)
    seen = [g for g in geoms if model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0]
    shapes = (_visual(model, g, files) for g in (seen or geoms))
    return [s for s in shapes if s is not None][:MAX_VISUALS]


def links_document(d: Description) -> dict:
    """The ``links`` document of ``d`` (module docstring; made once per description).

    Raises:
        Exception: MuJoCo's own errors when it cannot compile the file (a checked
            description compiles: the world built it already).
    """
    cached = _DOCS.get(id(d))
    if cached is not None and cached[0] is d:
        return cached[1]
    model, files = _standalone(d), _mesh_files(d)
    moving = {j.name: k for k, j in enumerate(d.moving)}
    links = []
    for b in range(1, model.nbody):
        if int(model.body_rootid[b]) != 1:  # MuJoCo attaches the first body's tree alone
            continue
        parent = int(model.body_parentid[b])
        # an MJCF root sits on the base frame: its own pos and orientation in the file are
        # not added; an URDF's first body keeps its joint's origin on a "world" root link
        # (mujoco.imported.attach)
        xyz, quat = ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)) if parent == 0 \
            and d.kind != "urdf" else (model.body_pos[b], model.body_quat[b])
        links.append({
            "name": mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or f"body{b}",
            "parent": "" if parent == 0 else
            mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, parent) or f"body{parent}",
            "xyz": _r(xyz), "quat": _r(quat),
            "moving": _joints(model, b, moving), "visuals": _visuals(model, b, files)})
    if links and all(link["name"] != d.root for link in links):
        # MuJoCo made the root its world (an URDF's ``world`` link: the Z1's, the URs'): it
        # is listed all the same, at the robot's body frame, the old roots hanging from it
        for link in links:
            link["parent"] = link["parent"] or d.root
        links.insert(0, {"name": d.root, "parent": "", "xyz": [0.0] * 3,
                         "quat": [1.0, 0.0, 0.0, 0.0], "moving": [], "visuals": []})
    doc = {"root": d.root, "columns": min(len(moving), len(COLUMNS)), "links": links}
    _DOCS[id(d)] = (d, doc)
    return doc


_GATHER: dict = {}  # (id(model), handles' ids) -> (model, qpos addresses (K, MAX), valid)


def positions(imports, model, data, handles: list) -> np.ndarray:
    """(K, :data:`~coopsim.model.linkposes.MAX_COLUMNS`) the moving joints' positions (rad or
    m, description order) of the described robots whose mount bodies are ``handles`` (NaN
    beyond a robot's joints, and for a body carrying none); one gather per step, its
    addresses worked out once per model and handles."""
    key = (id(model), tuple(id(h) for h in handles))
    held = _GATHER.get(key)
    if held is None or held[0] is not model:
        if len(_GATHER) >= 32:  # models and layouts gone
            _GATHER.clear()
        by_mount = {id(i.mount): i for i in imports}
        at = np.zeros((len(handles), len(COLUMNS)), dtype=np.int64)
        ok = np.zeros(at.shape, dtype=bool)
        for k, h in enumerate(handles):
            found = by_mount.get(id(h))
            if found is not None and found.joints:
                q = found.addresses()[0][:len(COLUMNS)]
                at[k, :len(q)], ok[k, :len(q)] = q, True
        held = _GATHER[key] = (model, at, ok)
    if not len(data.qpos):  # no joint in the whole world (fixed robots only): none to read
        return np.full(held[1].shape, np.nan)
    out = data.qpos[held[1]]
    out[~held[2]] = np.nan
    return out


def document_of(imports, handle) -> dict | None:
    """The ``links`` document of the described robot mounted on body ``handle`` (None: no
    description is mounted there)."""
    found = next((i for i in imports if i.mount is handle), None)
    if found is None:
        return None
    doc, tilt = links_document(found.mounted.description), found.mounted.spec.tilt
    if not any(tilt):
        return doc
    key = (id(doc), tuple(tilt))
    held = _TILTED.get(key)
    if held is None or held[0] is not doc:  # the root turned on its mount (the roll, pitch)
        turn = rpy_quat(tilt[0], tilt[1], 0.0)  # before the root's own (an URDF's "world")
        turned = {**doc, "links": [
            {**link, "quat": _r(quat_mul(turn, link["quat"])),
             "xyz": _r(quat_rotate(turn, link["xyz"]))} if not link["parent"] else link
            for link in doc["links"]]}
        held = _TILTED[key] = (doc, turned)
    return held[1]


_TILTED: dict = {}  # (id(document), tilt) -> (document, the document with its root turned)


def roll_wheels(imports, model, data, dt: float) -> None:
    """Turn each described wheeled base's wheel joints by what its rims rolled this step:
    the base is driven by the built-in drive model (its links do not touch the floor), so
    its wheels would stand still; each turns by ``(v -/+ w axle / 2) / radius * dt`` rad
    (``v`` the base's forward speed, ``w`` its turn rate, body frame), signed by its joint
    axis against the base's left (+y), so the links, ``/tf`` and ``joint_states`` show them
    rolling. Nothing else reads these joints."""
    for imported in imports:
        wheels = imported.mounted.wheels
        if wheels is None or imported.mount is None or imported.mount.id < 0:
            continue
        speed = np.zeros(6)
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, imported.mount.id,
                                 speed, 1)  # body frame: angular, then linear
        left_y = data.xmat[imported.mount.id].reshape(3, 3)[:, 1]
        for name, side in ((wheels.left, -1.0), (wheels.right, 1.0)):
            found = imported.joints.get(name)
            if found is None:
                continue
            jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, imported.prefix + name)
            sign = 1.0 if float(data.xaxis[jid] @ left_y) >= 0 else -1.0
            rim = speed[3] + side * speed[2] * wheels.axle / 2
            data.qpos[found[0]] += sign * rim / wheels.radius * dt
