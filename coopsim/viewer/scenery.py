"""A world's meshes and terrain in the 2D top view (the layout document's ``scenery``,
protocol 9), drawn as the floor's zones are: each mesh's floor outline filled in its colour and
outlined darker, the terrain's extent filled lightly (the floor's grid shows through) and
outlined, under the meshes. Frames and units: world frame, metres."""

from __future__ import annotations

TERRAIN_RGB = (150, 120, 80)
TERRAIN_ALPHA = 90  # 0-255: light, so the floor's grid and the robots on it stay readable


def scenery_zones(layout: dict) -> list[dict]:
    """Zone-like polygons ``{name, polygon, color, alpha}`` of ``layout``'s scenery: the
    terrain's rectangle first, then each mesh's outline (none without ``scenery``)."""
    scenery = layout.get("scenery") or {}
    out = []
    t = scenery.get("terrain")
    if t and len(t.get("size", ())) >= 2:
        hx, hy = float(t["size"][0]) / 2, float(t["size"][1]) / 2
        x, y = float(t.get("x", 0.0)), float(t.get("y", 0.0))
        out.append({"name": "terrain", "color": TERRAIN_RGB, "alpha": TERRAIN_ALPHA,
                    "polygon": [[x - hx, y - hy], [x + hx, y - hy], [x + hx, y + hy],
                                [x - hx, y + hy]]})
    for m in scenery.get("meshes", ()):
        if len(m.get("outline", ())) >= 3:
            out.append({"name": m.get("name", ""), "polygon": m["outline"],
                        "color": tuple(m.get("color", (150, 150, 150)))})
    return out
