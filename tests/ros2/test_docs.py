"""docs/ros2.md agrees with the code: the Cyclone DDS configuration it tells ROS users to copy
is the one coopsim runs with, the flags it lists exist, and --ros2 without the extra says how to
install it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from coopsim.ros2.dds import loopback_config

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "ros2.md").read_text()


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_the_documented_loopback_configuration_is_the_one_coopsim_uses():
    shown = DOC.split("cat > cyclonedds-loopback.xml <<'EOF'\n", 1)[1].split("\nEOF", 1)[0]
    assert squeeze(shown) == squeeze(loopback_config())


@pytest.mark.slow
def test_every_documented_flag_is_on_the_cli():
    help_text = subprocess.run([sys.executable, "-m", "coopsim", "run", "--help"],
                               capture_output=True, text=True, cwd=ROOT).stdout
    for flag in ("--ros2", "--ros2-domain", "--ros2-rate", "--ros2-discovery"):
        assert flag in DOC and flag in help_text
    export = subprocess.run([sys.executable, "-m", "coopsim", "export", "--help"],
                            capture_output=True, text=True, cwd=ROOT).stdout
    assert "--ros2 OUT" in export


@pytest.mark.slow
def test_ros2_without_the_extra_names_the_install_command(tmp_path):
    code = ("import sys\nsys.modules['cyclonedds'] = None\nsys.modules['cyclonedds.domain'] = "
            "None\nfrom coopsim.app.cli import main\nmain(sys.argv[1:])\n")
    done = subprocess.run([sys.executable, "-c", code, "run", "--headless", "--ros2",
                           "--duration", "0.1", "--port", "0", "--no-controllers"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    said = "--ros2 needs the Cyclone DDS binding: pip install 'coopsim[ros2]'"
    assert said in done.stderr and said in " ".join(DOC.split())
    assert "Traceback" not in done.stderr


def ci_packages() -> list[str]:
    """The ROS 2 wheels .ci/ros-venvs installs (its PKGS, without the distribution's prefix):
    what the tests prove a stock node needs."""
    script = (ROOT / ".ci" / "ros-venvs").read_text()
    return re.search(r'PKGS="([^"]*)"', script).group(1).split()


def install_commands(text: str) -> list[str]:
    """Every ``pip install`` command in ``text`` that installs a ``ros-`` wheel, its
    continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [line[line.index("pip install"):] for line in joined.splitlines()
            if "pip install" in line and re.search(r"\bros-", line.split("pip install")[1])]


def test_every_ros_install_line_installs_what_the_tests_run_with():
    """``pip install ros-rclpy`` alone fails at ``rclpy.init()`` (no RMW: the wheel of
    rmw_fastrtps_cpp is a package of its own), and a message package missing fails at its
    import: each install line of the docs installs every wheel .ci/ros-venvs does, for Kilted
    (``ros-``) and for Jazzy (``ros-jazzy-``)."""
    need = ci_packages()
    assert "rmw-fastrtps-cpp" in need and "rclpy" in need
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "examples").rglob("*.md")), *sorted((ROOT / "examples").rglob("*.py"))]
    found = {}
    for page in pages:
        for command in install_commands(page.read_text()):
            words = set(command.split())
            prefix = "ros-jazzy-" if "ros-jazzy-rclpy" in words else "ros-"
            missing = [prefix + p for p in need if prefix + p not in words]
            assert not missing, f"{page.relative_to(ROOT)}: {command!r} lacks {missing}"
            found[prefix] = page
    assert set(found) == {"ros-", "ros-jazzy-"}, found  # both distributions are shown
