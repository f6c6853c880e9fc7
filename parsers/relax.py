"""A pattern's *relaxed* form: a Rust regex that matches every line its pattern can match in.

The prefilter (``parsers.prefilter``) lets a line into Python when it holds a literal anchor of
some signature. Anchors are short (the ``kubectl get pytorchjobs`` row's is ``Failed``), so in
a real syslog most of the lines they pass are no signal at all (sshd's ``Failed password for
root from ...``: 13% of the lines of a public server's syslog, ~15 us each in Python). The
relaxed form of the signature's own pattern confirms such a line at chunk speed; only lines it
matches go to Python.

``relaxed(pattern)`` rewrites the parse tree of Python's ``re`` (``re._parser``) so that the
result matches *at least* every string in which the pattern can be found, anywhere in a longer
line (the signature is searched in the message, which is a part of the line):

* assertions (``^``, ``$``, ``\\b``, look-arounds) are dropped (the message's start need not be
  the line's); lazy, possessive and atomic parts become plain ones;
* a literal digit becomes ``[0-9]`` and a class that holds some digits holds all ten, so the
  result cannot tell digits apart (``dedupe.digit_blind``: it may run on a chunk's
  digit-zeroed shapes);
* Python's ``\\s`` holds ``\\x1c-\\x1f`` and its ``\\w`` numerals that Rust's do not: the
  classes are widened (``tests/parsers/test_relax.py`` checks every code point);
* every other character is written ``\\x{...}``, which both engines read alike.

It gives None for what it cannot rewrite safely: back-references, conditionals, a
case-insensitive part. The caller keeps the literal anchors alone for those.

A line whose message is *not* a part of it (ANSI colour codes stripped, a JSON string
unescaped) is never confirmed away: ``UNTRANSFORMED`` says which lines can be.
"""

from __future__ import annotations

import functools
import re
import re._constants as c
import re._parser as sre
from typing import Any

#: a line without these is the text its recognisers search, cut but not rewritten
#: (``parsers.prefix``: ``strip_ansi`` drops ESC sequences, JSON strings have backslashes)
TRANSFORMED = r"[\x1b\\]"

_DIGITS = frozenset(range(48, 58))
_POS = {c.CATEGORY_DIGIT: r"\d", c.CATEGORY_SPACE: r"\s\x1c-\x1f",
        c.CATEGORY_WORD: r"\w\p{N}", c.CATEGORY_NOT_SPACE: r"\S"}
#: what a negated class may exclude in place of the category (a part of what Python excludes)
#: (ASCII only: the two engines' Unicode tables are of different versions)
_NEG = {c.CATEGORY_DIGIT: "0-9", c.CATEGORY_SPACE: r"\t-\r\x{20}", c.CATEGORY_WORD: "0-9A-Z_a-z"}
_ANY = "(?s:.)"


class _Unsafe(Exception):
    pass


@functools.lru_cache(maxsize=1024)
def relaxed(pattern: str) -> str | None:
    """The relaxed Rust regex of ``pattern`` (see the module docstring), or None."""
    try:
        tree = sre.parse(pattern)
        if tree.state.flags & re.IGNORECASE:
            return None
        return _seq(tree)
    except (_Unsafe, re.error, RecursionError):
        return None


def _char(v: int) -> str:
    ch = chr(v)
    return ch if ch.isascii() and ch.isalnum() else f"\\x{{{v:x}}}"


def _seq(nodes: Any) -> str:
    return "".join(_node(op, av) for op, av in nodes)


def _node(op: Any, av: Any) -> str:
    if op is c.LITERAL:
        return "[0-9]" if av in _DIGITS else _char(av)
    if op is c.NOT_LITERAL:
        return _ANY if av in _DIGITS else "[^" + _char(av) + "]"
    if op is c.ANY:
        return _ANY
    if op is c.IN:
        return _class(av)
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        return ""
    if op is c.BRANCH:
        return "(?:" + "|".join(_seq(alt) for alt in av[1]) + ")"
    if op is c.SUBPATTERN:
        _group, add, _del, sub = av
        if add & re.IGNORECASE:
            raise _Unsafe
        return "(?:" + _seq(sub) + ")"
    if op is c.ATOMIC_GROUP:
        return "(?:" + _seq(av) + ")"
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)):
        lo, hi, sub = av
        body = _seq(sub)
        if not body:
            return ""
        top = "" if hi is c.MAXREPEAT else str(hi)
        return "(?:" + body + "){" + f"{lo},{top}" + "}"
    raise _Unsafe  # back-references, conditionals, anything not walked here


def _class(items: Any) -> str:
    negate = bool(items) and items[0][0] is c.NEGATE
    parts: list[str] = []
    digits = False
    for op, av in items[1:] if negate else items:
        if op is c.LITERAL:
            if av in _DIGITS:
                digits = True
            else:
                parts.append(_char(av))
        elif op is c.RANGE:
            lo, hi = av
            if lo <= 57 and hi >= 48 and not (lo <= 48 and hi >= 57):
                digits = True  # a range over some digits: all of them, or none if negated
                pieces = [(lo, min(hi, 47)), (max(lo, 58), hi)]
                parts += [f"{_char(a)}-{_char(b)}" for a, b in pieces if a <= b]
            else:
                parts.append(f"{_char(lo)}-{_char(hi)}")
        elif op is c.CATEGORY:
            table = _NEG if negate else _POS
            if av not in table:
                return _ANY  # \W, \D (and \S negated): widen to any character
            parts.append(table[av])
        else:
            raise _Unsafe
    if negate:
        # digits named in a negated class are not excluded (a superset, and digit-blind)
        return "[^" + "".join(parts) + "]" if parts else _ANY
    if digits:
        parts.append("0-9")
    return "[" + "".join(parts) + "]" if parts else "[^\\x{0}-\\x{10ffff}]"
