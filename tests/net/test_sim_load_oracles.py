"""``/sim load`` is no file-existence oracle: a world or description naming
a mesh, texture or height field outside the run's data folders is error 6 whether that file
exists or not (nothing outside is looked at), and a description's mesh that is no mesh file
(``../../../../etc/passwd``, ``file:///etc/passwd``) is refused at its line instead of being
dropped."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("mujoco")

from coopsim.net import protocol as p  # noqa: E402

from helpers import robot, scenario  # noqa: E402
from nethelpers import Peer, live, lookup  # noqa: E402
from scenery_helpers import write_bump, write_stl  # noqa: E402

LOAD = 22
DATA = Path(__file__).resolve().parent.parent / "data" / "descriptions"
MESH_LINK = ('  <link name="shell">\n    <visual><geometry><mesh filename="{name}"/></geometry>'
             '</visual>\n  </link>\n')
MJCF_TEXTURE = ('<mujoco model="t">\n  <asset>\n    <texture name="skin" type="2d" file="{name}"/>'
                '\n  </asset>\n  <worldbody>\n    <body name="b">\n      <geom type="box" '
                'size="0.1 0.1 0.1" mass="1"/>\n    </body>\n  </worldbody>\n</mujoco>\n')


def _urdf(mesh: str) -> str:
    """tiny_arm.urdf with a link whose visual mesh is ``mesh`` (the link at line 21)."""
    text = (DATA / "tiny_arm.urdf").read_text()
    return text.replace("  <link name=\"tool\"/>\n",
                        "  <link name=\"tool\"/>\n" + MESH_LINK.format(name=mesh))


def _scenario(folder: Path, name: str, description: str) -> str:
    (folder / f"{name}.scenario").write_text(
        f"[WORLD]\nfile floor.world\n\n[ROBOT_1]\ndescription {description}\nname a\n"
        "position 0.5 0 0\n\n[SETTINGS]\nengine mujoco\n")
    return str(folder / f"{name}.scenario")


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    root = tmp_path_factory.mktemp("oracles")
    data, outside = root / "data", root / "outside"
    data.mkdir()
    outside.mkdir()
    shutil.copy(DATA / "floor.world", data / "floor.world")
    write_stl(outside / "there.stl", (0, 0, 0), (0.1, 0.1, 0.1))
    write_bump(outside / "there.pgm")
    (outside / "there.png").write_bytes(b"\x89PNG not really")
    spec = scenario(robots=[robot("r1")])
    with live(spec, paused=True, data_dirs=(str(data),), engine="mujoco") as run:
        peer = Peer(lookup(run.network.endpoint, "/sim"))
        yield peer, data, outside
        peer.close()


def _pair(peer, make) -> list:
    """The replies to loading the file ``make(stem)`` makes, for a present and an absent
    outside file."""
    return [peer.ask(LOAD, make(stem))[:2] for stem in ("there", "absent")]


@pytest.mark.parametrize("kind", ["mesh", "terrain"])
def test_a_world_naming_a_file_outside_is_6_whether_it_exists_or_not(sim, kind):
    peer, data, outside = sim

    def make(stem: str) -> str:
        if kind == "mesh":
            body = f"[MESH_1]\nfile {outside}/{stem}.stl\nposition 3 0 0\n"
        else:
            body = f"[TERRAIN]\nimage ../outside/{stem}.pgm\nsize 4 4 0.3\n"
        (data / f"{kind}_{stem}.world").write_text("[FLOOR]\nsize 10 10 0.1\n\n" + body)
        return str(data / f"{kind}_{stem}.world")
    replies = _pair(peer, make)
    assert [e for e, _ in replies] == [p.NOT_ALLOWED] * 2, replies
    assert all("outside the simulation's data folders" in t for _, t in replies)
    assert all(":5: " in t for _, t in replies)  # the line naming the file


def test_a_description_mesh_outside_is_6_whether_it_exists_or_not(sim):
    peer, data, outside = sim

    def make(stem: str) -> str:
        (data / f"m_{stem}.urdf").write_text(_urdf(f"../outside/{stem}.stl"))
        return _scenario(data, f"m_{stem}", f"m_{stem}.urdf")
    replies = _pair(peer, make)
    assert [e for e, _ in replies] == [p.NOT_ALLOWED] * 2, replies
    for (_, text), stem in zip(replies, ("there", "absent")):
        assert text.startswith(f"{data / f'm_{stem}.urdf'}:22: mesh '../outside/{stem}.stl' "
                               "is outside"), text


def test_an_mjcf_texture_outside_is_6_whether_it_exists_or_not(sim):
    peer, data, outside = sim

    def make(stem: str) -> str:
        (data / f"t_{stem}.xml").write_text(MJCF_TEXTURE.format(name=f"{outside}/{stem}.png"))
        return _scenario(data, f"t_{stem}", f"t_{stem}.xml")
    replies = _pair(peer, make)
    assert [e for e, _ in replies] == [p.NOT_ALLOWED] * 2, replies
    assert all(":3: file " in t and "is outside" in t for _, t in replies), replies


@pytest.mark.parametrize("name", ["../../../../etc/passwd", "file:///etc/passwd",
                                  "../../../../etc/absent"])
def test_a_description_mesh_that_is_no_mesh_file_is_refused_at_its_line(sim, name):
    peer, data, _ = sim
    stem = "n" + str(abs(hash(name)))
    (data / f"{stem}.urdf").write_text(_urdf(name))
    error, text = peer.ask(LOAD, _scenario(data, stem, f"{stem}.urdf"))[:2]
    assert error == p.FAILED, text
    assert text.startswith(f"{data / f'{stem}.urdf'}:22: mesh {name!r} is not a mesh file"), text
