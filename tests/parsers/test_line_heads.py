"""parsers/line_heads.py and the kernel plan's prefix masks (parsers/kernel_plan.py
``prefix_masks``): numpy on the first bytes of a line must answer exactly as the regexes it
replaces, Rust's Unicode ``\\s`` and ``\\d`` included (a line numpy cannot judge goes to the
regex)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from parsers import kernel_plan, line_heads, prefilter
from parsers.reader import lines_series

FORMATS = Path(__file__).resolve().parents[1] / "data" / "formats"

#: pieces of the lines the masks look at, and what a regex would treat otherwise than ASCII:
#: NBSP and EM SPACE (Unicode \s), ARABIC-INDIC and FULLWIDTH digits (Unicode \d)
PIECES = ["", " ", "  ", "\t", "\u00a0", "\u2003", "<", "<1", "<12>", "<123>", "<1234>", ">",
          "[", "[  12.5]", "May", "Jan", "may", "MAY", "Mayo", " 1", " 01", "01", "1",
          "\u0661", "\uff11", " 00:00:00", "00:00:00", ":", ".", ".123", "0", " 0", "x",
          "kernel: ", "é", "Dec 31 23:59:59.5 ", "May  1 ", "May 01 "]


def _random_lines(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 7))) for _ in range(n)]


def _corpus_lines() -> list[str]:
    out = []
    for f in sorted(FORMATS.glob("*.jsonl")):
        for row in f.read_text(encoding="utf-8").splitlines():
            out += [ln["text"] for ln in json.loads(row).get("lines", [])]
    return [ln for ln in out if "\n" not in ln and "\r" not in ln]


def _series(lines: list[str]) -> pl.Series:
    return lines_series(("\n".join(lines) + "\n").encode())


def test_heads_are_the_first_bytes() -> None:
    lines = _random_lines(3000, 1) + _corpus_lines()[:2000]
    for s in (_series(lines),  # one buffer, lines from 0 to ~80 bytes
              pl.concat([_series(lines[:2500]), _series(lines[2500:])], rechunk=True)):
        m, lens = line_heads.heads(s, 16)
        want = [ln.encode()[:16].ljust(16, b"\0") for ln in lines]
        assert [bytes(r) for r in m] == want
        assert lens.tolist() == [len(ln.encode()) for ln in lines]


def _buffers_shuffled(s: pl.Series, rng: random.Random) -> pl.Series:
    """The same lines with their data buffers listed in another order (the views' buffer
    numbers no longer grow with the row: polars' own concat and gather keep them growing)."""
    arr = s.to_arrow(compat_level=pl.CompatLevel.newest())
    bufs = arr.buffers()
    perm = list(range(len(bufs) - 2))
    rng.shuffle(perm)  # data buffer b is listed at perm[b]
    views = np.frombuffer(bufs[1], np.int32).reshape(-1, 4).copy()
    far = views[:, 0] > 12
    views[far, 2] = np.asarray(perm)[views[far, 2]]
    data = [bufs[2 + perm.index(k)] for k in range(len(perm))]
    got = pl.from_arrow(pa.Array.from_buffers(pa.string_view(), len(arr),
                                              [bufs[0], pa.py_buffer(views), *data]))
    assert isinstance(got, pl.Series)
    return got


def test_heads_of_lines_in_many_buffers() -> None:
    """Many small files prepared together (``parsers.batch``): one data buffer per file, and
    (gathered) their lines interleaved."""
    lines = _random_lines(4000, 2) + _corpus_lines()[:3000]
    rng = random.Random(3)
    cuts = sorted(rng.sample(range(1, len(lines)), 40))
    parts = [_series(lines[a:b]) for a, b in zip([0, *cuts], [*cuts, len(lines)], strict=True)]
    order = list(range(len(lines)))
    rng.shuffle(order)
    for s, want in ((pl.concat(parts, rechunk=True), lines),
                    (pl.concat(parts).gather(order), [lines[i] for i in order]),
                    (_buffers_shuffled(pl.concat(parts, rechunk=True), rng), lines)):
        m, lens = line_heads.heads(s, 16)
        assert [bytes(r) for r in m] == [ln.encode()[:16].ljust(16, b"\0") for ln in want]
        assert lens.tolist() == [len(ln.encode()) for ln in want]


def test_prefix_masks_equal_the_regexes() -> None:
    corpus = _corpus_lines()
    assert len(corpus) > 5000
    for lines in (corpus, _random_lines(20000, 2)):
        s = _series(lines)
        fast = kernel_plan.prefix_masks(s)
        slow = prefilter.masks(s, kernel_plan.PREFIX, {}, unique=None)
        assert set(fast) == set(slow)
        for k in slow:
            bad = np.flatnonzero(fast[k] != slow[k])
            assert bad.size == 0, (k, [lines[i] for i in bad[:5]])
            # each mask is true somewhere and false somewhere: the comparison means something
            assert 0 < slow[k].sum() < len(lines), k
    # the lines numpy leaves to the regex are there too (Unicode space and digits)
    m, lens = line_heads.heads(_series(["\u00a0May  1 ", "May  \u0661 ", "May  1 "]), 16)
    assert line_heads.plain(m, lens).tolist() == [False, False, True]


def test_first_bytes() -> None:
    """Each line's first byte from its view's inline prefix, for lines kept inline (up to 12
    bytes) and out of line, empty lines, multi-byte characters, and a sliced Series."""
    rng = np.random.default_rng(3)
    pool = ["", "a", "node0025: [  1.5] x", "é" * 20, "\u00a0x", "[  12.000] " + "y" * 40,
            "May  1 00:00:00 h k: z", "z" * 12, "\t"]
    lines = lines_series(("\n".join(pool[i] for i in rng.integers(0, len(pool), 500))
                          + "\n").encode())
    for s in (lines, lines.slice(7, 300), pl.Series(pool)):
        want = [t.encode()[0] if t else 0 for t in s.to_list()]
        assert line_heads.first_bytes(s).tolist() == want
