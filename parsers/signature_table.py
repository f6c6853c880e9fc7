"""Data signatures: single-line messages recognised by a table, not by code.

``parsers/signatures/*.toml`` (loaded in file-name order) hold ``[[signature]]`` tables:

* ``id`` (unique), ``kind`` (the event kind), ``pattern`` (Python regular expression, searched
  in the message, so an unknown prefix before it does not matter);
* ``code`` / ``device`` / ``host`` / ``job_id``: a literal, or ``{name}`` for a named group of
  ``pattern`` (``"CUDA_ERROR_{name}"`` mixes both); ``value`` / ``rank`` / ``iteration``: the
  name of a numeric group; ``value_scale``: a factor for ``value`` (an iteration row's value
  is milliseconds per iteration: 1000 for a framework that prints seconds);
* ``format`` (default: the file's stem), ``status`` (``event`` by default; ``noise`` claims a
  recognised line that carries no signal), ``anchors`` (literals; by default derived from the
  pattern by ``parsers.anchors``), ``examples`` (real-format lines the signature must match;
  a test checks each against its pattern and the prefilter) and ``cite`` (where the format
  comes from: the printing code and its version, or a public thread).

The first signature that matches wins; put specific ones before general ones. A signature whose
pattern needs no literal must list ``anchors`` (loading fails otherwise), so the prefilter can
never skip a line it could match. Users add signatures through ``--rules`` (see
``pipeline/ingest/rules/README.md``, rows of kind ``text``).
"""

from __future__ import annotations

import contextlib
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

import ahocorasick

from parsers.anchors import Prefilter, required_literals, trie_pattern
from parsers.base import EVENT, NOISE, Emit, never_open
from parsers.relax import relaxed

_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+")
_FIELD = re.compile(r"\{(\w+)\}")
_TEXT_FIELDS = ("code", "device", "host", "job_id")
_NUM_FIELDS = ("value", "rank", "iteration")
_KEYS = {"id", "kind", "pattern", "format", "status", "anchors", "examples", "cite",
         "value_scale", *_TEXT_FIELDS, *_NUM_FIELDS}
#: a named group ``message`` gives the row's message (default: the whole message)


class SignatureError(ValueError):
    """A signature file that cannot be used; the message names the file, the id and the fix."""


@dataclass(frozen=True)
class Signature:
    id: str
    kind: str
    regex: re.Pattern[str]
    fields: tuple[tuple[str, str], ...]  #: (field, template) for text fields
    numbers: tuple[tuple[str, str], ...]  #: (field, group) for numeric fields
    format: str
    noise: bool
    anchors: tuple[str, ...]
    ci: bool
    examples: tuple[str, ...]
    cite: str
    value_scale: float = 1.0

    def row(self, m: re.Match[str]) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "format": self.format}
        groups = m.groupdict()
        for name, template in self.fields:
            out[name] = _FIELD.sub(lambda g: groups.get(g.group(1)) or "", template) or None
        for name, group in self.numbers:
            v = groups.get(group)
            if v is not None:
                if _THOUSANDS.fullmatch(v):  # Python's ``{:,d}`` (BasicSR's ``iter:  10,100``)
                    v = v.replace(",", "")
                with contextlib.suppress(ValueError):
                    out[name] = float(v) * self.value_scale if name == "value" else int(v)
        return out


def _compile(raw: dict[str, Any], where: str, fmt: str) -> Signature:
    unknown = set(raw) - _KEYS
    sid = raw.get("id")
    if unknown:
        raise SignatureError(f"{where}: signature {sid!r}: unknown key(s) {sorted(unknown)}")
    for key in ("id", "kind", "pattern"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise SignatureError(f"{where}: every signature needs a non-empty {key!r}")
    try:
        regex = re.compile(raw["pattern"])
    except re.error as e:
        raise SignatureError(f"{where}: signature {sid!r}: bad pattern ({e})") from None
    declared = raw.get("anchors")
    derived = required_literals(raw["pattern"])
    if declared:
        anchors, ci = tuple(declared), False
    elif derived is not None:
        anchors, ci = tuple(sorted(derived.literals)), derived.ci
    else:
        raise SignatureError(f"{where}: signature {sid!r}: its pattern needs no literal "
                             "text, so the prefilter cannot select its lines; add anchors = "
                             "[...] (strings every matching line contains)")
    fields = tuple((k, str(raw[k])) for k in _TEXT_FIELDS if k in raw)
    numbers = tuple((k, str(raw[k])) for k in _NUM_FIELDS if k in raw)
    for _name, template in fields:
        for g in _FIELD.findall(template):
            if g not in regex.groupindex:
                raise SignatureError(f"{where}: signature {sid!r}: {{{g}}} is not a named "
                                     "group of its pattern")
    for _name, g in numbers:
        if g not in regex.groupindex:
            raise SignatureError(f"{where}: signature {sid!r}: {g!r} is not a named group")
    scale = raw.get("value_scale", 1.0)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
        raise SignatureError(f"{where}: signature {sid!r}: value_scale must be a positive "
                             "number")
    return Signature(str(sid), raw["kind"], regex, fields, numbers, raw.get("format", fmt),
                     raw.get("status", "event") == "noise", anchors, ci,
                     tuple(raw.get("examples", ())), raw.get("cite", ""), float(scale))


def load_file(path: Path | Any, name: str) -> list[Signature]:
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise SignatureError(f"{name}: not a valid TOML file ({e})") from None
    stem = name.rsplit("/", 1)[-1].removesuffix(".toml")
    return [_compile(raw, name, stem) for raw in doc.get("signature", [])]


@lru_cache(maxsize=1)
def builtin() -> tuple[Signature, ...]:
    """The shipped signatures, in file-name order."""
    folder = resources.files("parsers.signatures")
    out: list[Signature] = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            out += load_file(entry, f"parsers/signatures/{entry.name}")
    ids = [s.id for s in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise SignatureError(f"duplicate signature id(s): {dup}")
    return tuple(out)


#: extra signatures for this process (``--rules`` rows of kind ``text``); set by ingest
EXTRA: list[Signature] = []


@dataclass(frozen=True)
class _Compiled:
    """The table and one search for the anchors of all its signatures (most lines have
    none): an Aho-Corasick ``automaton`` whose every anchor found names the signatures, by
    table index, that have it or an anchor it starts with; or, for a table with a
    case-insensitive signature (only through ``--rules``), a trie regex (``anchors``) that
    says whether some anchor is there."""

    table: tuple[Signature, ...]
    automaton: ahocorasick.Automaton | None
    anchors: re.Pattern[str] | None

    @property
    def lower(self) -> bool:
        """Whether the table has a case-insensitive signature (the trie regex's case)."""
        return self.anchors is not None


@lru_cache(maxsize=8)
def _compiled(extra: tuple[Signature, ...]) -> _Compiled:
    """Built once per set of --rules signatures, not per file (a fleet has thousands of
    small files)."""
    table = (*extra, *builtin())
    lits = {a for s in table for a in s.anchors}
    if any(s.ci for s in table):
        return _Compiled(table, None, re.compile(trie_pattern(lits), re.IGNORECASE))
    automaton = ahocorasick.Automaton()
    for a in lits:
        automaton.add_word(a, tuple(i for i, s in enumerate(table)
                                    if any(a.startswith(b) for b in s.anchors)))
    if lits:
        automaton.make_automaton()
    return _Compiled(table, automaton if lits else None, None)


class SignatureMatcher:
    """The data signatures as one recogniser (first match wins)."""

    SIGNAL: ClassVar[tuple[str, ...]] = ()
    SIGNAL_RE: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self.c = _compiled(tuple(EXTRA))
        self.table = self.c.table

    def prefilter(self) -> Prefilter:
        """The signatures' anchors; a line that holds only anchors of signatures with a
        relaxed form (``parsers.relax``) must also match one of those forms."""
        pf = Prefilter()
        for s in self.table:
            rx = None if s.ci else relaxed(s.regex.pattern)
            if rx is not None:
                pf.checked[rx] = pf.checked.get(rx, ()) + s.anchors
            else:
                (pf.ci_literals if s.ci else pf.literals).update(s.anchors)
        return pf

    def _having_anchors(self, text: str) -> list[Signature]:
        """The signatures with an anchor in ``text``, in table order. Case-sensitive anchors:
        one Aho-Corasick pass names them (pyahocorasick: ~2 us on a kernel line, where a
        trie regex took ~5 and a test of every signature's anchors ~14); with a
        case-insensitive table, those tests after the trie regex found an anchor."""
        c = self.c
        if c.automaton is not None:
            found: set[int] = set()
            for _end, sigs in c.automaton.iter(text):
                found.update(sigs)
            return [self.table[i] for i in sorted(found)]
        if c.anchors is None or c.anchors.search(text) is None:
            return []
        low = text.lower()
        return [s for s in self.table if any(a in (low if s.ci else text) for a in s.anchors)]

    def _first(self, text: str) -> tuple[Signature, re.Match[str]] | None:
        for s in self._having_anchors(text):
            m = s.regex.search(text)
            if m is not None:
                return s, m
        return None

    def match(self, text: str, line_no: int, emit: Emit) -> int | None:
        hit = self._first(text)
        if hit is None:
            return None
        s, m = hit
        if s.noise:
            return NOISE
        msg = m.groupdict().get("message")
        emit(**s.row(m), message=msg.strip() if msg else text.strip())
        return EVENT

    def fields(self, text: str) -> dict[str, Any] | None:
        """The fields of the row ``text`` would get (kind, code, ...), emitting nothing; None
        if no signature says it is a signal (a traceback's final line is asked this)."""
        hit = self._first(text)
        return None if hit is None or hit[0].noise else hit[0].row(hit[1])

    def finish(self, emit: Emit) -> None:
        """No multi-line state."""

    is_open = never_open
