"""Signature patterns stay on the regex crate's fast path.

The relaxed patterns that confirm checked-anchor lines run as a few alternations over every
chunk (``parsers.anchors.CONFIRM_GROUP``). A bounded repetition of a class (``[\\w .-]{0,40}``,
``.{0,200}``, ``[^']{1,200}``: the Rust regex expands each bound into that many copies of the
class, thousands of ranges for a Unicode one) made one alternation take 13 s per 20,000
kubectl-stamped lines instead of 70 ms (2026-12-04: a kubectl-stamped ingest 0.9 -> 2.0 s);
an ASCII ``[A-Za-z0-9_ .-]{0,40}`` unanchored in front of a pattern still took a syslog
alternation from 9 to 141 ms. Timing is no test; the shape is: no class repeated more than
``MAX_BOUND`` times by a bound (``*?`` / ``+?`` instead)."""

from __future__ import annotations

import re._constants as c
import re._parser as p
from typing import Any

from parsers.signature_table import builtin

MAX_BOUND = 16


def _wide(item: Any) -> bool:
    """Does one repeated item stand for a class (``\\w``, ``.``, a set, a negated one)?"""
    for op, av in item:
        if op in (c.ANY, c.NOT_LITERAL, c.IN, c.CATEGORY):
            return True
        if op is c.SUBPATTERN and _wide(av[-1]):
            return True
        if op is c.BRANCH and any(_wide(b) for b in av[1]):
            return True
    return False


def _bounded_wide(tree: Any) -> list[str]:
    out = []
    for op, av in tree:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT):
            lo, hi, item = av
            if hi is not c.MAXREPEAT and hi > MAX_BOUND and _wide(item):
                out.append(f"{{{lo},{hi}}}")
            out += _bounded_wide(item)
        elif op is c.SUBPATTERN:
            out += _bounded_wide(av[-1])
        elif op is c.BRANCH:
            for b in av[1]:
                out += _bounded_wide(b)
    return out


def test_no_long_bounded_repetition_of_a_wide_class() -> None:
    bad = {s.id: got for s in builtin() if (got := _bounded_wide(p.parse(s.regex.pattern)))}
    assert bad == {}, ("a class repeated by a bound over MAX_BOUND: use *? / +?", bad)


def test_the_check_sees_the_shapes_that_fell_off() -> None:
    for pattern in (r"(?P<d>\b[A-Za-z][\w .-]{0,40}?): ", r"\(.{0,200}?\) failed",
                    r": '?[^']{1,200}'? was", r"[A-Za-z][A-Za-z0-9_ .-]{0,40}?: "):
        assert _bounded_wide(p.parse(pattern)), pattern
    for pattern in (r"[A-Za-z][A-Za-z0-9_ .-]*?", r"\([^)]*\)", r"\d{1,3}%", r"\w+"):
        assert not _bounded_wide(p.parse(pattern)), pattern
