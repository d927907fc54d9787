"""A plugin's module kind computed by a kernel (its ``ModuleKernel``: ``kernel_sense``), for the
tests of the composed step and of the copies backend: one module, imported by one name
(``kernelkinds``) wherever it is used, so the kernel's cache entry names a module every test
process can import."""

from __future__ import annotations

import math

from coopsim.model.commands import Command
from coopsim.model.compiled import jit
from coopsim.model.kernel import StateField
from coopsim.model.module import Module
from coopsim.model.params import ParamSpec


@jit()
def ping_sense(views, rows, params, state, normals, uniforms, prev, out):
    """The length of ``views[0]``'s (x, y) (here the pose's: range to the origin, m; the copies
    test's ``echo`` reads the velocity) and the longest so far (its state), with noise and lost
    data (params: noise, lost %)."""
    pose, farthest, seen = views[0], state[0], state[1]
    for k in range(len(rows)):
        i = rows[k]
        r = math.hypot(pose[i, 0], pose[i, 1])
        if normals.shape[1]:
            r += normals[k, 0] * params[k, 0]
        out[k, 0] = prev[k, 0] if len(uniforms) and uniforms[k] * 100.0 < params[k, 1] else r
        if not seen[i] or r > farthest[i]:
            farthest[i] = r
        seen[i] = True
        out[k, 1] = farthest[i]


class Ping(Module):
    """A plugin's kind computed by a kernel: range to the origin, farthest so far."""

    label = "ping"
    description = "range to the origin, m; farthest so far, m"
    params = (ParamSpec("noise", "float", "noise, m", 0.0, 0.0, 1.0, "m"),
              ParamSpec("lost", "float", "lost readings, %", 0.0, 0.0, 100.0, "%"))
    commands = (Command(9300, "read", "ping", kind="read", doc="range, farthest"),)
    fields = ("range", "farthest")
    state_fields = (StateField("farthest"),)
    kernel_views = ("pose",)
    kernel_sense = ping_sense

    @classmethod
    def noise_draws(cls, p):
        return 1
