"""Inline compiled quaternion arithmetic the flying kernels share (the cascade's in
coopsim.swarm.flight_kernels, the sensors' in coopsim.plugins.modules.flying).

Quaternions (w, x, y, z) rotate body to world (coopsim.swarm.flight). Each function does the
floating-point operations of its numpy counterpart in coopsim.swarm.flight in the same order.
"""

from __future__ import annotations

from .compiled import jit


@jit(inline=True)
def rotate(qw, qx, qy, qz, vx, vy, vz):
    """(vx, vy, vz) turned by the quaternion (coopsim.swarm.flight.rotate's operations)."""
    tx, ty, tz = 2.0 * (qy * vz - qz * vy), 2.0 * (qz * vx - qx * vz), 2.0 * (qx * vy - qy * vx)
    return (vx + qw * tx + (qy * tz - qz * ty), vy + qw * ty + (qz * tx - qx * tz),
            vz + qw * tz + (qx * ty - qy * tx))
