"""Literal anchors of regular expressions, and the vectorised prefilter built from them.

Like ripgrep's literal extraction: for a pattern, find a set of literal strings such that every
line the pattern can match contains at least one of them. A line that contains none of the
anchors of any recogniser cannot produce an event, so it never enters Python: the prefilter
(``Prefilter``) tests a whole chunk of lines at once with one Rust-regex alternation of all
anchors (polars ``str.contains``), and only the lines it selects go to the per-line matchers.

``required_literals`` walks the parse tree of Python's ``re`` (``re._parser``):

* a run of literal characters is a candidate anchor;
* an alternation needs an anchor in every branch (the union of the branches' sets);
* a group, or a repeat with at least one occurrence, needs what its body needs;
* classes, ``.``, optional parts and look-arounds give no guarantee.

Of all candidates in a sequence the most selective set wins (the longest shortest string, then
the fewest strings). Characters that JSON wrappers escape (quotes, backslash, slash, tab)
break a run: a quoted word in Docker's json-file log has backslashes before its quotes.
Case-insensitive parts (``(?i)``) give case-insensitive anchors. A pattern whose matches need
no literal at all gets ``None``: its recogniser must declare anchors itself.
"""

from __future__ import annotations

import functools
import os
import re
import re._constants as c
import re._parser as sre
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from parsers import dedupe
from parsers.relax import TRANSFORMED

#: characters a JSON wrapper (Docker's json-file, ``journalctl -o json``) escapes: a literal
#: containing one would not be found in the raw line
_ESCAPED = frozenset('"\\\t\n\r/')
_REPEATS = {c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)}


@dataclass(frozen=True)
class Anchors:
    """Literals, one of which every match contains (``ci``: compare case-insensitively)."""

    literals: frozenset[str]
    ci: bool = False

    @property
    def quality(self) -> tuple[int, int]:
        return (min((len(s) for s in self.literals), default=0), -len(self.literals))


def trie_pattern(literals: Iterable[str]) -> str:
    """A regex that matches where one of ``literals`` starts, written as a trie
    (``Con(?:nection|tinuing)``) instead of a flat alternation: Python's ``re`` tries every
    branch of an alternation at each position, a trie one branch per character read (76
    signature anchors on kernel lines: ~5 us a line instead of ~11). ``$^`` for none."""
    root: dict[str, Any] = {}
    for lit in literals:
        node = root
        for ch in lit:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(node[ch]) for ch in sorted(node) if ch]
        if "" in node:  # a literal ends here: the longer ones are optional
            return "(?:" + "|".join(alts) + ")?" if alts else ""
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return emit(root) if root else "$^"


def required_literals(pattern: str) -> Anchors | None:
    """Anchors of ``pattern`` (see module docstring), or None if it needs no literal."""
    tree = sre.parse(pattern)
    ci = bool(tree.state.flags & re.IGNORECASE)
    return _seq(list(tree), ci)


def gate_literals(pattern: str) -> Anchors | None:
    """Literals one of which every match of ``pattern`` contains, to gate the regex on the
    very text it is searched in: as ``required_literals``, but no character breaks a run (the
    JSON rule is about other text), and a run before an alternation joins each branch's
    leading literal -- ``re`` factors ``NET/IB|Net`` into ``N(?:ET/IB|et)``, whose best anchors
    would otherwise be ``ET``, ``et``."""
    tree = sre.parse(pattern)
    ci = bool(tree.state.flags & re.IGNORECASE)
    return _seq(list(tree), ci, gate=True)


def _better(a: Anchors | None, b: Anchors | None) -> Anchors | None:
    if a is None:
        return b
    if b is None:
        return a
    return b if b.quality > a.quality else a


def _lit(text: str, ci: bool) -> Anchors:
    return Anchors(frozenset([text.lower() if ci else text]), ci)


def _seq(nodes: list[tuple[Any, Any]], ci: bool, gate: bool = False) -> Anchors | None:
    best: Anchors | None = None
    run: list[str] = []
    for op, av in nodes:
        if op is c.LITERAL and (gate or chr(av) not in _ESCAPED):
            run.append(chr(av))
            continue
        if gate and run and op is c.BRANCH and not ci:
            head = "".join(run)
            best = _better(best, Anchors(frozenset(head + _lead(alt) for alt in av[1])))
        if op is c.LITERAL:  # a character JSON wrappers escape breaks the run
            if run:
                best = _better(best, _lit("".join(run), ci))
            run = []
            continue
        if run:
            best = _better(best, _lit("".join(run), ci))
            run = []
        best = _better(best, _node(op, av, ci, gate))
    if run:
        best = _better(best, _lit("".join(run), ci))
    return best


def _lead(alt: Any) -> str:
    """The literal characters an alternative begins with (maybe none)."""
    out = []
    for op, av in alt:
        if op is not c.LITERAL:
            break
        out.append(chr(av))
    return "".join(out)


def _node(op: Any, av: Any, ci: bool, gate: bool = False) -> Anchors | None:
    if op is c.SUBPATTERN:
        _group, add, _del, sub = av
        return _seq(list(sub), ci or bool(add & re.IGNORECASE), gate)
    if op is c.ATOMIC_GROUP:
        return _seq(list(av), ci, gate)
    if op in _REPEATS:
        lo, _hi, sub = av
        return _seq(list(sub), ci, gate) if lo >= 1 else None
    if op is c.BRANCH:
        sets = [_seq(list(alt), ci, gate) for alt in av[1]]
        if any(s is None for s in sets):
            return None
        lits: set[str] = set()
        any_ci = False
        for s in sets:
            assert s is not None
            any_ci |= s.ci
        for s in sets:
            assert s is not None
            lits |= {x.lower() for x in s.literals} if any_ci else set(s.literals)
        return Anchors(frozenset(lits), any_ci)
    return None


@dataclass
class Prefilter:
    """One vectorised test for "can any recogniser claim this line?".

    ``literals`` are compared case-sensitively, ``ci_literals`` case-insensitively, and
    ``regexes`` (Rust-regex syntax) are searched as they are: for anchors a literal cannot say
    (e.g. NCCL's error-return trace ``file.cc:123 -> 2`` at the end of an INFO line)."""

    literals: set[str] = field(default_factory=set)
    ci_literals: set[str] = field(default_factory=set)
    regexes: set[str] = field(default_factory=set)
    #: relaxed pattern (``parsers.relax``) -> the literal anchors of its signature (or of a
    #: recogniser's ``CHECKED`` entry): a line that holds no other anchor passes only if it
    #: matches one of the relaxed patterns (``CompiledPrefilter.confirm``)
    checked: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def add(self, anchors: Anchors) -> None:
        (self.ci_literals if anchors.ci else self.literals).update(anchors.literals)

    def update(self, other: Prefilter) -> None:
        self.literals |= other.literals
        self.ci_literals |= other.ci_literals
        self.regexes |= other.regexes
        self.checked.update(other.checked)

    def flat(self) -> Prefilter:
        """The same test by literals alone: the checked patterns' anchors as literals."""
        lits = set(self.literals)
        for anchors in self.checked.values():
            lits.update(anchors)
        return Prefilter(lits, set(self.ci_literals), set(self.regexes))

    def pattern(self) -> str:
        """The combined Rust-regex alternation (longest literals first)."""
        parts = [re.escape(x) for x in sorted(self.literals, key=lambda s: (-len(s), s))]
        if self.ci_literals:
            parts.append("(?i:" + "|".join(
                re.escape(x) for x in sorted(self.ci_literals, key=lambda s: (-len(s), s)))
                + ")")
        parts += [f"(?:{r})" for r in sorted(self.regexes)]
        return "|".join(parts) if parts else "$^"

    def compiled(self) -> CompiledPrefilter:
        return CompiledPrefilter(self)


#: below this many lines a chunk is tested with the literals' alternation and the regexes'
#: apart, not the one big alternation of both: compiling that costs ~7 ms a call, whatever
#: the chunk's size (a fleet's many small syslog files), while the literals alone build in
#: ~0.15 ms; above it the compiled alternation is ~2x faster per line
SPLIT_BELOW = 5_000
#: relaxed patterns per alternation in ``CompiledPrefilter.confirm``: the regex crate runs an
#: alternation of a few dozen at ~0.7 us a line, but all 156 of the table (2026-12-04) at
#: 140-260 us (past its lazy DFA's budget: 2.9 s for 20,000 torchtitan lines, 13 ms as
#: alternations of 40 or 64, 24 ms of 16; ``benchmarks/HISTORY.md``)
CONFIRM_GROUP = 40
#: a gate's shortest literal, at least (``CompiledPrefilter.exprs``): ``-`` or ``>`` would
#: let most lines through
GATE_MIN = 3


class CompiledPrefilter:
    """The prefilter of a chunk; ``mask`` marks its candidate lines. Two equivalent forms:
    one Rust-regex alternation (``pattern``), or literals, case-insensitive literals and
    regexes tested apart (the ci literals by Aho-Corasick only when they are ASCII)."""

    def __init__(self, pf: Prefilter) -> None:
        #: with checked patterns: the test without their anchors (``base``) and their anchors
        #: alone (``checked``); a line only ``checked`` passes must also match one of them
        #: (``confirm``)
        self.base: CompiledPrefilter | None = None
        self.checked: CompiledPrefilter | None = None
        if pf.checked:
            self.base = Prefilter(pf.literals, pf.ci_literals, pf.regexes).compiled()
            self.checked = Prefilter({a for v in pf.checked.values() for a in v}).compiled()
        checked = sorted(pf.checked)
        #: the relaxed patterns as a few alternations, not one (``CONFIRM_GROUP``)
        self.confirm_patterns = ["|".join(f"(?:{r})" for r in checked[i: i + CONFIRM_GROUP])
                                 for i in range(0, len(checked), CONFIRM_GROUP)]
        pf = pf.flat()
        self.source = pf
        self.pattern = pf.pattern()
        self.py = re.compile(self.pattern)
        self.literals = sorted(pf.literals)
        self.literal_pattern = "|".join(
            re.escape(x) for x in sorted(pf.literals, key=lambda v: (-len(v), v)))
        ci = sorted(pf.ci_literals)
        self.ci_ascii = ci if all(x.isascii() for x in ci) else []
        rest = [f"(?:{r})" for r in sorted(pf.regexes)]
        if ci and not self.ci_ascii:
            rest.append("(?i:" + "|".join(re.escape(x) for x in ci) + ")")
        self.regex = "|".join(rest)
        # a large chunk's regexes: those with a selective gate together, searched only in
        # the lines with one of its literals; the others each alone
        gated: list[str] = []
        gates: set[str] = set()
        self.alone: list[str] = []
        for r in sorted(pf.regexes):
            g = gate_literals(r)
            if g is not None and not g.ci and g.quality[0] >= GATE_MIN:
                gated.append(r)
                gates |= g.literals
            else:
                self.alone.append(r)
        self.gate = "|".join(re.escape(x) for x in sorted(gates, key=lambda v: (-len(v), v)))
        self.gated = "|".join(f"(?:{r})" for r in gated)
        if ci and not self.ci_ascii:
            self.alone.append("(?i:" + "|".join(re.escape(x) for x in ci) + ")")

    def expr(self, col: pl.Expr, n: int) -> pl.Expr:
        """The candidate test as a polars expression for a chunk of ``n`` lines."""
        parts = self.exprs(col, n)
        e = parts[0]
        for x in parts[1:]:
            e = e | x
        return e

    def exprs(self, col: pl.Expr, n: int) -> list[pl.Expr]:
        """The test as expressions whose union it is, for a chunk of ``n`` lines. On a large
        chunk: the literals as one alternation (the regex crate's literal searcher: ~14 ms
        per 8 MiB of syslog; any regex branch in it costs the literals that fast path), and
        the regexes apart. An alternation of regexes is searched at ~1.5 ns a byte whatever
        its branches (~13 ms), and so is a lone regex that begins with a class (the NCCL
        ``NET/IB`` anchor's left context: ~12 ms), while a regex with a literal the engine can
        look for first takes ~1.5 ms: so the regexes whose every match holds one of a few
        selective literals (``gate_literals``) are searched together only in the lines with
        one of those literals (polars evaluates ``then`` on those rows only), the others each
        alone. Syslog: ~13 -> ~6 ms per 8 MiB."""
        if n >= SPLIT_BELOW:
            if not self.literals or not (self.regex or self.ci_ascii):
                return [col.str.contains(self.pattern).fill_null(False)]
            out = [col.str.contains(self.literal_pattern).fill_null(False)]
            if self.ci_ascii:
                out.append(col.str.contains(
                    "(?i:" + "|".join(re.escape(x) for x in self.ci_ascii) + ")").fill_null(False))
            if self.gated:
                out.append(pl.when(col.str.contains(self.gate))
                           .then(col.str.contains(self.gated)).otherwise(False).fill_null(False))
            out += [col.str.contains(r).fill_null(False) for r in self.alone]
            return out
        # the literals as their own alternation: the regex crate builds its literal searcher
        # for it in ~0.15 ms, where contains_any took ~0.5 ms (polars 2.1: the list of
        # literals converted and its automaton built each call) -- most of a small file's
        # plan; the same lines either way
        e = col.str.contains(self.literal_pattern) if self.literals else pl.lit(False)
        if self.ci_ascii:
            e = e | col.str.contains_any(self.ci_ascii, ascii_case_insensitive=True)
        if self.regex:
            e = e | col.str.contains(self.regex)
        return [e.fill_null(False)]

    def mask(self, lines: pl.Series) -> pl.Series:
        return pl.Series(lines.name, self.mask_np(lines))

    def mask_np(self, lines: pl.Series) -> Any:
        import numpy as np

        parts = self.split()
        if parts is None:
            return np.asarray(pl.DataFrame({"l": lines}).select(
                self.expr(pl.col("l"), len(lines)).alias("m")).to_series().to_numpy(), bool)
        col, n = pl.col("l"), len(lines)
        got = pl.DataFrame({"l": lines}).select(parts[0].expr(col, n).alias("b"),
                                                parts[1].expr(col, n).alias("c"))
        return self.confirm(lines, np.asarray(got.get_column("b").to_numpy(), bool),
                            np.asarray(got.get_column("c").to_numpy(), bool))

    def split(self) -> tuple[CompiledPrefilter, CompiledPrefilter] | None:
        """``(base, checked)`` when candidates are confirmed (``confirm``), else None (the
        test is the anchors alone). ``TORMORTEM_CONFIRM=0`` turns the confirmation off (the
        tests compare both)."""
        if self.base is None or self.checked is None \
                or os.environ.get("TORMORTEM_CONFIRM", "1") == "0":
            return None
        return self.base, self.checked

    def confirm(self, lines: pl.Series, base: Any, checked: Any) -> Any:
        """The candidates from ``base`` and ``checked`` (the masks of ``split``'s tests,
        numpy bool arrays; ``base`` is changed in place and returned): a line only
        ``checked`` passes is one if it matches a checked pattern, or its message may be
        rewritten text (``relax.TRANSFORMED``: such a line keeps its anchors' say)."""
        import numpy as np

        idx = np.flatnonzero(checked & ~base)
        if idx.size:
            sub = lines.gather(idx)
            # the relaxed patterns cannot tell digits apart (``parsers.relax``), nor can
            # TRANSFORMED: on a chunk of repeated shapes they run once per digit-zeroed shape
            # (a file of 'step N | epoch E | loss ...' lines that hold a checked anchor: the
            # union of ~150 relaxed patterns took 1.7 s per 8 MiB chunk line by line)
            u = dedupe.unique_lines(sub)
            col = pl.col("l")
            test = col.str.contains(TRANSFORMED)
            for pattern in self.confirm_patterns:
                test = test | col.str.contains(pattern)
            keep = np.asarray(pl.DataFrame({"l": sub if u is None else u.keys}).select(
                test.fill_null(True).alias("k")).to_series().to_numpy(), dtype=bool)
            base[idx[keep if u is None else u.spread(keep)]] = True
        return base

    @functools.cached_property
    def key_parts(self) -> KeyParts | None:
        """The test on digit-zeroed keys (``parsers.dedupe``), or None if its regexes tell
        digits apart: the digit-free literals and the regexes exactly; the literals with a
        digit relaxed (each digit as ``0``), to be confirmed on the line (``confirm``)."""
        pf = self.source
        if not all(dedupe.digit_blind(r) for r in pf.regexes):
            return None
        lit = {x for x in pf.literals if not set(x) & _DIGITS}
        ci = {x for x in pf.ci_literals if not set(x) & _DIGITS}
        d_lit, d_ci = pf.literals - lit, pf.ci_literals - ci
        exact = Prefilter(lit, ci, set(pf.regexes)).compiled()
        if not d_lit and not d_ci:
            return KeyParts(exact, None, None)
        relaxed = Prefilter({dedupe.zero_digits(x) for x in d_lit},
                            {dedupe.zero_digits(x) for x in d_ci}).compiled()
        return KeyParts(exact, relaxed, Prefilter(d_lit, d_ci).compiled())

    def search(self, text: str) -> bool:
        """The same test on one line (Python ``re``; the patterns use the common syntax)."""
        return self.py.search(text) is not None


_DIGITS = frozenset("0123456789")


@dataclass
class KeyParts:
    """A ``CompiledPrefilter`` as tests on digit-zeroed keys (``CompiledPrefilter.key_parts``):
    a line is a candidate if ``exact`` matches its key, or ``relaxed`` matches its key and
    ``confirm`` the line itself."""

    exact: CompiledPrefilter
    relaxed: CompiledPrefilter | None
    confirm: CompiledPrefilter | None
