"""History lives in git and the CHANGELOG, not in the code or the docs: no file of the package,
no page of docs/, not the README and no test, benchmark or study names an issue or a pull
request by number ("issue 55", "issues 54, 55", "#55") or a helper branch of a round
("h44-external"); the docs, tests, benchmarks and studies name no round ("round 13", "round
twelve", "this round's merges") and no path of a developer's machine (/work/..., /home/...). A
reason is written as the reason, not as a pointer to a thread."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NUMBERED = re.compile(r"(?i:\bissues?|\bpull request)\s*#?\d+|\bPR\s*#\d+|\bPR \d+|"
                      r"(?<![\w&#])#\d+\b|\bh\d\d-[a-z]")
#: ``#2`` after a label is a rule's second instance (``monitors#2``), not an issue
INSTANCE = re.compile(r"\w#\d+|``#\d+``")
_NUMBERS = ("one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
            "fifteen|sixteen|seventeen|eighteen|nineteen|twenty")
_ORDINALS = ("first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
             "thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|"
             "twentieth")
#: a development round by number or by reference ("round 13", "round-14", "round twelve",
#: "this round's"), not a round trip nor a benchmark round's count ("round 1/3 done"); and a
#: developer machine's paths
ROUNDS = re.compile(rf"(?i)\bround[ -]?\d+(?![\d/])|\bround[ -](?:{_NUMBERS})\b|"
                    rf"\b(?:{_ORDINALS}|this|that|each|every|per|earlier|last) rounds?\b"
                    r"(?! trip)(?:'s)?(?! trip)|/work/|/home/\w")


_LEAD = re.compile(r"^\s*(?:#:?|//|\*|>)?\s*")


def mentions(text: str, rounds: bool = False) -> list[str]:
    """Each line of ``text`` that names an issue number (with ``rounds``: or a round, or a
    developer machine's path), as ``line: text``."""
    lines = text.splitlines()
    found = []
    for n, line in enumerate(lines, 1):
        # a mention wrapped onto the next line ("(issue\n    44's"): the line and the next's
        # start, less its indent and comment marker, read as one
        after = _LEAD.sub("", lines[n]) if n < len(lines) else ""
        joined = INSTANCE.sub("", f"{line} {after}")
        if NUMBERED.search(INSTANCE.sub("", line)) or (
                NUMBERED.search(joined) and not NUMBERED.search(INSTANCE.sub("", after))) or (
                rounds and (ROUNDS.search(line) or (ROUNDS.search(f"{line} {after}")
                                                    and not ROUNDS.search(after)))):
            found.append(f"{n}: {line.strip()}")
    return found


def test_the_scan_finds_the_ways_an_issue_was_named():
    found = mentions("x = 1  # issue 55\n(issues 54, 55)\nsee #12 there\nh44-external: y\n"
                     "rule monitors#2 and ``#3``\ncolour 0x12, item #A, PR2's base\nPR #7, Issue 3\n"
                     "held (issue\n    # 44's robots)\n")
    assert [m.split(":")[0] for m in found] == ["1", "2", "3", "4", "7", "8"]
    doc = ("round 13 found it\nthe merged round-14 code\nround twelve's base\nthis round's merges\n"
           "one round trip a step\nround the centre\n/work/wt/h59-base\nfrom /tmp\n"
           "the round trip's p50\nround 1/3 done\nround 12/20\n")
    assert [m.split(":")[0] for m in mentions(doc, rounds=True)] == ["1", "2", "3", "4", "7"]


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


def test_no_doc_names_an_issue_a_round_or_a_developer_path():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    assert len(pages) > 20
    found = []
    for page in pages:
        found += [f"{page.relative_to(ROOT)}:{m}"
                  for m in mentions(page.read_text(encoding="utf-8"), rounds=True)]
    assert found == [], "issues, rounds or machine paths in the docs (say the reason or the " \
        "figure's command instead):\n" + "\n".join(found)


def test_no_test_benchmark_or_study_names_an_issue_or_a_round():
    files = subprocess.run(["git", "ls-files", "tests", "benchmarks", "studies"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    this = Path(__file__).resolve().relative_to(ROOT).as_posix()  # its examples are the point
    files = [name for name in files if name.endswith(".py") and name != this]
    assert len(files) > 300
    found = []
    for name in files:
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            continue  # deleted in the work tree
        found += [f"{name}:{m}" for m in mentions(text, rounds=True)]
    assert found == [], "issues, rounds or machine paths in tests, benchmarks or studies (say " \
        "the reason instead):\n" + "\n".join(found)
