"""The kind of a robot of a description: ``arm``, ``wheeled`` (a wheeled base, with or without
arms), ``multirotor``, ``legged`` (quadrupeds, and wheel-legged Centauro), ``humanoid`` (two
legs, or a human upper body), ``hand`` or ``bench`` (pendulums, a finger, two joints).

The packages of example-robot-data are named in :data:`PACKAGES` (their kinds are what their
authors say they are); a package not there is classified from the file (:func:`guess`).
"""

from __future__ import annotations

import os
from pathlib import Path

def share() -> Path:
    """example-robot-data's ``robots`` folder (as installed)."""
    from importlib.metadata import distribution
    return Path(distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots"))


KINDS = ("arm", "wheeled", "multirotor", "legged", "humanoid", "hand", "bench")

PACKAGES = {
    "panda_description": "arm", "ur_description": "arm", "kinova_description": "arm",
    "z1_description": "arm", "xarm_description": "arm", "so_arm_description": "arm",
    "baxter_description": "arm",
    "tiago_description": "wheeled", "tiago_pro_description": "wheeled",
    "pr2_description": "wheeled",
    "iris_description": "multirotor", "hector_description": "multirotor",
    "hextilt_description": "multirotor", "borinot_description": "multirotor",
    "a1_description": "legged", "anymal_b_simple_description": "legged",
    "anymal_c_simple_description": "legged", "b1_description": "legged",
    "go1_description": "legged", "go2_description": "legged", "hyq_description": "legged",
    "laikago_description": "legged", "solo_description": "legged",
    "quadruped_description": "legged", "centauro_description": "legged",
    "alex_description": "humanoid", "alexander_description": "humanoid",
    "bolt_description": "humanoid", "cassie_description": "humanoid",
    "g1_description": "humanoid", "human_description": "humanoid",
    "icub_description": "humanoid", "romeo_description": "humanoid",
    "simple_humanoid_description": "humanoid", "talos_data": "humanoid",
    "allegro_hand_description": "hand",
    "double_pendulum_description": "bench", "asr_twodof_description": "bench",
    "finger_edu_description": "bench",
}
#: Single files whose kind is not their package's (TALOS's left arm alone).
FILES = {"talos_left_arm.urdf": "arm"}


def package_of(path: str) -> str:
    """The description package folder ``path`` lies in (``.../<package>/<urdf|robots>/x``)."""
    return os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(path))))


def kind_of(path: str, description=None) -> str:
    """The kind of the robot of file ``path`` (its package's, else :func:`guess` from its
    ``description`` (a :class:`coopsim.description.robot.Description`), else ``bench``)."""
    name = os.path.basename(path)
    if name in FILES:
        return FILES[name]
    found = PACKAGES.get(package_of(path))
    if found:
        return found
    return guess(description) if description is not None else "bench"


def guess(d) -> str:
    """A kind from a description's names: wheel joints, rotor or propeller links, feet,
    fingers; else an arm when it has 4 to 8 moving joints in one chain, else ``bench``."""
    joints = " ".join(j.name.lower() for j in d.joints)
    links = " ".join(l.name.lower() for l in d.links)
    if any(w in links for w in ("rotor", "propeller")):
        return "multirotor"
    if "wheel" in joints:
        return "wheeled"
    feet = sum(links.count(w) for w in ("foot", "calf", "shank"))
    if feet >= 4:
        return "legged"
    if feet >= 2:
        return "humanoid"
    if "finger" in links and "arm" not in links:
        return "hand"
    return "arm" if 4 <= len(d.moving) <= 8 else "bench"
