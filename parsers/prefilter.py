"""Pay per line only for what the line can carry: the chunk-level path of the line parsers.

A chunk of lines is tested at once (polars, Rust regex) against the anchors of every
recogniser of the message layer and every data signature (``parsers.anchors``): lines with
none of them are *not candidates*. A candidate line, and every line while a recogniser holds an
open multi-line block, goes through the dialect's per-line Python path exactly as before. The
others never enter Python: the dialect says, with a vectorised rule that mirrors its per-line
rule for such lines, whether they are NOISE (a well-formed line of that file with no signal) or
UNPARSED. Line accounting stays exact; samples of unparsed lines are the first ones in file
order, as before.

What the per-line path learns from lines it no longer sees is supplied lazily: before a
candidate line, the dialect's ``set_context`` reads the nearest earlier *context* line (one
with a timestamp or an envelope) that Python has not seen, and year-less stamps get the year
that following every line in order would have given (``YearInference.vector``).

``TORMORTEM_PREFILTER=0`` turns the prefilter off (every line through Python): the tests
compare both paths on every sample and corpus file, and they must agree exactly.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np
import polars as pl

from parsers import dedupe
from parsers.anchors import SPLIT_BELOW, CompiledPrefilter, Prefilter


def enabled() -> bool:
    return os.environ.get("TORMORTEM_PREFILTER", "1") != "0"


@dataclass
class ChunkPlan:
    """What the vectorised pass decided for one chunk (arrays of the chunk's length)."""

    candidate: np.ndarray  #: bool: through Python
    noise: np.ndarray  #: bool: if not a candidate, NOISE (else UNPARSED)
    context: np.ndarray | None = None  #: bool: lines that carry context (stamp, envelope)
    years: np.ndarray | None = None  #: int: year of each line for year-less stamps (0: none)
    pins: dict[str, np.ndarray] | None = None  #: other per-line state the dialect pins
    #: bool: while the dialect's ``open_wake`` says so, only these lines (and candidates) can
    #: continue or end its open block; the others are taken by the plan as when it is closed
    wake: np.ndarray | None = None
    #: int8: the status of a line a vectorised fast path read (its rows built for the chunk,
    #: parsers/fastrows.py), -1 elsewhere; such a line is no candidate, but still goes through
    #: ``parse_line`` while a block is open (its fast row is then dropped)
    preset: np.ndarray | None = None
    #: the chunk's distinct digit-zeroed shapes, if its masks were evaluated on them
    #: (``parsers.dedupe``): the unparsed lines are then grouped by them (``Forms.add_shapes``)
    shapes: dedupe.Unique | None = None


def spread(values: np.ndarray, at: np.ndarray, n: int, fill: bool) -> np.ndarray:
    """A chunk's mask (``n`` lines) from the values of its lines ``at``; ``fill`` elsewhere
    (a plan made for the lines a fast path left)."""
    out = np.full(n, fill, bool)
    out[at] = values
    return out


def extra_prefilter(regexes: tuple[str, ...]) -> Prefilter:
    pf = Prefilter()
    pf.regexes.update(regexes)
    return pf


_MONTH_NO = {m: i for i, m in enumerate(
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)}


def mask(lines: pl.Series, pattern: str) -> np.ndarray:
    """Boolean numpy mask of ``lines`` matching the Rust-regex ``pattern``."""
    return np.asarray(lines.str.contains(pattern).fill_null(False).to_numpy(), dtype=bool)


Pattern = str | CompiledPrefilter


#: ``masks``' default: decide whether to evaluate on the chunk's distinct shapes
AUTO = "auto"


def masks(lines: pl.Series, patterns: dict[str, Pattern],
          month_patterns: dict[str, str] | None = None,
          unique: dedupe.Unique | str | None = AUTO) -> dict[str, np.ndarray]:
    """Several ``mask``s (a pattern, or a prefilter), and ``months`` for ``month_patterns``,
    in one polars query per kind of input (its expressions evaluated in parallel; one query
    per chunk instead of one per pattern is most of the saving on small files). A chunk of
    repeated line shapes is evaluated once per shape where the pattern allows it
    (``parsers.dedupe``; ``unique``: that decision, if already made); the answers are the
    same."""
    tests: dict[str, Pattern] = {}
    split: dict[str, CompiledPrefilter] = {}
    for k, p in patterns.items():
        parts = p.split() if isinstance(p, CompiledPrefilter) else None
        if parts is None:
            tests[k] = p
        else:  # a prefilter whose checked anchors' lines are confirmed: both halves
            assert isinstance(p, CompiledPrefilter)
            split[k] = p
            tests[k], tests[k + "\0checked"] = parts
    out = _masks(lines, tests, month_patterns or {}, unique)
    for k, p in split.items():
        out[k] = p.confirm(lines, out[k], out.pop(k + "\0checked"))
    return out


def _masks(lines: pl.Series, patterns: dict[str, Pattern], months_: dict[str, str],
           unique: dedupe.Unique | str | None) -> dict[str, np.ndarray]:
    u = dedupe.unique_lines(lines) if isinstance(unique, str) else unique
    if u is None:
        return _evaluate(lines, patterns, months_)
    on_keys: dict[str, Pattern] = {}
    on_lines: dict[str, Pattern] = {}
    confirm: dict[str, CompiledPrefilter] = {}
    for k, p in patterns.items():
        if isinstance(p, CompiledPrefilter):
            parts = p.key_parts
            if parts is None:
                on_lines[k] = p
                continue
            on_keys[k] = parts.exact
            if parts.relaxed is not None and parts.confirm is not None:
                on_keys[k + "\0relaxed"] = parts.relaxed
                confirm[k] = parts.confirm
        elif dedupe.digit_blind(p):
            on_keys[k] = p
        else:
            on_lines[k] = p
    key_months = {k: p for k, p in months_.items() if dedupe.digit_blind(p)}
    out = _evaluate(lines, on_lines, {k: p for k, p in months_.items() if k not in key_months})
    got = _evaluate(u.keys, on_keys, key_months, raw_months=True)
    for k, v in got.items():
        out[k] = u.spread(v)
    for k, check in confirm.items():
        maybe = np.flatnonzero(out.pop(k + "\0relaxed") & ~out[k])
        if maybe.size:
            out[k][maybe] = _evaluate(lines.gather(maybe), {"m": check}, {})["m"]
    for k, p in key_months.items():
        out[k] = _extract_rest(lines, p, out[k])
    return out


@functools.lru_cache(maxsize=256)
def _query(patterns: tuple[tuple[str, Pattern], ...], month_patterns: tuple[tuple[str, str], ...],
           n: int) -> tuple[list[pl.Expr], dict[str, list[str]]]:
    """``_evaluate``'s expressions and the columns of each pattern, for a chunk of ``n``
    lines (``n`` only says which form a prefilter takes: callers pass 0 or SPLIT_BELOW).
    Built once: on a fleet's 2,048 small node logs building them was ~0.3 ms per file."""
    col = pl.col("l")
    exprs: list[pl.Expr] = []
    cols: dict[str, list[str]] = {}
    for k, p in patterns:
        parts = (p.exprs(col, n) if isinstance(p, CompiledPrefilter)
                 else [col.str.contains(p).fill_null(False)])
        cols[k] = [f"{k}\0{i}" for i in range(len(parts))]
        exprs += [e.alias(c) for e, c in zip(parts, cols[k], strict=True)]
    exprs += [_month_expr(col, p).alias(k) for k, p in month_patterns]
    return exprs, cols


def _evaluate(lines: pl.Series, patterns: dict[str, Pattern], month_patterns: dict[str, str],
              raw_months: bool = False) -> dict[str, np.ndarray]:
    if not patterns and not month_patterns:
        return {}
    exprs, cols = _query(tuple(patterns.items()), tuple(month_patterns.items()),
                         SPLIT_BELOW if len(lines) >= SPLIT_BELOW else 0)
    df = pl.DataFrame({"l": lines}).select(exprs)
    out = {}
    for k, names in cols.items():
        got = np.asarray(df.get_column(names[0]).to_numpy(), dtype=bool)
        for c in names[1:]:
            got = got | np.asarray(df.get_column(c).to_numpy(), dtype=bool)
        out[k] = got
    for k, p in month_patterns.items():
        got = np.array(df.get_column(k).to_numpy(), np.int64)
        out[k] = got if raw_months else _extract_rest(lines, p, got)
    return out


def blank(lines: pl.Series) -> np.ndarray:
    return mask(lines, r"^\s*$")




def months(lines: pl.Series, pattern: str) -> np.ndarray:
    """Month number (1-12) from group 1 of ``pattern`` per line, 0 where it does not match.

    ``pattern`` is anchored (``^``) and what may stand before its month group (white space,
    ``<PRI>``, ``> ``, ``[``) never begins with a letter, so a matching line that begins with a
    month name has that name as its group: the month is then read from the line's first three
    characters, and the regex extraction (captures cost ~5x a match) runs only on the few
    matching lines that begin otherwise. ``test_prefilter`` compares it with the extraction."""
    got = pl.DataFrame({"l": lines}).select(_month_expr(pl.col("l"), pattern)).to_series()
    return _extract_rest(lines, pattern, np.array(got.to_numpy(), np.int64))


def _month_expr(col: pl.Expr, pattern: str) -> pl.Expr:
    """Month by the first three characters where ``pattern`` matches, 0 where it does not,
    -1 where it matches but the line begins otherwise (``_extract_rest`` reads those)."""
    head = col.str.slice(0, 3).replace_strict(_MONTH_NO, default=-1, return_dtype=pl.Int64)
    return pl.when(col.str.contains(pattern).fill_null(False)).then(head).otherwise(0)


def _extract_rest(lines: pl.Series, pattern: str, got: np.ndarray) -> np.ndarray:
    rest = np.flatnonzero(got < 0)
    if rest.size:
        got[rest] = np.asarray(lines.gather(rest).str.extract(pattern, 1).replace_strict(
            _MONTH_NO, default=0, return_dtype=pl.Int64).fill_null(0).to_numpy(), np.int64)
    return got


#: a line that may carry a stamp some prefix parser reads (a superset: set_context decides)
STAMPED = (r"\d{4}-\d\d-\d\d[T _]\d\d:\d\d:\d\d|\d\d:\d\d:\d\d|\[\s*\d+\.\d+\]"
           r"|__REALTIME_TIMESTAMP|^\s*\d+,\d+,\d+,")
#: year-less stamps at the start of a line (syslog / journal short, glog, Slurm short)
SHORT_MONTH = (r"^\s*(?:> ?)*(?:<\d{1,3}>)?\[?(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
               r" (?: \d|\d\d?) \d\d:\d\d:\d\d")
GLOG_MONTH = r"^\s*[IWEF](\d\d)\d\d \d\d:\d\d:\d\d\.\d+\s+\d+ [^\s\]]+:\d+\] "


def glog_months(lines: pl.Series, ok: np.ndarray | None = None) -> np.ndarray:
    """Month of each glog-stamped line (``GLOG_MONTH``), 0 elsewhere; ``ok``: the lines'
    ``GLOG_MONTH`` mask if already computed. A matching line that does not begin with white
    space has its month at characters 1-2 (read by slicing); the others are extracted."""
    ok = mask(lines, GLOG_MONTH) if ok is None else ok
    m = np.zeros(len(lines), np.int64)
    idx = np.flatnonzero(ok)
    if not idx.size:
        return m
    sub = lines.gather(idx)
    got = np.array(sub.str.slice(1, 2).cast(pl.Int64, strict=False).fill_null(0).to_numpy(),
                   dtype=np.int64)
    rest = np.flatnonzero(np.asarray(sub.str.contains(r"^\s").to_numpy(), bool))
    if rest.size:
        got[rest] = np.asarray(sub.gather(rest).str.extract(GLOG_MONTH, 1).cast(
            pl.Int64, strict=False).fill_null(0).to_numpy(), np.int64)
    m[idx] = got
    m[(m < 1) | (m > 12)] = 0
    return m
