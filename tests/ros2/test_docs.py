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
    for flag in ("--ros2", "--ros2-domain", "--ros2-rate"):
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
