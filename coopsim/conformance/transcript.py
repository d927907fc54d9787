"""Transcripts: load them, and match a reply against an expected reply with patterns.

A transcript file is JSON lines (``#`` lines are comments); each line is one *step*::

    {"id": "sonar.read", "port": "/bot", "send": [0, "", 200, [], []],
     "expect": [0, "", 200, [{"int": [0, null]}], {"len": 11, "each": {"num": [0, 2]}}]}

``send`` is the five-item request (docs/protocol.md section 1). Instead of it a step may carry
``raw`` (hex of a frame that is no well-formed request: ZeroMQ transports only) or ``line`` (a
text line for the JSON gateway only). ``expect`` is the reply, each item a pattern
(:func:`match`). ``requires`` lists what the server must offer for the step to run (``live``,
``replay``, ``ownership``, ``gateway``, ``raw``, ``idle_timeout``); a runner skips the others
and says why. A line holding only ``{"requires": [...]}`` gives every later step of its file
those requirements. ``conn`` 2 sends a step on the runner's second connection (another client).
No import of zmq here: this module is shared by every runner.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..model.errors import CoopsimError

TRANSCRIPTS = Path(__file__).resolve().parent / "transcripts"
SCENARIO = Path(__file__).resolve().parent / "conformance.scenario"
#: The server of the flight transcript (08_flight): a Crazyflie on the mujoco engine
FLIGHT_SCENARIO = Path(__file__).resolve().parent / "flight.scenario"


class TranscriptError(CoopsimError):
    """A transcript file that is not valid (``file:line: what is wrong``)."""


@dataclass(frozen=True)
class Step:
    """One request and the reply it must get.

    Attributes:
        id: Name of the step (unique in its file).
        where: ``file:line`` of the step, for reports.
        port: Destination port name (``/nameserver`` for the name server itself).
        send: The five-item request, or None for a raw or gateway-line step.
        raw: Bytes of a malformed frame (ZeroMQ transports only), or None.
        line: A text line for the gateway (gateway only), or None.
        expect: The expected five-item reply, items as patterns.
        requires: What the server must offer for the step to run.
        conn: The runner's connection it is sent on (1, or 2 for a second client).
    """

    id: str
    where: str
    port: str
    expect: list
    send: list | None = None
    raw: bytes | None = None
    line: str | None = None
    requires: tuple[str, ...] = field(default=())
    conn: int = 1


def load(path: Path) -> list[Step]:
    """The steps of one transcript file, in order.

    Raises:
        TranscriptError: ``file:line: what is wrong`` for the first bad line.
    """
    steps, common = [], ()
    for number, text in enumerate(Path(path).read_text().splitlines(), 1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        where = f"{Path(path).name}:{number}"
        try:
            item = json.loads(text)
            if set(item) == {"requires"}:  # a file's header: what all its steps require
                common = tuple(item["requires"])
                continue
            steps.append(_step(item, where, common))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise TranscriptError(f"{where}: {exc}") from None
    return steps


def load_all(folder: Path = TRANSCRIPTS) -> dict[str, list[Step]]:
    """Every transcript of ``folder`` by file stem, in file-name order."""
    return {p.stem: load(p) for p in sorted(Path(folder).glob("*.jsonl"))}


def _step(item: dict, where: str, common: tuple[str, ...]) -> Step:
    kinds = [k for k in ("send", "raw", "line") if k in item]
    if len(kinds) != 1:
        raise ValueError("a step has exactly one of send, raw, line")
    send = item.get("send")
    if send is not None and (not isinstance(send, list) or len(send) != 5):
        raise ValueError("send is a five-item request")
    expect = item["expect"]
    if not isinstance(expect, list) or len(expect) != 5:
        raise ValueError("expect is a five-item reply")
    raw = bytes.fromhex(item["raw"]) if "raw" in item else None
    requires = common + tuple(item.get("requires", ()))
    if raw is not None:
        requires += ("raw",)
    if "line" in item:
        requires += ("gateway",)
    conn = int(item.get("conn", 1))
    if conn not in (1, 2):
        raise ValueError("conn is 1 or 2")
    return Step(str(item["id"]), where, str(item.get("port", "")), expect, send, raw,
                item.get("line"), requires, conn)


def match(pattern, value, path: str = "reply") -> list[str]:
    """Where ``value`` differs from ``pattern``: an empty list when it matches.

    A pattern is a JSON value: a scalar or a list matches an equal value (an int an int, a
    float any equal number), and an object is one of::

        {"any": true}                  anything
        {"int": [lo, hi]}              an integer, lo <= v <= hi (null: unbounded)
        {"num": [lo, hi]}              a finite number in [lo, hi]
        {"nan": true}                  NaN
        {"re": "regex"}                a string the regex matches whole (dot matches newlines)
        {"len": n or [lo, hi], "each": p, "head": [p, ...]}
                                       a list of that length, whose first items match head
                                       and every item each
        {"lines": {...a list pattern}} a string whose lines ("\\n"-split; "" has none) match
        {"json": ["key", ...]}         a string holding a JSON object with these keys
        {"json": {"key": p, ...}}      ... whose values under these keys match p
    """
    if isinstance(pattern, dict):
        return _match_pattern(pattern, value, path)
    if isinstance(pattern, list):
        if not isinstance(value, (list, tuple)) or len(value) != len(pattern):
            return [f"{path}: expected {_show(pattern)}, got {_show(value)}"]
        return [e for i, (p, v) in enumerate(zip(pattern, value))
                for e in match(p, v, f"{path}[{i}]")]
    if _equal(pattern, value):
        return []
    return [f"{path}: expected {_show(pattern)}, got {_show(value)}"]


def _equal(pattern, value) -> bool:
    if isinstance(pattern, bool) or isinstance(value, bool):
        return pattern is value
    if isinstance(pattern, int) and isinstance(value, int):
        return pattern == value
    if isinstance(pattern, (int, float)) and isinstance(value, (int, float)):
        return float(pattern) == float(value)
    return type(pattern) is type(value) and pattern == value


def _match_pattern(pattern: dict, value, path: str) -> list[str]:
    wrong = [f"{path}: expected {_show(pattern)}, got {_show(value)}"]
    if "any" in pattern:
        return []
    if "int" in pattern:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok and _within(value, pattern["int"]) else wrong
    if "num" in pattern:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok and math.isfinite(value) and _within(value, pattern["num"]) else wrong
    if "nan" in pattern:
        return [] if isinstance(value, float) and math.isnan(value) else wrong
    if "re" in pattern:
        ok = isinstance(value, str) and re.fullmatch(pattern["re"], value, re.DOTALL)
        return [] if ok else wrong
    if "lines" in pattern:
        if not isinstance(value, str):
            return wrong
        return _match_pattern(pattern["lines"], value.split("\n") if value else [],
                              f"{path} lines")
    if "json" in pattern:
        return _match_json(pattern["json"], value, path, wrong)
    if "len" in pattern or "each" in pattern or "head" in pattern:
        return _match_list(pattern, value, path, wrong)
    raise TranscriptError(f"unknown pattern {_show(pattern)}")


def _match_json(keys: list | dict, value, path: str, wrong: list[str]) -> list[str]:
    try:
        doc = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        return wrong
    missing = [k for k in keys if k not in doc]
    if missing:
        return [f"{path}: the JSON document lacks {', '.join(missing)}"]
    if isinstance(keys, dict):  # and the values under them match their patterns
        return [e for k, p in keys.items() for e in match(p, doc[k], f"{path}.{k}")]
    return []


def _match_list(pattern: dict, value, path: str, wrong: list[str]) -> list[str]:
    if not isinstance(value, (list, tuple)):
        return wrong
    size = pattern.get("len")
    if size is not None and not _within(len(value), size if isinstance(size, list)
                                        else [size, size]):
        return [f"{path}: expected {size} items, got {len(value)}: {_show(value)}"]
    errors = []
    for i, (p, v) in enumerate(zip(pattern.get("head", ()), value)):
        errors += match(p, v, f"{path}[{i}]")
    if "each" in pattern:
        for i, v in enumerate(value):
            errors += match(pattern["each"], v, f"{path}[{i}]")
    return errors


def _within(value, bounds) -> bool:
    lo, hi = bounds
    return (lo is None or value >= lo) and (hi is None or value <= hi)


def _show(value, limit: int = 160) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + "..."
