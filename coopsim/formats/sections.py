"""The grammar shared by ``.world`` and ``.scenario`` files: ``[SECTION]`` headers followed by
``key value…`` lines (fields separated by tabs or spaces), after the CoopDynSim templates.

Backwards-compatible extensions: ``#`` comments (at a line's start or after white space), blank
lines, a key line on its header's line (the paper's ``[WORLD]	file path``). Each section kind has
a :class:`Rule` with one :class:`Key` row per allowed key saying how to parse its values, so adding
a key is adding a row. :func:`split_sections` raises :class:`~coopsim.model.errors.FileFormatError`
(``path:line: reason``) at the first problem. The formats themselves live in :mod:`coopsim.formats.files`.
"""

from __future__ import annotations

import errno
import math
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from ..model.errors import CoopsimError, FileFormatError
from ..model.files import PathLike, open_regular
from ..model.limits import FIELDS, first_problem


#: Largest file read, bytes; anything bigger is not a hand-written world or scenario.
MAX_FILE_BYTES = 8 * 1024 * 1024

NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)
_NOT_FINITE = re.compile(r"[+-]?(nan|inf|infinity)", re.IGNORECASE)
INT = re.compile(r"[+-]?\d{1,19}", re.ASCII)
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER = re.compile(r"\[([^\]]*)\](.*)")
_INDEX = re.compile(r"[1-9][0-9]{0,8}", re.ASCII)
_COMMENT = re.compile(r"(^|\s)#.*")
_WORD = re.compile(r"[A-Za-z0-9_.:/+-]{1,200}")



class Bad(CoopsimError):
    """A value is wrong; the caller knows the file and line and adds them."""


@contextmanager
def about(what: str):
    """A Bad raised inside says what it is about: ``box`` + ``must be a number`` ..."""
    try:
        yield
    except Bad as exc:
        raise Bad(f"{what} {exc}") from None



# --- value converters: one token in, one value out, or Bad("must ...") ----------------------------

def number(tok: str) -> float:
    if not NUMBER.fullmatch(tok):
        finite = "finite " if _NOT_FINITE.fullmatch(tok) else ""
        raise Bad(f"must be a {finite}number, got {tok!r}")
    if not math.isfinite(float(tok)):
        raise Bad(f"must be a finite number, got {tok!r}")
    return float(tok)


number.rule = "a number"


def real(text: str, ok: Callable[[float], bool]) -> Callable[[str], float]:
    """Converter to a float for which ``ok`` holds; ``text`` says which (``> 0``)."""
    def conv(tok: str) -> float:
        value = number(tok)
        if not ok(value):
            raise Bad(f"must be {text}, got {tok}")
        return value
    conv.rule = text  # what the reference (coopsim.app.reference) says of the value
    return conv


def integer(text: str, ok: Callable[[int], bool]) -> Callable[[str], int]:
    """Converter to an int for which ``ok`` holds; ``text`` says which (``an integer 0-255``)."""
    def conv(tok: str) -> int:
        if not INT.fullmatch(tok) or not ok(int(tok)):
            raise Bad(f"must be {text}, got {tok!r}")
        return int(tok)
    conv.rule = text
    return conv


def param_value(tok: str, words: bool = False):
    """A parameter value: an int, a finite number, true/false, or (``words``) any other word."""
    if tok.lower() in ("true", "false"):
        return tok.lower() == "true"
    try:
        return int(tok) if INT.fullmatch(tok) else number(tok)
    except Bad:
        if words and _WORD.fullmatch(tok) and not NUMBER.match(tok):
            return tok
        kinds = "a number, true/false or a word" if words else "a number or true/false"
        raise Bad(f"value must be {kinds}, got {tok!r}") from None


def boolean(tok: str) -> bool:
    if tok.lower() not in ("true", "false", "1", "0"):
        raise Bad(f"must be true, false, 1 or 0, got {tok!r}")
    return tok.lower() in ("true", "1")


boolean.rule = "true, false, 1 or 0"



# --- key parsers: (key, tokens, rest of line) -> value, or Bad("whole reason") --------------------

Parse = Callable[[str, list, str], object]


def fixed(names: tuple, conv, check: Callable | None = None) -> Parse:
    """Parser for a key taking exactly ``len(names)`` tokens, each run through ``conv``.

    ``conv`` is one converter for every token or a tuple of one per token; ``check`` sees the
    whole converted value. One value gives a scalar, several a tuple.
    """
    convs = conv if isinstance(conv, tuple) else (conv,) * len(names)

    def parse(key: str, tokens: list, rest: str) -> object:
        if len(tokens) != len(names):
            count = "1 value" if len(names) == 1 else f"{len(names)} values"
            raise Bad(f"{key} needs {count} ({' '.join(names)}), got {len(tokens)}")
        values = []
        for name, tok, one in zip(names, tokens, convs):
            with about(key if len(names) == 1 else f"{key} {name}"):
                values.append(one(tok))
        value = tuple(values) if len(names) > 1 else values[0]
        if check is not None:
            check(value)
        return value
    parse.usage = " ".join(names)
    rules = [getattr(c, "rule", "") for c in convs]
    if getattr(check, "rule", ""):  # the whole value's range says more than "a number"
        rules = [r for r in rules if r != number.rule] + [check.rule]
    parse.rule = "; ".join(dict.fromkeys(r for r in rules if r))
    return parse


def pick(what: str, options: Iterable[str]) -> Parse:
    """Parser for a key taking one word out of ``options``."""
    options = tuple(options)

    def parse(key: str, tokens: list, rest: str) -> str:
        if len(tokens) != 1:
            raise Bad(f"{key} needs 1 value ({what}), got {len(tokens)}")
        if tokens[0] not in options:
            raise Bad(f"unknown {what} {tokens[0]!r} (expected {', '.join(options)})")
        return tokens[0]
    parse.usage, parse.rule = what, ", ".join(options)
    return parse


def rest(what: str) -> Parse:
    """Parser for a key taking the rest of its line verbatim (paths, shell commands)."""
    def parse(key: str, tokens: list, rest: str) -> str:
        if not rest:
            raise Bad(f"{key} needs a value ({what})")
        return rest
    parse.usage, parse.rule = what, "the rest of the line"
    return parse



# --- tables: which sections hold which keys -------------------------------------------------------

@dataclass(frozen=True)
class Key:
    """One allowed key: how to parse it, whether it must appear, whether it may repeat.

    The reference (docs/reference, ``python -m coopsim.app.reference``) shows each key's
    values from its parser: the ``usage`` and ``rule`` that :func:`fixed`, :func:`pick` and
    :func:`rest` give theirs, else the first line of the parser's docstring; ``doc`` adds a
    sentence where those do not say enough.
    """

    parse: Parse
    required: bool = False
    repeat: bool = False
    doc: str = ""


@dataclass(frozen=True)
class Rule:
    """One section kind and its keys; ``indexed`` kinds are written ``[KIND_n]``, n = 1, 2, …"""

    keys: Mapping[str, Key]
    indexed: bool = False
    word: str = "key"



# --- reading and splitting into sections ----------------------------------------------------------

@dataclass
class Section:
    """One parsed section; ``entries`` holds (key, converted value, line) in file order."""

    name: str
    kind: str
    line: int
    entries: list = field(default_factory=list)

    def get(self, key: str, default: object = None) -> object:
        return next((v for k, v, _ in self.entries if k == key), default)

    def line_of(self, key: str) -> int:
        return next((n for k, _, n in self.entries if k == key), self.line)


def read_text(path: PathLike) -> str:
    """Return the text of ``path``, or raise FileFormatError (missing, unreadable, binary, or
    not a regular file: a FIFO or device is refused without blocking on it)."""
    try:
        fh = open_regular(path)
    except FileNotFoundError:
        raise FileFormatError(path, 0, "no such file") from None
    except IsADirectoryError:
        raise FileFormatError(path, 0, "is a directory, not a file") from None
    except OSError as exc:
        raise FileFormatError(path, 0, exc.strerror if exc.errno == errno.ENXIO else
                              f"cannot read file: {exc.strerror or exc}") from None
    with fh:
        try:
            data = fh.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise FileFormatError(path, 0, f"cannot read file: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise FileFormatError(path, 0, f"file too large (over {MAX_FILE_BYTES} bytes)")
    if b"\x00" in data:
        raise FileFormatError(path, 1, "binary file, not a text file (it holds NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = data.count(b"\n", 0, exc.start) + 1
        raise FileFormatError(path, 1, "binary file, not a text file "
                                       f"(invalid UTF-8 on line {bad})") from None


def _kind_of(name: str, rules: Mapping[str, Rule], ext: str) -> str:
    """Return the rule key for section ``name`` or raise Bad saying why it is not allowed."""
    if name in rules and not rules[name].indexed:
        return name
    head, _, index = name.rpartition("_")
    if head in rules and rules[head].indexed:
        if _INDEX.fullmatch(index):
            return head
        raise Bad(f"bad section name [{name}]: n in [{head}_n] must be a positive integer")
    if name in rules:
        raise Bad(f"bad section name [{name}]: write [{name}_n] with n = 1, 2, …")
    if name != name.upper():
        try:
            _kind_of(name.upper(), rules, ext)
        except Bad:
            pass
        else:
            raise Bad(f"section names are upper case: write [{name.upper()}], not [{name}]")
    allowed = ", ".join(f"[{k}_n]" if r.indexed else f"[{k}]" for k, r in rules.items())
    raise Bad(f"unknown section [{name}] in a {ext} file (allowed: {allowed})")


def _open(line: str, lineno: int, path: PathLike, rules, ext: str, seen: dict) -> tuple:
    """Start the section whose header is ``line``; return it and the text after the header."""
    match = _HEADER.fullmatch(line)
    if not match:
        raise FileFormatError(path, lineno, f"malformed section header {line[:40]!r}")
    name = match.group(1)
    try:
        kind = _kind_of(name, rules, ext)
    except Bad as exc:
        raise FileFormatError(path, lineno, str(exc)) from None
    if name in seen:
        raise FileFormatError(path, lineno, f"duplicate section [{name}] "
                                            f"(first at line {seen[name]})")
    seen[name] = lineno
    return Section(name, kind, lineno), match.group(2).strip()


def _add(section: Section, line: str, lineno: int, path: PathLike, rule: Rule) -> None:
    """Parse the ``key value…`` line ``line`` into ``section``."""
    key = line.split(maxsplit=1)[0]
    if not _KEY.fullmatch(key):
        raise FileFormatError(path, lineno, f"not a 'key value…' line: {line[:40]!r}")
    spec = rule.keys.get(key)
    if spec is None:
        raise FileFormatError(path, lineno, f"unknown {rule.word} {key!r} in [{section.name}] "
                                            f"(expected {', '.join(rule.keys)})")
    if not spec.repeat and any(k == key for k, _, _ in section.entries):
        raise FileFormatError(path, lineno, f"duplicate key {key!r} in [{section.name}] "
                                            f"(first at line {section.line_of(key)})")
    try:
        value = spec.parse(key, line.split()[1:], line[len(key):].strip())
    except Bad as exc:
        raise FileFormatError(path, lineno, str(exc)) from None
    section.entries.append((key, value, lineno))


def _close(section: Section | None, path: PathLike, rules: Mapping[str, Rule]) -> None:
    """Check that a finished section holds all its required keys."""
    if section is None:
        return
    have = {k for k, _, _ in section.entries}
    for key, spec in rules[section.kind].keys.items():
        if spec.required and key not in have:
            raise FileFormatError(path, section.line,
                                  f"[{section.name}] is missing the required key {key!r}")


def split_sections(text: str, path: PathLike, rules: Mapping[str, Rule], ext: str) -> list:
    """Split ``text`` into checked sections, raising FileFormatError at the first problem."""
    if "\x00" in text:
        raise FileFormatError(path, 1, "binary file, not a text file (it holds NUL bytes)")
    if not text.strip():
        raise FileFormatError(path, 0, "empty file")
    sections: list[Section] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = _COMMENT.sub("", raw).strip()
        if line.startswith("["):
            _close(sections[-1] if sections else None, path, rules)
            section, line = _open(line, lineno, path, rules, ext, seen)
            sections.append(section)
        if not line:
            continue
        if not sections:
            raise FileFormatError(path, lineno, "text before the first [SECTION] header")
        _add(sections[-1], line, lineno, path, rules[sections[-1].kind])
    if not sections:
        raise FileFormatError(path, 0, "empty file (only comments and blank lines)")
    _close(sections[-1], path, rules)
    return sections


def within(*labels: str):
    """A whole-key check: each value within the range of its field (same sentence as /sim)."""
    def check(values) -> None:
        why = first_problem(zip(labels, values if isinstance(values, tuple) else (values,)))
        if why:
            raise Bad(why)
    spans = list(dict.fromkeys(FIELDS[label].span() for label in labels))
    check.rule = f"each {spans[0]}" if len(spans) == 1 and len(labels) > 1 else "; ".join(
        f"{label.split()[-1]} {FIELDS[label].span()}" for label in labels) if len(spans) > 1 \
        else spans[0]
    return check


POSITION = fixed(("x", "y", "z"), number, within("position x", "position y", "position z"))
