"""A lean reader of a COLLADA (``.dae``) file's triangles: the scene's geometry instances,
their node transforms composed and applied as pycollada does (float32, the same numpy calls
in the same order, so the same bits), without pycollada's object model and without the byte
edits its reader needs first (:func:`coopsim.formats.collada._positions_only`).

Read over defusedxml (a DTD, an entity, an external reference refused; the number texts cut
out first and given back, :func:`_cut`), the positions' text parsed to the bits of numpy's
``fromstring``, which pycollada uses (:mod:`coopsim.formats.numbertext`); normals, texture
coordinates, materials, images, effects, cameras, lights and animations are not read.

What it reads: ``<node>`` trees of ``<translate>``, ``<rotate>``, ``<scale>``, ``<matrix>`` and
``<instance_geometry>``; meshes of ``<source>``, one ``<vertices>`` of positions only,
``<triangles>`` (its first ``<p>``, as pycollada) and ``<polylist>`` of polygons of 3 corners
or more (fanned from the first corner, as pycollada). Anything else (``<instance_node>``,
``<library_nodes>``, controllers and skins, ``<lines>``, ``<polygons>``, strips and fans,
``<lookat>``, ``<skew>``, a ``<vertices>`` with normals, a broken or doubled reference,
numbers that do not parse, a polygon of fewer than 3 corners, a negative or out-of-range
index) is not read here: :func:`triangles` returns None and pycollada reads the file, with
its own ``file:line: why`` where the file is malformed. tests/formats/test_daereader.py
compares both readers to the bit.

Units: the file's (its ``<unit meter>`` is returned, applied by the caller), its frame.
"""

from __future__ import annotations

import re

import numpy as np

from .numbertext import decimals

#: Per-corner inputs of a primitive that are not read (pycollada's reader is given them
#: renamed, see collada._UNUSED): their sources are neither parsed nor checked.
_UNUSED = frozenset(("NORMAL", "TEXCOORD", "TEXTANGENT", "TEXBINORMAL", "COLOR", "TANGENT",
                     "BINORMAL"))
#: What may stand at the file's top: what is read, and the libraries that are not (collada's
#: _UNREAD, cut before pycollada parses the file).
_TOP = frozenset(("asset", "extra", "library_images", "library_effects", "library_materials",
                  "library_cameras", "library_lights", "library_animations",
                  "library_geometries", "library_visual_scenes", "scene"))
#: Libraries read only when empty (44 files of example-robot-data carry an empty controllers').
_EMPTY = frozenset(("library_controllers", "library_nodes"))
#: Instances in a node that pycollada's reader binds to nothing: their libraries are cut.
_UNBOUND = frozenset(("instance_camera", "instance_light"))
_IDENTITY = np.identity(4, dtype=np.float32)
_IDENTITY.flags.writeable = False


class _Unread(Exception):
    """The file holds something this reader does not read: pycollada reads it."""


def triangles(data: bytes, tags: list[int] | None = None) -> tuple[list, float] | None:
    """(parts, unit) of the COLLADA bytes ``data``: each geometry instance's primitives in
    pycollada's order, as (the bound float32 (n, 3) vertices, node transforms applied, the
    (t, 3) int32 vertex index of its triangles), and the metres per file unit; or None
    where the file holds what this reader does not read (:mod:`this module's docstring
    <coopsim.formats.daereader>`: pycollada then reads it). ``tags``: :func:`tag_starts`
    of ``data``, where known."""
    cut = _cut(data, tag_starts(data) if tags is None else tags)
    root = _parsed(cut[0] if cut is not None else data)
    if root is not None and cut is not None and not _restored(root, cut[1]):
        root = _parsed(data)  # the cut did not match the tree: read the whole file
    if root is None:
        return None  # pycollada's reader says where
    try:
        return _Document(root).read()
    except (_Unread, ValueError, TypeError, KeyError, IndexError, AttributeError,
            OverflowError):  # what numpy or a missing attribute raises: pycollada says why
        return None


def _parsed(data: bytes):
    """The element tree of ``data`` (defusedxml: no DTD, entity or external reference), or
    None where it is not well-formed XML."""
    import defusedxml
    import defusedxml.ElementTree as DET
    try:
        return DET.fromstring(data, forbid_dtd=True)
    except (DET.ParseError, defusedxml.DefusedXmlException, ValueError):
        return None


#: The openings of the elements whose text is cut before the XML is parsed (:func:`_cut`).
_OPEN = re.compile(rb"<(float_array)\b[^>]*>|<(p)>")


def tag_starts(data: bytes) -> list[int]:
    """The offset of every ``<`` in ``data``: a COLLADA file's megabytes are numbers between
    a few thousand tags (B1-Z1's 61 MB: 1,414), so one ``memchr`` a tag finds them all at
    memory speed, where a search for a longer string or a regex over the numbers cost
    7-20 ms a 24 MB file each."""
    starts, at = [], data.find(b"<")
    while at >= 0:
        starts.append(at)
        at = data.find(b"<", at + 1)
    return starts


def _cut(data: bytes, tags: list[int]) -> tuple[bytes, dict[str, list]] | None:
    """(``data`` without the text of its ``<float_array>`` and ``<p>`` elements, those
    texts as bytes by element name in the file's order), or None where the file is not
    cut (a comment, CDATA or declaration, or a character XML forbids that numpy reads as a
    space: the whole file is parsed). The texts are most of a file's bytes: parsing the
    rest cost a tenth as much (B1-Z1: 0.15 s of CPU before). Bytes, not XML:
    :func:`_restored` checks the texts against the tree's elements. ``tags``:
    :func:`tag_starts` of ``data``."""
    if b"\x0b" in data or b"\x0c" in data:
        return None
    parts, texts, at = [], {"float_array": [], "p": []}, 0
    for start in tags:
        if data.startswith(b"!", start + 1):
            return None
        m = _OPEN.match(data, start)
        if m is None:
            continue
        name = (m.group(1) or m.group(2)).decode()
        if m.group(0).endswith(b"/>"):
            texts[name].append(None)
            continue
        end = data.find(b"<", m.end())
        if start < at or not data.startswith(f"</{name}>".encode(), end):
            return None
        parts.append(data[at:m.end()])
        texts[name].append(data[m.end():end])
        at = end
    parts.append(data[at:])
    return b"".join(parts), texts


def _restored(root, texts: dict[str, list]) -> bool:
    """Give the cut texts back to ``root``'s ``<float_array>`` and ``<p>`` elements, in
    order; False (nothing given) where their numbers differ from the cut's or an element
    of the cut has text in the tree."""
    ns = root.tag[:root.tag.index("}") + 1] if root.tag.startswith("{") else ""
    found = {name: list(root.iter(ns + name)) for name in texts}
    if any(len(found[name]) != len(texts[name]) for name in texts) or \
            any(e.text is not None or len(e) for name in texts for e in found[name]):
        return False
    for name, elements in found.items():
        for element, text in zip(elements, texts[name]):
            element.text = text
    return True


class _Document:
    """One parsed file: its namespace, geometries by id, and the walk of its scene."""

    def __init__(self, root) -> None:
        if not root.tag.startswith("{") or not root.tag.endswith("}COLLADA"):
            raise _Unread("not a namespaced COLLADA root")
        self.ns = root.tag[:-len("COLLADA")]
        self.root = root
        for child in root:
            name = self._local(child)
            if name not in _TOP and not (name in _EMPTY and len(child) == 0):
                raise _Unread(f"a {child.tag} is not read here")
        self.meshes = {}
        self.bound: dict = {}  # geometry id -> its primitives (vertex, index), unbound
        for lib in root.findall(self.ns + "library_geometries"):
            for geom in lib:
                if self._local(geom) == "extra":
                    continue
                gid = geom.get("id")
                if self._local(geom) != "geometry" or not gid or gid in self.meshes:
                    raise _Unread("a geometry without a unique id")
                self.meshes[gid] = geom

    def _local(self, element) -> str:
        tag = element.tag
        if not isinstance(tag, str) or not tag.startswith(self.ns):
            raise _Unread(f"a foreign element {tag!r}")
        return tag[len(self.ns):]

    def unit(self) -> float:
        """Metres per file unit, as pycollada reads ``<asset><unit meter>`` (a Python float;
        unreadable or 0: 1)."""
        asset = self.root.find(self.ns + "asset")
        node = asset.find(self.ns + "unit") if asset is not None else None
        try:
            meter = float(node.get("meter")) if node is not None else None
        except (TypeError, ValueError):
            meter = None
        return meter or 1.0

    def scene(self):
        """The ``<visual_scene>`` pycollada binds: the one ``<scene>`` names, else the
        first."""
        scenes = {}
        order = []
        for lib in self.root.findall(self.ns + "library_visual_scenes"):
            for vs in lib.findall(self.ns + "visual_scene"):
                if vs.get("id") in scenes:
                    raise _Unread("two visual scenes of one id")
                scenes[vs.get("id")] = vs
                order.append(vs)
        named = self.root.find(f"{self.ns}scene/{self.ns}instance_visual_scene")
        if named is not None:
            url = named.get("url") or ""
            if not url.startswith("#") or url[1:] not in scenes:
                raise _Unread("the default scene's reference is broken")
            return scenes[url[1:]]
        if not order:
            raise _Unread("no scene")
        return order[0]

    def read(self) -> tuple[list, float]:
        unit = self.unit()
        parts: list = []
        for node in self.scene().findall(self.ns + "node"):
            self._node(node, None, parts)
        return parts, unit

    def _node(self, node, parent, parts: list) -> None:
        """Append the node's geometry instances (depth first, document order) bound to
        its matrix composed onto ``parent`` (pycollada's ``Node.objects``)."""
        transforms, children = [], []
        for child in node:
            name = self._local(child)
            if name in _TRANSFORMS:
                transforms.append(_TRANSFORMS[name](child.text))
            elif name in ("node", "instance_geometry"):
                children.append(child)
            elif name in _UNBOUND and not (child.get("url") or "").startswith("#"):
                raise _Unread(f"a <{name}> of a malformed reference")
            elif name not in ("extra", "asset", *_UNBOUND):
                raise _Unread(f"a <{name}> in a node")
        if not transforms:
            matrix = _IDENTITY
        elif len(transforms) == 1:
            matrix = transforms[0].copy()
        else:
            matrix = np.identity(4, dtype=np.float32)
            for t in transforms:
                matrix = np.dot(matrix, t)
        bound = matrix if parent is None else np.dot(parent, matrix)
        for child in children:
            if self._local(child) == "node":
                self._node(child, bound, parts)
            else:
                self._instance(child, bound, parts)

    def _instance(self, element, matrix: np.ndarray, parts: list) -> None:
        url = element.get("url") or ""
        if not url.startswith("#") or url[1:] not in self.meshes:
            raise _Unread("a broken geometry reference")
        if url[1:] not in self.bound:
            self.bound[url[1:]] = _Mesh(self, self.meshes[url[1:]]).primitives()
        for vertex, index in self.bound[url[1:]]:
            # pycollada's BoundTriangleSet: vertex * asmatrix(matrix).T[:3, :3] + matrix[:3, 3]
            parts.append((np.dot(vertex, matrix.T[:3, :3]) + matrix[:3, 3], index))


def _floats(text, count: int | None = None) -> np.ndarray:
    """pycollada's parse of a transform's numbers (float32, ``count`` of them)."""
    if text is None:
        raise _Unread("a transform without numbers")
    floats = np.fromstring(text, dtype=np.float32, sep=" ")
    if count is not None and len(floats) != count:
        raise _Unread("a transform of the wrong length")
    return floats


def _translate(text) -> np.ndarray:
    x, y, z = _floats(text, 3)
    matrix = np.identity(4, dtype=np.float32)
    matrix[:3, 3] = [x, y, z]
    return matrix


def _rotate(text) -> np.ndarray:
    """pycollada's ``makeRotationMatrix`` on its float32 numbers (the angle in degrees)."""
    x, y, z, angle = _floats(text, 4)
    angle = angle * np.pi / 180.0
    c = np.cos(angle)
    s = np.sin(angle)
    t = (1 - c)
    return np.array([[t * x * x + c, t * x * y - s * z, t * x * z + s * y, 0],
                     [t * x * y + s * z, t * y * y + c, t * y * z - s * x, 0],
                     [t * x * z - s * y, t * y * z + s * x, t * z * z + c, 0],
                     [0, 0, 0, 1]], dtype=np.float32)


def _scale(text) -> np.ndarray:
    x, y, z = _floats(text, 3)
    matrix = np.identity(4, dtype=np.float32)
    matrix[0, 0] = x
    matrix[1, 1] = y
    matrix[2, 2] = z
    return matrix


def _matrix(text) -> np.ndarray:
    floats = _floats(text, 16)
    floats.shape = (4, 4)
    return floats


_TRANSFORMS = {"translate": _translate, "rotate": _rotate, "scale": _scale, "matrix": _matrix}


class _Mesh:
    """One ``<geometry>``'s ``<mesh>``: its positions and its primitives' vertex indices."""

    def __init__(self, doc: _Document, geometry) -> None:
        self.doc = doc
        meshes = [m for m in geometry if doc._local(m) != "extra"]
        if len(meshes) != 1 or doc._local(meshes[0]) != "mesh":
            raise _Unread("a geometry that is not one mesh")
        self.sources, self.vertices, self.prims = {}, None, []
        for child in meshes[0]:
            name = doc._local(child)
            if name == "source":
                if not child.get("id") or child.get("id") in self.sources:
                    raise _Unread("a source without a unique id")
                self.sources[child.get("id")] = child
            elif name == "vertices" and self.vertices is None:
                self.vertices = child
            elif name in ("triangles", "polylist"):
                self.prims.append(child)
            elif name != "extra":
                raise _Unread(f"a <{name}> in a mesh")

    def positions(self) -> tuple[str, np.ndarray]:
        """(the ``<vertices>`` id, its positions: float32 (n, 3), NaN read as 0)."""
        inputs = self.vertices.findall(self.doc.ns + "input") if self.vertices is not None \
            else []
        vid = self.vertices.get("id") if self.vertices is not None else None
        if len(inputs) != 1 or inputs[0].get("semantic") != "POSITION" or not vid or \
                vid in self.sources:
            raise _Unread("a <vertices> that is not one POSITION input")
        url = inputs[0].get("source") or ""
        source = self.sources.get(url[1:])
        if source is None or not url.startswith("#"):
            raise _Unread("a broken position reference")
        return vid, _position_data(self.doc, source)

    def primitives(self) -> list[tuple[np.ndarray, np.ndarray]]:
        vid, vertex = self.positions()
        self._check_sources(vid)
        out = []
        for prim in self.prims:
            index = _vertex_index(self.doc, prim, vid)
            if len(index):
                if index.min() < 0 or index.max() >= len(vertex):
                    raise _Unread("an index out of the positions")
                out.append((vertex, index))
        return out

    def _check_sources(self, vid: str) -> None:
        """Every source is named by an input, those of the unread inputs (normals, texture
        coordinates) by no read input, and each has a float array and an accessor: as
        pycollada's reader sees them (collada._positions_only empties those arrays)."""
        position = self.vertices.find(self.doc.ns + "input").get("source")[1:]
        unread = set()
        for prim in self.prims:
            for element in prim.findall(self.doc.ns + "input"):
                source = element.get("source") or ""
                if element.get("semantic") in _UNUSED and source.startswith("#") and \
                        len(source) > 1:
                    unread.add(source[1:])
                elif element.get("semantic") != "VERTEX" or source != "#" + vid:
                    raise _Unread("an input this reader does not know")
        if position in unread or set(self.sources) != unread | {position}:
            raise _Unread("a source named by read and unread inputs, or by none")
        for sid in unread:  # pycollada's FloatSource.load of an emptied array
            accessor = self.sources[sid].find(f"{self.doc.ns}technique_common/"
                                              f"{self.doc.ns}accessor")
            if self.sources[sid].find(self.doc.ns + "float_array") is None or \
                    accessor is None or accessor.find(self.doc.ns + "param") is None:
                raise _Unread("a source without a float array or an accessor")


def _position_data(doc: _Document, source) -> np.ndarray:
    """pycollada's FloatSource of positions: float32, NaN set to 0, three columns."""
    array = source.find(doc.ns + "float_array")
    params = source.findall(f"{doc.ns}technique_common/{doc.ns}accessor/{doc.ns}param")
    if array is None or len(params) != 3 or \
            [p.get("name") for p in params] == ["S", "T", "P"]:
        raise _Unread("positions that are not three float columns")
    text = array.text
    if text is None or text.isspace():
        data = np.array([], dtype=np.float32)
    else:
        data = decimals(text) if isinstance(text, bytes) else None
        if data is None:
            data = np.fromstring(text, dtype=np.float32, sep=" ")
        data[np.isnan(data)] = 0
    if data.size % 3:
        raise _Unread("positions not a multiple of three")
    return data.reshape((-1, 3))


def _ints(element) -> np.ndarray:
    text = element.text
    if text is None or text.isspace():
        return np.array([], dtype=np.int32)
    return np.fromstring(text, dtype=np.int32, sep=" ")


def _vertex_index(doc: _Document, prim, vid: str) -> np.ndarray:
    """(t, 3) int32 vertex indices of a ``<triangles>`` or ``<polylist>`` (fanned)."""
    offsets, vertex = [], []
    for element in prim.findall(doc.ns + "input"):
        offset = int(element.get("offset"))
        offsets.append(offset)
        if element.get("semantic") == "VERTEX":
            if element.get("source") != "#" + vid:
                raise _Unread("a VERTEX input not naming the <vertices>")
            vertex.append(offset)
    if len(vertex) != 1:
        raise _Unread("not one VERTEX input")
    stride = max(offsets) + 1
    p = prim.find(doc.ns + "p")
    if p is None:
        raise _Unread("a primitive without <p>")
    index = _ints(p)
    if index.size % stride:
        raise _Unread("indices not a multiple of the inputs")
    rows = index.reshape(-1, stride)[:, vertex[0]]
    if doc._local(prim) == "triangles":
        if len(rows) % 3:
            raise _Unread("triangles' corners not a multiple of 3")
        return rows.reshape(-1, 3)
    vcount = prim.find(doc.ns + "vcount")
    if vcount is None:
        raise _Unread("a polylist without <vcount>")
    counts = _ints(vcount)
    if len(rows) == 0:
        if len(counts):  # pycollada's triangulation fails on it
            raise _Unread("polygon counts without corners")
        return rows.reshape(0, 3)
    if (counts < 3).any() or int(counts.sum(dtype=np.int64)) != len(rows):
        raise _Unread("a polygon of under 3 corners, or counts not the corners")
    return _fanned(rows, counts)


def _fanned(rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(t, 3) the polygons' fans: corners (0, k + 1, k + 2) of each (pycollada's
    ``Polylist.triangleset``)."""
    if (counts == 3).all():
        return rows.reshape(-1, 3)
    starts = np.cumsum(counts) - counts
    first = np.repeat(starts, counts - 2)
    k = np.arange(len(first)) - np.repeat(np.cumsum(counts - 2) - (counts - 2), counts - 2)
    corner = first + k
    return np.stack([rows[first], rows[corner + 1], rows[corner + 2]], axis=1)
