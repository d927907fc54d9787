"""coopsim's reader of a COLLADA (``.dae``) file's triangles: the scene's geometry instances,
their node transforms composed and applied with pycollada's float32 numpy calls in its order
(so the triangles of a file pycollada reads are its bits: tests/formats/test_daereader.py,
pycollada the oracle), bounded, every refusal ``file:line: what is wrong``.

Read over defusedxml (a DTD, an entity, an external reference refused); the texts of the
number arrays (``<float_array>``, ``<p>``) are cut out by byte offsets before the XML is
parsed (:func:`_cut`: most of a file's bytes) and parsed from the file's own bytes a
quarter megabyte at a time (:data:`CHUNK`), so no copy of them is made whole and no single
numpy call holds the interpreter for long: a load's parse leaves the stepper thread its
turns. The positions' text is parsed to the bits of numpy's ``fromstring``
(:mod:`coopsim.description.numbertext`); normals, texture coordinates, materials, images,
effects, cameras, lights, controllers and animations are not read.

What it reads: ``<node>`` trees of ``<translate>``, ``<rotate>``, ``<scale>`` and ``<matrix>``,
``<instance_geometry>`` and ``<instance_node>`` (a node of ``<library_nodes>`` or of the
scene); meshes of a ``<vertices>`` with a POSITION input and ``<triangles>`` (its first
``<p>``), ``<polylist>``, ``<polygons>`` (polygons fanned from their first corner),
``<tristrips>`` and ``<trifans>``; ``<lines>`` and ``<linestrips>`` are skipped (nothing to
draw or collide). Refused, at the element's line: ``<lookat>`` and ``<skew>``, polygons with
holes, a geometry that is not a ``<mesh>``, a broken reference, numbers that do not parse
or are not finite, an index outside the positions, more than :data:`MAX_TAGS` tags, a
walk visiting more than :data:`MAX_VISITS` nodes and instances (an ``<instance_node>``
cycle), instances making more than the triangle limit (counted before any is transformed).

Units: the file's (its ``<unit meter>`` is returned, applied by the caller), its frame.
"""

from __future__ import annotations

import bisect
import math
import re
import xml.etree.ElementTree as ET

import numpy as np

from ..model.errors import FileFormatError
from .numbertext import decimals

MAX_TAGS = 100_000  # '<' of one file (example-robot-data's largest: 13,011)
MAX_VISITS = 100_000  # nodes and instances a scene's walk visits (an <instance_node>: again)
CHUNK = 1 << 18  # bytes of number text parsed (or XML fed) in one call: a few ms
_FLOAT = b"0123456789.+-eE \t\n\r"
_INT = b"0123456789+- \t\n\r"
WORD = 1024  # bytes of one number's text, at most
_SPACE = re.compile(rb"[ \t\n\r]")
#: A word of a number text holding a character no number of its kind has (float: True).
_WORD = {True: re.compile(rb"[^ \t\n\r]*[^0-9.+\-eE \t\n\r][^ \t\n\r]*"),
         False: re.compile(rb"[^ \t\n\r]*[^0-9+\- \t\n\r][^ \t\n\r]*")}
_SKIPPED = frozenset(("lines", "linestrips"))
_PRIMITIVES = frozenset(("triangles", "polylist", "polygons", "tristrips", "trifans"))
_IDENTITY = np.identity(4, dtype=np.float32)
_IDENTITY.flags.writeable = False


def triangles(path: str, data: bytes, tags: list[int] | None = None,
              limit: int = 1_000_000) -> tuple[list, float]:
    """(parts, unit) of the COLLADA bytes ``data`` (read from ``path``): each geometry
    instance's primitives in pycollada's order, as (the float32 (n, 3) vertices its
    triangles use, node transforms applied, the (t, 3) int64 vertex index of its triangles),
    and the metres per file unit. ``tags``: :func:`tag_starts` of ``data``, where known.

    Raises:
        FileFormatError: ``path:line:`` what is wrong (this module's docstring), or over
            ``limit`` triangles.
    """
    tags = tag_starts(data) if tags is None else tags
    if len(tags) > MAX_TAGS:
        raise FileFormatError(path, line_at(data, tags[MAX_TAGS]),
                              f"COLLADA file has over {MAX_TAGS} tags (the limit)")
    cut = _cut(data, tags)
    source = _Source(path, data)
    root = None
    if cut is not None:
        root = source.parse(cut[0], cut[2])
        if not source.restore(root, cut[1]):
            root = None  # the cut did not match the tree: read the whole file
    if root is None:
        root = source.parse(data, [])
    return _Document(source, root, limit).read()


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


def line_at(data: bytes, offset: int) -> int:
    """The 1-based line of byte ``offset`` of ``data``."""
    return data.count(b"\n", 0, max(0, offset)) + 1


#: The openings of the elements whose text is cut before the XML is parsed (:func:`_cut`).
_OPEN = re.compile(rb"<(float_array)\b[^>]*>|<(p)>")


def _cut(data: bytes, tags: list[int]) -> tuple[bytes, dict, list] | None:
    """(``data`` without the text of its ``<float_array>`` and ``<p>`` elements, the
    (start, end) of each of those texts in ``data`` by element name in the file's order,
    the shifts: (offset in the cut bytes, bytes cut before it) at each cut), or None where
    the file is not cut (a CDATA section or declaration, or a character XML forbids that
    numpy reads as a space: the whole file is parsed). Comments are skipped. Bytes, not
    XML: :meth:`_Source.restore` checks the texts against the tree's elements."""
    if b"\x0b" in data or b"\x0c" in data:
        return None
    parts, texts, shifts, at, removed, skip = [], {"float_array": [], "p": []}, [], 0, 0, 0
    for start in tags:
        if start < skip:
            continue
        if data.startswith(b"!", start + 1):
            if not data.startswith(b"!--", start + 1):
                return None
            end = data.find(b"-->", start + 4)
            if end < 0:
                return None
            skip = end + 3
            continue
        m = _OPEN.match(data, start)
        if m is None:
            continue
        name = (m.group(1) or m.group(2)).decode()
        if m.group(0).endswith(b"/>"):
            texts[name].append(None)
            continue
        end = data.find(b"<", m.end())
        if not data.startswith(f"</{name}>".encode(), end):
            return None
        parts.append(data[at:m.end()])
        texts[name].append((m.end(), end))
        where = m.end() - removed  # the text's place in the cut bytes
        removed += end - m.end()
        shifts.append((where, removed))
        at = end
    parts.append(data[at:])
    return b"".join(parts), texts, shifts


class _Lines(ET.TreeBuilder):
    """A tree builder noting each element's byte offset in the parsed bytes."""

    def __init__(self) -> None:
        super().__init__()
        self.parser = None
        self.offsets: dict[int, int] = {}

    def start(self, tag, attrs):
        element = super().start(tag, attrs)
        self.offsets[id(element)] = self.parser.parser.CurrentByteIndex
        return element


class _Source:
    """The file's bytes, its parsed tree's element offsets, and the cut texts."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path, self.data = path, data
        self.offsets: dict[int, int] = {}
        self.shifts: list[tuple[int, int]] = []
        self.spans: dict[int, tuple[int, int]] = {}  # id(element) -> its text in data

    def parse(self, xml: bytes, shifts: list):
        """The root element of ``xml`` (``data`` or its cut, whose ``shifts`` map offsets
        back), fed in :data:`CHUNK` pieces.

        Raises:
            FileFormatError: a DTD, an entity or an external reference; malformed XML.
        """
        import defusedxml
        import defusedxml.ElementTree as DET
        self.shifts = shifts
        builder = _Lines()
        parser = DET.DefusedXMLParser(target=builder, forbid_dtd=True, forbid_entities=True,
                                      forbid_external=True)
        builder.parser = parser
        try:
            for at in range(0, len(xml), CHUNK):
                parser.feed(xml[at:at + CHUNK])
            root = parser.close()
        except defusedxml.DefusedXmlException as exc:
            raise FileFormatError(self.path, self._at(parser.parser.CurrentByteIndex),
                                  f"refused: {type(exc).__name__} (a COLLADA file may declare "
                                  "no DTD, entity or external reference)") from None
        except ET.ParseError as exc:
            where = parser.parser.ErrorByteIndex
            line = self._at(where) if where >= 0 else exc.position[0]
            raise FileFormatError(self.path, line, "not well-formed XML: "
                                  f"{str(exc).split(':')[0]}") from None
        self.offsets = builder.offsets
        return root

    def _at(self, offset: int) -> int:
        """The line of the parsed bytes' ``offset`` in the file."""
        k = bisect.bisect_right(self.shifts, (offset, math.inf)) - 1
        return line_at(self.data, offset + (self.shifts[k][1] if k >= 0 else 0))

    def line(self, element) -> int:
        """The line of ``element`` in the file (0 where unknown)."""
        offset = self.offsets.get(id(element))
        return 0 if offset is None else self._at(offset)

    def restore(self, root, texts: dict[str, list]) -> bool:
        """Note the cut texts of ``root``'s ``<float_array>`` and ``<p>`` elements, in
        order; False (nothing noted) where their numbers differ from the cut's or an element
        of the cut has text in the tree."""
        ns = root.tag[:root.tag.index("}") + 1] if root.tag.startswith("{") else ""
        found = {name: list(root.iter(ns + name)) for name in texts}
        if any(len(found[name]) != len(texts[name]) for name in texts) or \
                any(e.text is not None or len(e) for name in texts for e in found[name]):
            return False
        for name, elements in found.items():
            for element, span in zip(elements, texts[name]):
                if span is not None:
                    self.spans[id(element)] = span
        return True

    def chunks(self, element):
        """The text of ``element`` in pieces of about :data:`CHUNK` bytes cut at spaces, as
        (the piece's offset in the file or None where unknown, the piece's bytes)."""
        span = self.spans.get(id(element))
        if span is not None:
            yield from _pieces(self.data, *span)
        elif element.text is not None:
            text = element.text.encode("utf-8", "replace")
            yield from ((None, piece) for _, piece in _pieces(text, 0, len(text)))

    def refuse(self, element, why: str) -> FileFormatError:
        return FileFormatError(self.path, self.line(element), why)


def _pieces(buf: bytes, start: int, end: int):
    """(offset, ``buf[offset:...]``): ``buf[start:end]`` in pieces of about :data:`CHUNK`
    bytes, each cut at a space.

    Raises:
        ValueError: a word of over :data:`WORD` bytes (no number is that long).
    """
    while start < end:
        cut = start + CHUNK
        if cut >= end:
            cut = end
        else:
            space = _SPACE.search(buf, cut, min(end, cut + WORD))
            if space is None and cut + WORD < end:
                raise ValueError(f"a word of over {WORD} characters")
            cut = space.start() if space is not None else end
        yield start, buf[start:cut]
        start = cut


def _numbers(source: _Source, element, floats: bool) -> np.ndarray:
    """The numbers of ``element``'s text: float32 (``floats``; refused where one is not
    finite) or int64, parsed a chunk at a time.

    Raises:
        FileFormatError: at the element's line: a word that is not a number, a number that
            is not finite.
    """
    allowed, dtype = (_FLOAT, np.float32) if floats else (_INT, np.int64)
    name = element.tag.rpartition("}")[2]
    pieces, count, chunks = [], 0, source.chunks(element)
    while True:
        try:
            offset, chunk = next(chunks)
        except StopIteration:
            break
        except ValueError as exc:  # a word too long to be a number
            raise source.refuse(element, f"<{name}> holds {exc}") from None
        if chunk.isspace():
            continue
        if chunk.translate(None, allowed):
            bad = _WORD[floats].search(chunk)
            where = source.line(element) if offset is None else \
                line_at(source.data, offset + bad.start())
            raise FileFormatError(source.path, where, f"<{name}> holds "
                                  f"{bad.group().decode('utf-8', 'replace')[:40]!r}, not "
                                  f"{'a finite decimal number' if floats else 'an integer'}")
        parsed = decimals(chunk) if floats else None
        if parsed is None:
            try:
                parsed = np.fromstring(chunk, dtype=dtype, sep=" ")
            except ValueError:
                raise source.refuse(element, f"<{name}> holds a word that is not "
                                             f"{'a number' if floats else 'an integer'}") \
                    from None
        if floats and not np.isfinite(parsed).all():
            k = count + int(np.flatnonzero(~np.isfinite(parsed))[0])
            raise source.refuse(element, f"<{name}>'s number {k + 1} is past float32's "
                                         "range (not finite)")
        count += len(parsed)
        pieces.append(parsed)
    if not pieces:
        return np.zeros(0, dtype=dtype)
    return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)


class _Document:
    """One parsed file: its namespace, geometries and nodes by id, and its scene's walk."""

    def __init__(self, source: _Source, root, limit: int) -> None:
        self.source, self.root, self.limit = source, root, limit
        if root.tag.rpartition("}")[2] != "COLLADA":
            raise source.refuse(root, f"not a COLLADA file (its root is <{root.tag}>)")
        self.ns = root.tag[:-len("COLLADA")]
        self.geometries = {}
        for lib in root.findall(self.ns + "library_geometries"):
            for geom in lib.findall(self.ns + "geometry"):
                if geom.get("id"):
                    self.geometries.setdefault(geom.get("id"), geom)
        self.nodes: dict | None = None  # id -> node, made at the first <instance_node>
        self.meshes: dict = {}  # geometry id -> its primitives (vertex, index), unbound

    def _local(self, element) -> str:
        tag = element.tag
        return tag[len(self.ns):] if isinstance(tag, str) and tag.startswith(self.ns) else ""

    def unit(self) -> float:
        """Metres per file unit (``<asset><unit meter>``; none given: 1).

        Raises:
            FileFormatError: at the unit's line: not a positive number.
        """
        asset = self.root.find(self.ns + "asset")
        node = asset.find(self.ns + "unit") if asset is not None else None
        if node is None or node.get("meter") is None:
            return 1.0
        try:
            meter = float(node.get("meter"))
        except ValueError:
            meter = math.nan
        if not math.isfinite(meter) or meter <= 0:
            raise self.source.refuse(node, f"unit meter={node.get('meter')!r} is not a "
                                           "positive number")
        return meter

    def scene(self):
        """The ``<visual_scene>`` the ``<scene>`` names, else the first."""
        order = [vs for lib in self.root.findall(self.ns + "library_visual_scenes")
                 for vs in lib.findall(self.ns + "visual_scene")]
        named = self.root.find(f"{self.ns}scene/{self.ns}instance_visual_scene")
        if named is not None:
            url = named.get("url") or ""
            found = next((vs for vs in order if "#" + (vs.get("id") or "") == url), None)
            if found is None:
                raise self.source.refuse(named, f"the scene names no visual scene {url!r}")
            return found
        if not order:
            raise self.source.refuse(self.root, "COLLADA file has no <visual_scene>")
        return order[0]

    def read(self) -> tuple[list, float]:
        """(parts, unit): :func:`triangles`'. The scene is walked depth first without
        recursion; nodes and instances are counted as they are visited and waiting, each at
        most :data:`MAX_VISITS`, and triangles instance by instance before any is bound.

        Raises:
            FileFormatError: over those bounds or the triangle limit, at the element's line.
        """
        unit = self.unit()
        parts: list = []
        triangles, visits = 0, 0
        stack = [("node", n, None) for n in reversed(self.scene().findall(self.ns + "node"))]
        while stack:
            kind, element, parent = stack.pop()
            visits += 1
            if visits > MAX_VISITS:
                raise self.source.refuse(element, f"the scene visits over {MAX_VISITS} nodes "
                                                  "and instances (the limit; an "
                                                  "<instance_node> cycle?)")
            if kind == "geometry":
                prims = self._mesh(element)
                triangles += sum(len(index) for _, index in prims)
                if triangles > self.limit:
                    raise self.source.refuse(element, f"mesh has over {self.limit} triangles "
                                                      "(the limit)")
                for vertex, index in prims:
                    # pycollada's BoundTriangleSet: vertex * asmatrix(m).T[:3, :3] + m[:3, 3]
                    parts.append((np.dot(vertex, parent.T[:3, :3]) + parent[:3, 3], index))
                continue
            bound, children = self._node(element, parent)
            if len(stack) + len(children) > MAX_VISITS:
                raise self.source.refuse(element, f"the scene visits over {MAX_VISITS} nodes "
                                                  "and instances (the limit; an "
                                                  "<instance_node> cycle?)")
            stack.extend(reversed(children))
        return parts, unit

    def _node(self, node, parent) -> tuple[np.ndarray, list]:
        """(the node's matrix composed onto ``parent`` (pycollada's ``Node.objects``), its
        children to walk in document order: ("node" or "geometry", element, that matrix))."""
        transforms, children = [], []
        for child in node:
            name = self._local(child)
            if name in _TRANSFORMS:
                transforms.append(_TRANSFORMS[name](self.source, child))
            elif name in ("lookat", "skew"):
                raise self.source.refuse(child, f"a <{name}> transform is not read")
            elif name == "node":
                children.append(["node", child])
            elif name == "instance_node":
                children.append(["node", self._node_of(child)])
            elif name == "instance_geometry":
                children.append(["geometry", child])
        if not transforms:
            matrix = _IDENTITY
        elif len(transforms) == 1:
            matrix = transforms[0].copy()
        else:
            matrix = np.identity(4, dtype=np.float32)
            for t in transforms:
                matrix = np.dot(matrix, t)
        bound = matrix if parent is None else np.dot(parent, matrix)
        return bound, [(kind, element, bound) for kind, element in children]

    def _node_of(self, instance):
        if self.nodes is None:
            self.nodes = {}
            for node in self.root.iter(self.ns + "node"):
                if node.get("id"):
                    self.nodes.setdefault(node.get("id"), node)
        url = instance.get("url") or ""
        found = self.nodes.get(url[1:]) if url.startswith("#") else None
        if found is None:
            raise self.source.refuse(instance, f"<instance_node> names no node {url!r}")
        return found

    def _mesh(self, instance) -> list:
        url = instance.get("url") or ""
        geometry = self.geometries.get(url[1:]) if url.startswith("#") else None
        if geometry is None:
            raise self.source.refuse(instance, f"<instance_geometry> names no geometry {url!r}")
        gid = url[1:]
        if gid not in self.meshes:
            self.meshes[gid] = _Mesh(self, geometry).primitives()
        return self.meshes[gid]


def _floats(source: _Source, element, count: int) -> np.ndarray:
    """A transform's ``count`` numbers (float32, pycollada's parse).

    Raises:
        FileFormatError: at its line: not ``count`` finite numbers.
    """
    name = element.tag.rpartition("}")[2]
    try:
        floats = np.fromstring(element.text or "", dtype=np.float32, sep=" ")
    except ValueError:
        floats = np.zeros(0, dtype=np.float32)
    if len(floats) != count or not np.isfinite(floats).all():
        raise source.refuse(element, f"<{name}> needs {count} finite numbers, not "
                                     f"{(element.text or '').strip()[:60]!r}")
    return floats


def _translate(source, element) -> np.ndarray:
    x, y, z = _floats(source, element, 3)
    matrix = np.identity(4, dtype=np.float32)
    matrix[:3, 3] = [x, y, z]
    return matrix


def _rotate(source, element) -> np.ndarray:
    """pycollada's ``makeRotationMatrix`` on its float32 numbers (the angle in degrees)."""
    x, y, z, angle = _floats(source, element, 4)
    angle = angle * np.pi / 180.0
    c = np.cos(angle)
    s = np.sin(angle)
    t = (1 - c)
    return np.array([[t * x * x + c, t * x * y - s * z, t * x * z + s * y, 0],
                     [t * x * y + s * z, t * y * y + c, t * y * z - s * x, 0],
                     [t * x * z - s * y, t * y * z + s * x, t * z * z + c, 0],
                     [0, 0, 0, 1]], dtype=np.float32)


def _scale(source, element) -> np.ndarray:
    x, y, z = _floats(source, element, 3)
    matrix = np.identity(4, dtype=np.float32)
    matrix[0, 0] = x
    matrix[1, 1] = y
    matrix[2, 2] = z
    return matrix


def _matrix(source, element) -> np.ndarray:
    floats = _floats(source, element, 16)
    floats.shape = (4, 4)
    return floats


_TRANSFORMS = {"translate": _translate, "rotate": _rotate, "scale": _scale, "matrix": _matrix}


class _Mesh:
    """One ``<geometry>``'s ``<mesh>``: its positions and its primitives' vertex indices."""

    def __init__(self, doc: _Document, geometry) -> None:
        self.doc, self.source = doc, doc.source
        mesh = geometry.find(doc.ns + "mesh")
        if mesh is None:
            raise self.source.refuse(geometry, f"geometry {geometry.get('id')!r} is not a "
                                               "<mesh> (a convex mesh, spline or B-rep is not "
                                               "read)")
        self.mesh = mesh
        self.sources = {s.get("id"): s for s in mesh.findall(doc.ns + "source")
                        if s.get("id")}
        self.vertices = mesh.find(doc.ns + "vertices")

    def positions(self) -> tuple[str, np.ndarray]:
        """(the ``<vertices>`` id, its positions: float32 (n, 3))."""
        ns = self.doc.ns
        where = self.vertices if self.vertices is not None else self.mesh
        inputs = [] if self.vertices is None else [
            i for i in self.vertices.findall(ns + "input") if i.get("semantic") == "POSITION"]
        if not inputs or not self.vertices.get("id"):
            raise self.source.refuse(where, "a mesh needs a <vertices id=...> with a "
                                            "POSITION input")
        url = inputs[0].get("source") or ""
        source = self.sources.get(url[1:]) if url.startswith("#") else None
        if source is None:
            raise self.source.refuse(inputs[0], f"POSITION names no <source> {url!r} of "
                                                "its mesh")
        array = source.find(ns + "float_array")
        if array is None:
            raise self.source.refuse(source, "the positions' <source> has no <float_array>")
        params = source.findall(f"{ns}technique_common/{ns}accessor/{ns}param")
        if params and len(params) != 3:
            raise self.source.refuse(source, f"positions of {len(params)} components, not 3")
        data = _numbers(self.source, array, floats=True)
        if data.size % 3:
            raise self.source.refuse(array, f"{data.size} position numbers: not 3 a vertex")
        return self.vertices.get("id"), data.reshape((-1, 3))

    def primitives(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(vertex, index) of each triangle-making primitive, the vertices those of the
        positions its triangles use (a geometry instanced many times copies only those)."""
        vid, vertex = self.positions()
        out = []
        for prim in self.mesh:
            name = self.doc._local(prim)
            if name in _SKIPPED or name not in _PRIMITIVES:
                continue
            index, p = _vertex_index(self.doc, prim, name, vid)
            if len(index) == 0:
                continue
            low, high = int(index.min()), int(index.max())
            if low < 0 or high >= len(vertex):
                bad = low if low < 0 else high
                raise self.source.refuse(p, f"vertex index {bad} is outside the "
                                            f"{len(vertex)} positions of <vertices "
                                            f"id={vid!r}>" if bad < 1 << 62 else
                                            f"a vertex index of over 18 digits is outside the "
                                            f"{len(vertex)} positions of <vertices id={vid!r}>")
            out.append(_used(vertex, index))
        return out


def _used(vertex: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the rows of ``vertex`` that ``index`` names, ``index`` renumbered onto them):
    ``vertex`` itself where every row is named (a shipped file's case)."""
    named = np.zeros(len(vertex), dtype=bool)
    named[index.reshape(-1)] = True
    if named.all():
        return vertex, index
    renumber = np.cumsum(named) - 1
    return vertex[named], renumber[index]


def _vertex_index(doc: _Document, prim, name: str, vid: str) -> tuple[np.ndarray, object]:
    """((t, 3) int64 vertex indices of a primitive, its (first) ``<p>``)."""
    source = doc.source
    offsets, vertex = [], []
    for element in prim.findall(doc.ns + "input"):
        try:
            offset = int(element.get("offset"))
        except (TypeError, ValueError):
            raise source.refuse(element, f"an <input> of <{name}> without an integer "
                                         "offset") from None
        if not 0 <= offset < 1024:
            raise source.refuse(element, f"input offset {offset} is not within 0..1023")
        offsets.append(offset)
        if element.get("semantic") == "VERTEX":
            if element.get("source") != "#" + vid:
                raise source.refuse(element, f"the VERTEX input names "
                                             f"{element.get('source')!r}, not its mesh's "
                                             f"<vertices> '#{vid}'")
            vertex.append(offset)
    if len(vertex) != 1:
        raise source.refuse(prim, f"<{name}> has {len(vertex)} VERTEX inputs, not one")
    stride = max(offsets) + 1
    ps = prim.findall(doc.ns + "p")
    if not ps:
        raise source.refuse(prim, f"<{name}> has no <p>")
    if any(doc._local(e) == "ph" for e in prim):
        raise source.refuse(prim, "polygons with holes (<ph>) are not read")
    if name == "triangles":
        ps = ps[:1]  # pycollada's: the first
    rows = []
    for p in ps:
        index = _numbers(source, p, floats=False)
        if index.size % stride:
            raise source.refuse(p, f"{index.size} indices: not a multiple of the "
                                   f"{stride} inputs a corner")
        rows.append(index.reshape(-1, stride)[:, vertex[0]])
    if name == "triangles":
        if len(rows[0]) % 3:
            raise source.refuse(ps[0], f"{len(rows[0])} corners: not 3 a triangle")
        return rows[0].reshape(-1, 3), ps[0]
    if name == "polylist":
        vcount = prim.find(doc.ns + "vcount")
        counts = np.zeros(0, dtype=np.int64) if vcount is None else \
            _numbers(source, vcount, floats=False)
        corners = rows[0]
        if len(corners) == 0 and len(counts) == 0:
            return corners.reshape(0, 3), ps[0]
        if vcount is None or (counts < 3).any() or int(counts.sum()) != len(corners):
            raise source.refuse(vcount if vcount is not None else prim,
                                "<vcount> must count each polygon's corners (3 or more), "
                                f"{len(corners)} in all")
        return _fanned(corners, counts), ps[0]
    for p, corners in zip(ps, rows):
        if 0 < len(corners) < 3:
            raise source.refuse(p, f"a <{name}> <p> of {len(corners)} corners: 3 or more")
    kept = [corners for corners in rows if len(corners)]
    if not kept:
        return np.zeros((0, 3), dtype=np.int64), ps[0]
    counts = np.array([len(c) for c in kept], dtype=np.int64)
    corners = np.concatenate(kept)
    if name == "tristrips":
        return _stripped(corners, counts), ps[0]
    return _fanned(corners, counts), ps[0]  # polygons, trifans: fans from the first corner


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


def _stripped(rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(t, 3) the strips' triangles: corners (k, k + 1, k + 2) of each, every second one
    (k odd) wound the other way, (k + 1, k, k + 2)."""
    starts = np.cumsum(counts) - counts
    first = np.repeat(starts, counts - 2)
    k = np.arange(len(first)) - np.repeat(np.cumsum(counts - 2) - (counts - 2), counts - 2)
    corner = first + k
    odd = (k % 2).astype(bool)
    a = np.where(odd, corner + 1, corner)
    b = np.where(odd, corner, corner + 1)
    return np.stack([rows[a], rows[b], rows[corner + 2]], axis=1)
