"""Instanced OpenGL 3.3 drawing for the 3D view: one draw call per shape kind, whatever the
body count.

A :class:`Shapes` holds one unit mesh (a box, a cylinder, a sphere, a disc: triangles with
normals, in its own frame) and per instance a position (m, world frame), a body-to-world
quaternion (w, x, y, z), a scale (m along the mesh's own x, y, z) and an RGBA colour (0-1);
:meth:`Shapes.draw` draws every instance in one ``glDrawArraysInstanced``. Each frame the
instances are written with numpy into one buffer: no Python loop per body. :class:`Lines`
draws coloured segments (the grid, trails, rays) in one ``glDrawArrays``. Lighting is a fixed
sun (world frame) plus ambient, enough to read shapes; the view is not photo-real.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np
import pyglet
from pyglet import gl
from pyglet.graphics.shader import Shader, ShaderProgram

_SHAPES_VERTEX = """#version 330 core
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec3 i_pos;
layout(location = 3) in vec4 i_quat;
layout(location = 4) in vec3 i_scale;
layout(location = 5) in vec4 i_color;
layout(location = 6) in vec2 a_tint;
uniform mat4 u_viewproj;
out vec4 v_color;
out vec3 v_normal;
const vec3 GREY = vec3(0.75, 0.75, 0.8);
vec3 qrot(vec4 q, vec3 v) { return v + 2.0 * cross(q.yzw, cross(q.yzw, v) + q.x * v); }
void main() {
    gl_Position = u_viewproj * vec4(qrot(i_quat, a_pos * i_scale) + i_pos, 1.0);
    // a mirroring scale (a URDF's scale="1 -1 1") turns the normal with its sign
    vec3 safe = mix(vec3(1e-6), i_scale, greaterThan(abs(i_scale), vec3(1e-6)));
    v_normal = qrot(i_quat, a_normal / safe);
    v_color = vec4(mix(i_color.rgb * a_tint.x, GREY, a_tint.y), i_color.a);
}
"""

_SHAPES_FRAGMENT = """#version 330 core
in vec4 v_color;
in vec3 v_normal;
out vec4 final_color;
const vec3 SUN = normalize(vec3(0.35, -0.55, 0.76));
void main() {
    float lit = 0.5 + 0.5 * max(dot(normalize(v_normal), SUN), 0.0)
              + 0.12 * max(-dot(normalize(v_normal), SUN), 0.0);
    final_color = vec4(v_color.rgb * lit, v_color.a);
}
"""

_LINES_VERTEX = """#version 330 core
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec4 a_color;
uniform mat4 u_viewproj;
out vec4 v_color;
void main() { gl_Position = u_viewproj * vec4(a_pos, 1.0); v_color = a_color; }
"""

_LINES_FRAGMENT = """#version 330 core
in vec4 v_color;
out vec4 final_color;
void main() { final_color = v_color; }
"""

INSTANCE_FLOATS = 14  # position 3, quaternion 4, scale 3, colour 4


def programs() -> tuple[ShaderProgram, ShaderProgram]:
    """The shapes' and the lines' shader programs (compiled in the current context)."""
    return (ShaderProgram(Shader(_SHAPES_VERTEX, "vertex"), Shader(_SHAPES_FRAGMENT, "fragment")),
            ShaderProgram(Shader(_LINES_VERTEX, "vertex"), Shader(_LINES_FRAGMENT, "fragment")))


def set_viewproj(program: ShaderProgram, matrix: np.ndarray) -> None:
    """Give ``program`` the (4, 4) row-major world-to-clip matrix."""
    program.use()
    program["u_viewproj"] = tuple(float(v) for v in np.asarray(matrix).T.ravel())


# -- unit meshes: (V, 6) rows of x, y, z, nx, ny, nz, triangles, in a 1 m box about the origin;
# a mesh may add two columns per vertex, its tint (x the instance's colour) and its mix towards
# grey (0-1), so one instance draws parts of several shades (tinted(): 1, 0 for the others) --

def tinted(mesh: np.ndarray, tint: float = 1.0, grey: float = 0.0) -> np.ndarray:
    """(V, 8) ``mesh``'s rows with a tint and a grey mix (a (V, 8) mesh is returned as is)."""
    mesh = np.asarray(mesh, dtype=float)
    if mesh.shape[1] == 8:
        return mesh
    return np.column_stack((mesh, np.full(len(mesh), tint), np.full(len(mesh), grey)))


def box_mesh() -> np.ndarray:
    """A 1 m cube centred on the origin."""
    rows = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            n = np.zeros(3)
            n[axis] = sign
            u, v = np.roll(np.eye(3), 1, axis=0)[axis], np.roll(np.eye(3), 2, axis=0)[axis]
            c = n * 0.5
            quad = [c - u / 2 - v / 2, c + u / 2 - v / 2, c + u / 2 + v / 2, c - u / 2 + v / 2]
            for k in (0, 1, 2, 0, 2, 3):
                rows.append((*quad[k], *n))
    return np.array(rows)


def cylinder_mesh(segments: int = 12) -> np.ndarray:
    """A cylinder of 1 m diameter along z from -0.5 to 0.5 m, capped."""
    a = np.linspace(0.0, 2 * math.pi, segments + 1)
    rows = []
    for k in range(segments):
        c0, s0 = math.cos(a[k]), math.sin(a[k])
        c1, s1 = math.cos(a[k + 1]), math.sin(a[k + 1])
        p = [(0.5 * c0, 0.5 * s0), (0.5 * c1, 0.5 * s1)]
        side = [(*p[0], -0.5, c0, s0, 0), (*p[1], -0.5, c1, s1, 0), (*p[1], 0.5, c1, s1, 0),
                (*p[0], -0.5, c0, s0, 0), (*p[1], 0.5, c1, s1, 0), (*p[0], 0.5, c0, s0, 0)]
        rows += side
        rows += [(0, 0, 0.5, 0, 0, 1), (*p[0], 0.5, 0, 0, 1), (*p[1], 0.5, 0, 0, 1)]
        rows += [(0, 0, -0.5, 0, 0, -1), (*p[1], -0.5, 0, 0, -1), (*p[0], -0.5, 0, 0, -1)]
    return np.array(rows, dtype=float)


def sphere_mesh(rings: int = 6, segments: int = 10) -> np.ndarray:
    """A sphere of 1 m diameter (latitude-longitude triangles, normals radial)."""
    th = np.linspace(0.0, math.pi, rings + 1)
    ph = np.linspace(0.0, 2 * math.pi, segments + 1)

    def point(i, j):
        d = (math.sin(th[i]) * math.cos(ph[j]), math.sin(th[i]) * math.sin(ph[j]), math.cos(th[i]))
        return (*(0.5 * np.array(d)), *d)
    rows = []
    for i in range(rings):
        for j in range(segments):
            a, b, c, d = point(i, j), point(i + 1, j), point(i + 1, j + 1), point(i, j + 1)
            rows += [a, b, c, a, c, d]
    return np.array(rows, dtype=float)


def disc_mesh(segments: int = 10) -> np.ndarray:
    """A flat disc of 1 m diameter in the x-y plane, facing +z (drawn from both sides)."""
    a = np.linspace(0.0, 2 * math.pi, segments + 1)
    rows = []
    for k in range(segments):
        rows += [(0, 0, 0, 0, 0, 1), (0.5 * math.cos(a[k]), 0.5 * math.sin(a[k]), 0, 0, 0, 1),
                 (0.5 * math.cos(a[k + 1]), 0.5 * math.sin(a[k + 1]), 0, 0, 0, 1)]
    return np.array(rows, dtype=float)


def compose(parts) -> np.ndarray:
    """(V, 8) one mesh of several unit meshes placed in a common frame: ``parts`` are
    (mesh, offset (3,), quaternion w, x, y, z, scale (3,), tint, grey) each."""
    from .view3d_bodies import qrot

    out = []
    for mesh, offset, quat, scale, tint, grey in parts:
        mesh = np.asarray(mesh, dtype=float)
        q = np.broadcast_to(np.asarray(quat, dtype=float), (len(mesh), 4))
        normal = qrot(q, mesh[:, 3:6] / np.maximum(np.asarray(scale, dtype=float), 1e-6))
        normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
        out.append(tinted(np.column_stack((qrot(q, mesh[:, :3] * scale) + offset, normal)),
                          tint, grey))
    return np.concatenate(out)


def far_quad_mesh() -> np.ndarray:
    """A quadrotor of radius 1 m (centre to a rotor's hub) in one mesh, for bodies a few
    pixels large: its hull, its arms' tops (flat) and four grey four-sided rotor discs: 96
    vertices against 228 for its hull, arms and rotor discs drawn part by part
    (view3d_bodies.quad_rows)."""
    from .view3d_bodies import quad_parts

    offsets, quats, scales, hubs = quad_parts(1.0)
    flat = box_mesh()[30:]  # the +z face: two triangles
    parts = [(box_mesh(), offsets[0], quats[0], scales[0], 1.0, 0.0)]
    parts += [(flat, offsets[k], quats[k], scales[k], 0.6, 0.0) for k in (1, 2)]
    parts += [(disc_mesh(4), hub + (0, 0, 0.03), (1.0, 0.0, 0.0, 0.0), (0.9, 0.9, 1.0), 1.0,
               0.75) for hub in hubs]
    return compose(parts)


def _float_attribute(location: int, size: int, stride: int, offset: int, divisor: int) -> None:
    gl.glEnableVertexAttribArray(location)
    gl.glVertexAttribPointer(location, size, gl.GL_FLOAT, gl.GL_FALSE, stride,
                             ctypes.c_void_p(offset))
    gl.glVertexAttribDivisor(location, divisor)


def _buffer() -> gl.GLuint:
    name = gl.GLuint()
    gl.glGenBuffers(1, ctypes.byref(name))
    return name


def _upload(buffer: gl.GLuint, data: np.ndarray) -> None:
    """Replace the buffer's contents (orphaning the old storage: no wait on the GPU)."""
    data = np.ascontiguousarray(data, dtype=np.float32)
    gl.glBindBuffer(gl.GL_ARRAY_BUFFER, buffer)
    gl.glBufferData(gl.GL_ARRAY_BUFFER, max(4, data.nbytes),
                    data.ctypes.data_as(ctypes.c_void_p) if data.size else None,
                    gl.GL_STREAM_DRAW)


class Shapes:
    """Many instances of one unit mesh, drawn in one call.

    Args:
        program: The shapes program (:func:`programs`).
        mesh: (V, 6) the unit mesh's triangles (x, y, z, nx, ny, nz), or (V, 8) with each
            vertex's tint and grey mix (:func:`tinted`).
    """

    def __init__(self, program: ShaderProgram, mesh: np.ndarray) -> None:
        self.program = program
        self.vertices = len(mesh)
        self.count = 0
        self.vao = gl.GLuint()
        gl.glGenVertexArrays(1, ctypes.byref(self.vao))
        gl.glBindVertexArray(self.vao)
        self.mesh_buffer, self.instance_buffer = _buffer(), _buffer()
        _upload(self.mesh_buffer, tinted(mesh))
        _float_attribute(0, 3, 32, 0, 0)
        _float_attribute(1, 3, 32, 12, 0)
        _float_attribute(6, 2, 32, 24, 0)
        _upload(self.instance_buffer, np.zeros(INSTANCE_FLOATS))
        stride = INSTANCE_FLOATS * 4
        for location, (size, offset) in enumerate(((3, 0), (4, 12), (3, 28), (4, 40)), start=2):
            _float_attribute(location, size, stride, offset, 1)
        gl.glBindVertexArray(0)

    def set(self, instances: np.ndarray) -> None:
        """The instances to draw: (K, 14) position, quaternion, scale, colour (0-1) rows."""
        self.count = len(instances)
        if self.count:
            _upload(self.instance_buffer, instances)

    def draw(self) -> None:
        if not self.count:
            return
        gl.glBindVertexArray(self.vao)
        gl.glDrawArraysInstanced(gl.GL_TRIANGLES, 0, self.vertices, self.count)
        gl.glBindVertexArray(0)

    def delete(self) -> None:
        gl.glDeleteBuffers(2, (gl.GLuint * 2)(self.mesh_buffer, self.instance_buffer))
        gl.glDeleteVertexArrays(1, ctypes.byref(self.vao))


class Lines:
    """Coloured segments (world frame, m) drawn in one call."""

    def __init__(self, program: ShaderProgram) -> None:
        self.program = program
        self.count = 0
        self.vao = gl.GLuint()
        gl.glGenVertexArrays(1, ctypes.byref(self.vao))
        gl.glBindVertexArray(self.vao)
        self.buffer = _buffer()
        _upload(self.buffer, np.zeros(7))
        _float_attribute(0, 3, 28, 0, 0)
        _float_attribute(1, 4, 28, 12, 0)
        gl.glBindVertexArray(0)

    def set(self, starts: np.ndarray, ends: np.ndarray, colors: np.ndarray) -> None:
        """Segments from ``starts`` to ``ends`` (K, 3), m, coloured (K, 4) RGBA 0-1."""
        k = len(starts)
        self.count = 2 * k
        if k:
            rows = np.empty((k, 2, 7), dtype=np.float32)
            rows[:, 0, :3], rows[:, 1, :3] = starts, ends
            rows[:, :, 3:] = np.asarray(colors, dtype=np.float32)[:, None, :]
            _upload(self.buffer, rows)

    def draw(self) -> None:
        if not self.count:
            return
        gl.glBindVertexArray(self.vao)
        gl.glDrawArrays(gl.GL_LINES, 0, self.count)
        gl.glBindVertexArray(0)

    def delete(self) -> None:
        gl.glDeleteBuffers(1, ctypes.byref(self.buffer))
        gl.glDeleteVertexArrays(1, ctypes.byref(self.vao))


def depth_on(transparent: bool = False) -> None:
    """GL state for the 3D pass: depth tested, blended; no depth writes for see-through
    instances (drawn after the solid ones)."""
    gl.glDisable(gl.GL_SCISSOR_TEST)  # the widget layer leaves it on after its own pass
    gl.glEnable(gl.GL_DEPTH_TEST)
    gl.glDepthFunc(gl.GL_LEQUAL)
    gl.glDepthMask(gl.GL_FALSE if transparent else gl.GL_TRUE)
    gl.glDisable(gl.GL_CULL_FACE)
    gl.glEnable(gl.GL_BLEND)
    gl.glBlendFunc(gl.GL_SRC_ALPHA, gl.GL_ONE_MINUS_SRC_ALPHA)


def depth_off() -> None:
    """Leave GL as the 2D widget layer expects it."""
    gl.glDepthMask(gl.GL_TRUE)
    gl.glDisable(gl.GL_DEPTH_TEST)
    pyglet.gl.glUseProgram(0)
