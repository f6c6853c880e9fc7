"""Progress lines that a data signature recognises, read per chunk (``sig_chunk``), in job
logs (``parsers.joblog``) and text of no known layout (``parsers.text``).

torchtitan's ``step: 1200  loss: 2.7145 ...``, nanoGPT's ``iter 1200: loss 2.3540, time
400.59ms``, fairseq's, MaxText's and the other ``kind = "iteration"`` signatures of
``parsers/signatures/progress.toml`` are most of their jobs' output. Through ``parse_line``
each costs 20-25 us (prefix layer, the matchers, the fallback's peel, the message layer, the
row dict): 2-4 MB/s. Here they get the rows ``parse_line`` gives them, built per chunk.

How, exactly: a chunk of such lines has few digit-zeroed shapes (``parsers.dedupe``), and two
lines of one shape have the same bytes except for the digits, at the same offsets. For the
first line of each shape among the plan's candidates, Python does what ``parse_line`` would
(``split_prefix``, the fallback's ``peel``, the signatures in the table's order) and keeps the
shape only if every decision on the way holds for every line of the shape:

* no anchor of any other recogniser is in the line (the prefilter's contract: then none of
  them claims it; tested per line, vectorised);
* every signature tried, the winner included, is digit-blind (``dedupe.digit_blind``): its
  match, and where its groups are, is the same on every line of the shape; no signature has
  an anchor with a digit;
* the winner is an ``iteration`` signature of numeric fields only, whose groups hold plain
  numbers (digits, one dot) that numpy reads as Python's ``int``/``float`` do;
* the prefix layers read no host, uptime or stamp but the one ISO stamp in the prefix (its
  span found and checked against ``split_prefix``'s answer) and a rank, if any, from the one
  digit run that equals it; a shape with no stamp holds nothing stamp-like before the
  message (so no other line of it can have one).

The stamps are read per line (a date that does not exist, a local time skipped by DST: that
line goes through ``parse_line``). The lines are preset as ``joblog_preset.tqdm_chunk`` presets
bars: a line read per line anyway (a block open) keeps its per-line row, and unstamped rows
inherit the stamp the per-line path would give them (``joblog_preset._inherited``).
``tests/parsers/test_sigrows.py`` compares the rows with those of the per-line path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import polars as pl

from parsers import dedupe, prefilter, progress_batch
from parsers.anchors import CompiledPrefilter
from parsers.joblog_fast import _civil_days, _gather, _raw
from parsers.joblog_frame import NO_TS, naive_to_us
from parsers.joblog_preset import _inherited, with_preset
from parsers.prefix import Peeled, peel
from parsers.timeutil import YearInference, iso_match_to_us

#: the stamp ``split_prefix`` reads (parsers/joblog_prefix.py ``_ISO`` without what follows)
_STAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?"
                    r"(Z|[+-]\d\d(?::?\d\d)?)?")
_INT = re.compile(r"[0-9]{1,18}")
_FLOAT = re.compile(r"-?[0-9]{1,15}(?:\.[0-9]{1,15})?")
#: a chunk with more distinct candidate shapes than this is left to the per-line path. Each
#: new shape is analysed once per file (~25 us, as one line through ``parse_line``; cached):
#: 1,024 new shapes cost a chunk ~26 ms. It was 256, which the test's chunk of every
#: iteration signature's examples (279 shapes with 53 examples) outgrew
MAX_SHAPES = 1024


@dataclass(frozen=True)
class Shape:
    """Where one shape's fields are (byte offsets in the line)."""

    fmt: str
    nums: tuple[tuple[str, int, int, bool], ...]  #: field, offset, length, float
    scale: float
    rank: tuple[int, int] | None  #: the prefix's rank digits (offset, length)
    stamp: tuple[int, ...] | None  #: offsets: year, frac, frac length, zone (-1: none)
    zone_z: bool  #: the zone is ``Z``


@dataclass(frozen=True)
class SigRows:
    """A chunk's lines taken here and their fields (rank -1: none; ts NO_TS: inherited)."""

    lines: np.ndarray
    fmt: np.ndarray  #: index into ``formats``
    formats: tuple[str, ...]
    iteration: np.ndarray
    value: np.ndarray  #: nan where ``value_null``
    value_null: np.ndarray
    rank: np.ndarray
    ts: np.ndarray
    exact: np.ndarray  #: the stamp had a zone


@lru_cache(maxsize=8)
def _others(extra_key: tuple[str, ...]) -> CompiledPrefilter:
    from parsers.message import all_recognisers, prefilter_of
    from parsers.signature_table import SignatureMatcher

    return prefilter_of(all_recognisers(skip=(SignatureMatcher,)), claims=True).compiled()


def _byte(text: str, i: int) -> int:
    return len(text[:i].encode())


@dataclass(frozen=True)
class SigPrefix:
    """What a dialect's prefix layers read from a line (``sig_prefix``): the message the
    recognisers get (a suffix of the line), where it starts (characters), the line's own
    stamp and flag (None: it inherits one) and the rank a prefix names."""

    body: str
    at: int
    ts: int | None
    flag: str | None
    rank: int | None


def joblog_prefix(p: Any, line: str) -> SigPrefix | None:
    """What ``JobLogParser._one`` reads before the signatures get the line: ``split_prefix``,
    then the fallback's ``peel``, which must read nothing (None if it does)."""
    from parsers.joblog_prefix import Prefix, split_prefix

    pre = split_prefix(line, p.ctx.tz, Prefix())
    msg = pre.msg
    if not msg or msg.isspace() or not line.endswith(msg):
        return None
    q = peel(msg, p.ctx.tz, YearInference(p.ctx.mtime, p.ctx.year), Peeled())
    if q.ts is not None or q.uptime_s is not None or q.host or q.rank is not None \
            or not q.msg.strip() or not msg.endswith(q.msg):
        return None
    own = pre.ts is not None and pre.flag is not None
    return SigPrefix(q.msg, len(line) - len(q.msg), pre.ts if own else None,
                     pre.flag if own else None, pre.rank)


def text_prefix(p: Any, line: str) -> SigPrefix | None:
    """What ``TextParser`` reads before the recognisers get the line: ``peel``, which may
    read a stamp and a rank, not a host or an uptime (None if it does)."""
    if "\x1b" in line or not line.strip():
        return None
    q = peel(line, p.ctx.tz, YearInference(p.ctx.mtime, p.ctx.year), Peeled())
    if q.uptime_s is not None or q.host or not q.msg.strip() or not line.endswith(q.msg) \
            or (q.ts is not None and q.flag not in ("exact", "assumed_tz")):
        return None
    return SigPrefix(q.msg, len(line) - len(q.msg), q.ts, q.flag if q.ts is not None else None,
                     q.rank)


def analyse(p: Any, line: str) -> Shape | None:
    """The shape of ``line`` (see module docstring), or None if it is not taken. ``p`` (a
    JobLogParser or TextParser) says what its prefix layers read (``sig_prefix``)."""
    if "\r" in line or "%|" in line:
        return None
    pre = p.sig_prefix(line)
    if pre is None:
        return None
    body, at = pre.body, pre.at
    sm = _signatures(p)
    if sm is None or sm.c.automaton is None:
        return None
    zeroed = dedupe.zero_digits(body)
    if any(a in zeroed for a in _digit_anchors(sm.table)):
        return None  # another line of the shape may hold the anchor with other digits
    hit = None
    for s in sm._having_anchors(body):
        if not _blind(s.regex.pattern):
            return None
        m = s.regex.search(body)
        if m is not None:
            hit = (s, m)
            break
    if hit is None:
        return None
    s, m = hit
    if s.noise or s.kind != "iteration" or s.fields:
        return None
    nums = []
    for name, group in s.numbers:
        a = m.start(group)
        if a < 0:
            continue
        text = m.group(group)
        is_float = name == "value"
        if (_FLOAT if is_float else _INT).fullmatch(text) is None \
                or (name == "rank" and len(text) > 9):
            return None
        nums.append((name, _byte(line, at + a), len(text), is_float))
    head = line[:at + m.start()]
    stamp, zone_z, skip = None, False, (0, 0)
    if pre.ts is not None:
        found = list(_STAMP.finditer(line[:at]))
        if len(found) != 1:
            return None
        st = found[0]
        try:
            if iso_match_to_us(st, p.ctx.tz) != (pre.ts, pre.flag):
                return None
        except (ValueError, OverflowError):
            return None
        frac = (_byte(line, st.start(7)), len(st.group(7))) if st.group(7) else (-1, 0)
        zone = st.group(8)
        zone_z = zone == "Z"
        stamp = (_byte(line, st.start(1)), *frac,
                 _byte(line, st.start(8)) if zone and not zone_z else -1,
                 len(zone) if zone else 0)
        skip = st.span()
        if dedupe.STAMPISH.search(dedupe.zero_digits(head[:st.start()] + head[st.end():])):
            return None
    elif dedupe.STAMPISH.search(dedupe.zero_digits(head)):
        return None
    rank = None
    if pre.rank is not None and all(f[0] != "rank" for f in nums):
        runs = [r for r in re.finditer(r"\d+", line[:at])
                if int(r.group()) == pre.rank and not skip[0] <= r.start() < skip[1]]
        if len(runs) != 1:
            return None
        rank = (_byte(line, runs[0].start()), len(runs[0].group()))
    return Shape(s.format, tuple(nums), s.value_scale, rank, stamp, zone_z)


@lru_cache(maxsize=8)
def _digit_anchors(table: tuple[Any, ...]) -> tuple[str, ...]:
    """The signatures' anchors that hold a digit, digit-zeroed."""
    return tuple(dedupe.zero_digits(a) for s in table for a in s.anchors
                 if any(ch.isdigit() for ch in a))


@lru_cache(maxsize=64)
def _blind(pattern: str) -> bool:
    return dedupe.digit_blind(pattern)


def _signatures(p: Any) -> Any:
    from parsers.signature_table import SignatureMatcher

    for r in p.fallback.layer.recognisers:
        if isinstance(r, SignatureMatcher):
            return r
    return None


def sig_rows(p: Any, lines: pl.Series, plan: prefilter.ChunkPlan) -> SigRows | None:
    """The chunk's lines taken here (see module docstring), or None."""
    cand = np.flatnonzero(plan.candidate)
    if not cand.size:
        return None
    # the candidates' digit-zeroed shapes (if they repeat: a sample decides, dedupe.py)
    u = dedupe.unique_lines(lines.gather(cand), min_lines=64)
    if u is None:
        return None
    codes = u.codes
    kinds = np.unique(codes)
    if kinds.size > MAX_SHAPES:
        return None
    cache: dict[str, Shape | None] = p.__dict__.setdefault("_sig_shapes", {})
    if len(cache) > 4096:
        cache.clear()
    keys = u.keys
    firsts = cand[np.unique(codes, return_index=True)[1]]
    shapes: dict[int, Shape] = {}
    for code, i in zip(kinds.tolist(), firsts.tolist(), strict=True):
        key = str(keys[code])
        if key not in cache:
            cache[key] = analyse(p, str(lines[i]))
        got = cache[key]
        if got is not None:
            shapes[code] = got
    if not shapes:
        return None
    want = np.zeros(len(keys), bool)
    want[list(shapes)] = True
    chosen = want[codes]
    take, codes = cand[chosen], codes[chosen]
    from parsers.signature_table import EXTRA

    other = prefilter.masks(lines.gather(take), {"m": _others(tuple(s.id for s in EXTRA))},
                            unique=None)["m"]
    clean = ~np.asarray(other, bool)
    take, codes = take[clean], codes[clean]
    raw = _raw(lines)
    if raw is None or not take.size:
        return None
    return _read(raw, take, codes, shapes, p.ctx.tz)


def _digits(data: np.ndarray, at: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The numbers of ``width`` ASCII digits at ``at`` (int64) and whether they were."""
    w = _gather(data, at, width).astype(np.int64) - 48
    ok = np.asarray(((w >= 0) & (w <= 9)).all(axis=1), bool)
    out = np.zeros(len(at), np.int64)
    for j in range(width):
        out = out * 10 + w[:, j]
    return out, ok


def _number(data: np.ndarray, at: np.ndarray, width: int, is_float: bool) -> np.ndarray:
    """Python's ``float``/``int`` of the plain numbers of one shape (``_FLOAT``/``_INT``)."""
    w = _gather(data, at, width)
    neg = w[0, 0] == 45 if len(at) else False
    lo = 1 if neg else 0
    dot = np.flatnonzero(w[0] == 46) if len(at) else np.zeros(0, np.int64)
    cols = [j for j in range(lo, width) if not (dot.size and j == dot[0])]
    mant = np.zeros(len(at), np.int64)
    for j in cols:
        mant = mant * 10 + (w[:, j].astype(np.int64) - 48)
    if not is_float:
        return mant
    k = width - 1 - int(dot[0]) if dot.size else 0
    out: np.ndarray = mant / float(10 ** k)
    return -out if neg else out


def _stamps(data: np.ndarray, base: np.ndarray, sh: Shape, tz: Any) -> np.ndarray:
    """UTC epoch us of the shape's stamp on each line (NO_TS: not a time that exists)."""
    assert sh.stamp is not None
    y0, f0, fl, z0, zl = sh.stamp
    y, ok = _digits(data, base + y0, 4)
    parts = []
    for at in (5, 8, 11, 14, 17):
        v, good = _digits(data, base + y0 + at, 2)
        parts.append(v)
        ok &= good
    mo, d, h, mi, s = parts
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    dim = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])[np.clip(mo, 0, 12)]
    ok &= (y >= 1900) & (y <= 9000) & (mo >= 1) & (mo <= 12) & (d >= 1)
    ok &= (d <= dim + ((mo == 2) & leap)) & (h <= 23) & (mi <= 59) & (s <= 59)
    secs = np.where(ok, _civil_days(y, np.clip(mo, 1, 12), np.clip(d, 1, 31)) * 86400
                    + h * 3600 + mi * 60 + s, 0)
    frac = np.zeros(len(base), np.int64)
    if f0 >= 0:
        v, _ = _digits(data, base + f0, min(fl, 6))
        frac = v * 10 ** (6 - min(fl, 6))
    if sh.zone_z:
        us = secs * 1_000_000
    elif z0 >= 0:
        hh, _ = _digits(data, base + z0 + 1, 2)
        mm = np.zeros(len(base), np.int64)
        if zl > 3:
            mm, _ = _digits(data, base + z0 + zl - 2, 2)
        sign = np.where(data[base + z0] == 43, 1, -1)
        minutes = hh * 60 + mm
        ok &= minutes < 1440
        us = (secs - sign * minutes * 60) * 1_000_000
    else:
        us = naive_to_us(secs, tz)
        ok &= us != NO_TS
    return np.where(ok, us + frac, NO_TS)


def _read(raw: tuple[np.ndarray, np.ndarray, np.ndarray], take: np.ndarray,
          codes: np.ndarray, shapes: dict[int, Shape], tz: Any) -> SigRows | None:
    data, starts, _lens = raw
    n = take.size
    formats = tuple(sorted({s.fmt for s in shapes.values()}))
    fmt = np.zeros(n, np.int64)
    it = np.zeros(n, np.int64)
    value = np.full(n, np.nan)
    vnull = np.ones(n, bool)
    rank = np.full(n, -1, np.int64)
    ts = np.full(n, NO_TS, np.int64)
    exact = np.zeros(n, bool)
    good = np.ones(n, bool)
    for code, sh in shapes.items():
        at = np.flatnonzero(codes == code)
        if not at.size:
            continue
        base = starts[take[at]]
        fmt[at] = formats.index(sh.fmt)
        for name, off, width, is_float in sh.nums:
            v = _number(data, base + off, width, is_float)
            if name == "iteration":
                it[at] = v
            elif name == "rank":
                rank[at] = v
            else:
                value[at], vnull[at] = v * sh.scale, False
        if sh.rank is not None:
            rank[at] = _number(data, base + sh.rank[0], sh.rank[1], False)
        if sh.stamp is not None:
            got = _stamps(data, base, sh, tz)
            ts[at] = got
            good[at] &= got != NO_TS
            exact[at] = sh.zone_z or sh.stamp[3] >= 0
    if not good.any():
        return None
    k = np.flatnonzero(good)
    return SigRows(take[k], fmt[k], formats, it[k], value[k], vnull[k], rank[k], ts[k],
                   exact[k])


def sig_chunk(p: Any, lines: pl.Series, first: int, r: SigRows,
              plan: prefilter.ChunkPlan) -> None:
    """The chunk with the lines ``r`` preset (their rows a PROGRESS batch per format, after
    the chunk's per-line rows), the other candidates per line."""
    start = p._last_ts
    plan, marks, states = with_preset(p, lines, first, r.lines, plan)
    own = r.ts != NO_TS
    ts = r.ts.copy()
    if not own.all():  # what the others inherit (their own stamps need no walk back)
        ts[~own] = _inherited(p, lines, first, plan, r.lines[~own], marks, states, start)
    missing = ts == NO_TS
    flag = np.where(own, np.where(r.exact, 2, 1), np.where(missing, 4, 3))
    keep = marks.unread(r.lines + first)
    const = {**p.sig_constants(), "source": p.name, "file": p.ctx.path, "kind": "iteration"}
    for j, name in enumerate(r.formats):
        sel = keep & (r.fmt == j)
        if sel.any():
            p.events.add_batch(progress_batch.make(
                ts[sel], missing[sel], flag[sel], r.rank[sel], r.iteration[sel],
                r.value[sel], r.lines[sel] + first, {**const, "format": name},
                value_null=r.value_null[sel]))
