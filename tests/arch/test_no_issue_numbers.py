"""History lives in git and the CHANGELOG, not in the code: no file of the package names an
issue or a pull request by number ("issue 55", "issues 54, 55", "#55") or a helper branch of a
round ("h44-external"). A reason is written as the reason, not as a pointer to a thread."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NUMBERED = re.compile(r"(?i:\bissues?|\bpull request)\s*#?\d+|\bPR\s*#\d+|\bPR \d+|"
                      r"(?<![\w&#])#\d+\b|\bh\d\d-[a-z]")
#: ``#2`` after a label is a rule's second instance (``monitors#2``), not an issue
INSTANCE = re.compile(r"\w#\d+|``#\d+``")


def mentions(text: str) -> list[str]:
    """Each line of ``text`` that names an issue number, as ``line: text``."""
    return [f"{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1)
            if NUMBERED.search(INSTANCE.sub("", line))]


def test_the_scan_finds_the_ways_an_issue_was_named():
    found = mentions("x = 1  # issue 55\n(issues 54, 55)\nsee #12 there\nh44-external: y\n"
                     "rule monitors#2 and ``#3``\ncolour 0x12, item #A, PR2's base\nPR #7, Issue 3\n")
    assert [m.split(":")[0] for m in found] == ["1", "2", "3", "4", "7"]


def test_no_file_in_the_package_names_an_issue():
    files = subprocess.run(["git", "ls-files", "coopsim"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    assert len(files) > 300
    found = []
    for name in files:
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue  # a binary file (an image, a mesh) or one deleted in the work tree
        found += [f"{name}:{m}" for m in mentions(text)]
    assert found == [], "issue numbers in the package (say the reason instead):\n" + \
        "\n".join(found)
