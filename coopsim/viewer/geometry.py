"""Batched drawing: many copies of a shape in one vertex list, moved with numpy each frame.

A :class:`Layer` holds N bodies of T vertices each (a triangle list in each body's own frame, in
metres). Moving them is one numpy expression written straight into pyglet's vertex buffer, so 500
robots cost about as much as one: no Python loop per body, no per-shape pyglet objects.
"""

from __future__ import annotations

import math

import numpy as np
import pyglet
from pyglet import gl

from ..model.polygons import ear_indices

_VERTEX = """#version 150 core
in vec2 position;
in vec4 colors;
out vec4 vertex_colors;
uniform WindowBlock { mat4 projection; mat4 view; } window;
void main() {
    gl_Position = window.projection * window.view * vec4(position, 0.0, 1.0);
    vertex_colors = colors;
}
"""

_FRAGMENT = """#version 150 core
in vec4 vertex_colors;
out vec4 final_color;
void main() { final_color = vertex_colors; }
"""


def program() -> pyglet.graphics.shader.ShaderProgram:
    """The scene's shader: 2D positions in metres, RGBA colours, the window's view matrix."""
    return pyglet.gl.current_context.create_program((_VERTEX, "vertex"), (_FRAGMENT, "fragment"))


class LayerGroup(pyglet.graphics.Group):
    """Draw state for one layer: the scene's shader and alpha blending, in a fixed order."""

    def __init__(self, shader, order: int) -> None:
        super().__init__(order=order)
        self.shader = shader

    def set_state(self) -> None:
        self.shader.use()
        gl.glEnable(gl.GL_BLEND)
        gl.glBlendFunc(gl.GL_SRC_ALPHA, gl.GL_ONE_MINUS_SRC_ALPHA)

    def unset_state(self) -> None:
        gl.glDisable(gl.GL_BLEND)
        self.shader.stop()

    def __eq__(self, other) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


# -- templates: one body's triangles in its own frame ----------------------------------------------

def disc(segments: int = 24) -> np.ndarray:
    """A unit-radius disc as a triangle fan unrolled into a list, (3*segments, 2)."""
    a = np.linspace(0.0, 2 * math.pi, segments + 1)
    rim = np.stack((np.cos(a), np.sin(a)), axis=1)
    tris = np.zeros((segments, 3, 2))
    tris[:, 1] = rim[:-1]
    tris[:, 2] = rim[1:]
    return tris.reshape(-1, 2)


def ring(inner: float, segments: int = 24) -> np.ndarray:
    """An annulus between radius ``inner`` and 1, (6*segments, 2)."""
    a = np.linspace(0.0, 2 * math.pi, segments + 1)
    out = np.stack((np.cos(a), np.sin(a)), axis=1)
    inn = out * inner
    quads = np.stack((out[:-1], out[1:], inn[1:], out[:-1], inn[1:], inn[:-1]), axis=1)
    return quads.reshape(-1, 2)


def square() -> np.ndarray:
    """A unit square centred on the origin, (6, 2)."""
    return np.array([(-.5, -.5), (.5, -.5), (.5, .5), (-.5, -.5), (.5, .5), (-.5, .5)])


def nose() -> np.ndarray:
    """A heading arrow for a unit-radius robot, from near its centre to its front edge along +x,
    (9, 2): a shaft and a head, so it reads the same at any angle (a lone triangle near the
    centre looks like it points elsewhere at most yaws). Its head is a radius wide and its
    shaft thick (at the default zoom a robot is a disc of a dozen pixels, and a thinner arrow
    did not read); it starts just ahead of the centre, which keeps the robot's colour."""
    shaft = [(0.15, -0.14), (0.45, -0.14), (0.45, 0.14), (0.15, -0.14), (0.45, 0.14),
             (0.15, 0.14)]
    head = [(0.97, 0.0), (0.35, 0.5), (0.35, -0.5)]
    return np.array(shaft + head, dtype=float)


def bold_nose() -> np.ndarray:
    """The heading arrow for robots drawn small (a few pixels across), (9, 2) like
    :func:`nose`: a thick shaft from behind the centre and a broad head reaching the front
    edge, so a handful of pixels still make an arrow rather than a dot."""
    shaft = [(-0.4, -0.2), (0.3, -0.2), (0.3, 0.2), (-0.4, -0.2), (0.3, 0.2), (-0.4, 0.2)]
    head = [(0.98, 0.0), (0.2, 0.66), (0.2, -0.66)]
    return np.array(shaft + head, dtype=float)


def polygon(vertices) -> np.ndarray:
    """A convex polygon (k, 2), counter-clockwise, as a triangle fan, (3*(k-2), 2)."""
    v = np.asarray(vertices, dtype=float)
    tris = [(v[0], v[i], v[i + 1]) for i in range(1, len(v) - 1)]
    return np.array(tris, dtype=float).reshape(-1, 2)


def triangulate(vertices) -> np.ndarray:
    """A simple polygon (k, 2), either winding, convex or not, as triangles (3*(k-2), 2)
    (:func:`coopsim.model.polygons.ear_indices`)."""
    v = np.asarray(vertices, dtype=float)
    return v[ear_indices(v)]


def pad(tris: np.ndarray, count: int) -> np.ndarray:
    """Triangle vertices (3k, 2) padded to ``count`` by repeating the last triangle (repeated
    triangles draw nothing new), so bodies of different shapes share one layer."""
    if len(tris) >= count:
        return tris[:count]
    extra = np.tile(tris[-3:], ((count - len(tris)) // 3, 1))
    return np.concatenate((tris, extra))


def place(local: np.ndarray, poses: np.ndarray) -> np.ndarray:
    """Move each body's vertices to its pose.

    Args:
        local: (N, T, 2) vertices in each body's frame.
        poses: (N, 3) x, y, yaw.

    Returns:
        (N*T, 2) world vertices.
    """
    c = np.cos(poses[:, 2])[:, None]
    s = np.sin(poses[:, 2])[:, None]
    x = local[..., 0] * c - local[..., 1] * s + poses[:, 0:1]
    y = local[..., 0] * s + local[..., 1] * c + poses[:, 1:2]
    return np.stack((x, y), axis=-1).reshape(-1, 2)


def rgba(color, alpha: int = 255) -> tuple[int, int, int, int]:
    """(R, G, B[, A]) 0-255 as a 4-tuple."""
    c = tuple(int(v) for v in color)
    return c if len(c) == 4 else (*c[:3], alpha)


def shade(color, factor: float) -> tuple[int, int, int, int]:
    """A darker (factor < 1) or lighter (> 1) version of a colour."""
    r, g, b, a = rgba(color)
    if factor <= 1:
        return (int(r * factor), int(g * factor), int(b * factor), a)
    return tuple(int(v + (255 - v) * (factor - 1)) for v in (r, g, b)) + (a,)


# -- layers ----------------------------------------------------------------------------------------

class Layer:
    """N bodies drawn as triangles, moved together.

    Args:
        shader: The scene's shader program.
        batch: The scene's batch.
        group: Draw order and state.
        local: (N, T, 2) each body's vertices in its own frame, m.
        colors: (N, 4) RGBA 0-255, one per body.
    """

    mode = gl.GL_TRIANGLES

    def __init__(self, shader, batch, group, local: np.ndarray, colors: np.ndarray) -> None:
        self.count, self.per = local.shape[0], local.shape[1]
        self.local = local
        self.vlist = None
        if self.count and self.per:
            total = self.count * self.per
            cols = np.repeat(np.asarray(colors, dtype=np.uint8), self.per, axis=0)
            self.vlist = shader.vertex_list(total, self.mode, batch=batch, group=group,
                                            position=("f", np.zeros(2 * total).tolist()),
                                            colors=("Bn", cols.ravel().tolist()))

    def update(self, poses: np.ndarray, grow: np.ndarray | None = None) -> None:
        """Put body i at poses[i] = (x, y, yaw), drawn ``grow[i]`` times its size (None: 1)."""
        if self.vlist is not None and len(poses) == self.count:
            local = self.local if grow is None else self.local * grow[:, None, None]
            self.write(place(local, poses))

    def write(self, vertices: np.ndarray) -> None:
        """Overwrite every vertex position with (count*per, 2) values."""
        np.ctypeslib.as_array(self.vlist.position)[:] = vertices.ravel()

    def recolor(self, colors: np.ndarray) -> None:
        """Give body i the RGBA colour colors[i]."""
        if self.vlist is not None:
            cols = np.repeat(np.asarray(colors, dtype=np.uint8), self.per, axis=0)
            np.ctypeslib.as_array(self.vlist.colors)[:] = cols.ravel()

    def delete(self) -> None:
        """Free the vertex list."""
        if self.vlist is not None:
            self.vlist.delete()
            self.vlist = None


class LineLayer(Layer):
    """N straight lines (two vertices each) whose ends are set directly, e.g. sonar rays."""

    mode = gl.GL_LINES

    def __init__(self, shader, batch, group, count: int, colors: np.ndarray) -> None:
        super().__init__(shader, batch, group, np.zeros((count, 2, 2)), colors)

    def set_lines(self, starts: np.ndarray, ends: np.ndarray) -> None:
        """Line i from starts[i] to ends[i] (each (N, 2))."""
        if self.vlist is not None and len(starts) == self.count:
            self.write(np.stack((starts, ends), axis=1))
