"""The first bytes of every line of a chunk as a numpy matrix, for tests anchored at the start
of a line that numpy answers faster than a regex per line.

A regex per line costs ~20 ns of polars' per-row overhead however soon it fails (~1.3 ms of
CPU per 8 MiB chunk of syslog for ``^\\s*\\[``); a comparison on a column of a byte matrix costs
almost nothing. ``heads`` reads the lines' Arrow string views without copying them (a view
holds a line of up to 12 bytes inline, else its buffer and offset) and gathers ``width`` bytes
per line, zero past its end. A test that numpy answers must mean the same as the regex it
replaces: Rust's ``\\s`` and ``\\d`` are Unicode classes, so a caller answers only for the
lines ``plain`` marks (their first ``width`` bytes ASCII, no white space first) and asks the
regex for the others (``kernel_plan.prefix_masks``; ``test_line_heads`` compares both).
"""

from __future__ import annotations

import numpy as np
import polars as pl

#: ASCII white space as Rust's ``\s`` has it (Unicode White_Space within ASCII)
_WS = np.zeros(256, bool)
_WS[[9, 10, 11, 12, 13, 32]] = True


def heads(lines: pl.Series, width: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """(``width`` bytes per line, zero past its end, as an (n, width) uint8 matrix; the
    lines' lengths in bytes). ``width`` is 8 or 16."""
    arr = lines.to_arrow(compat_level=pl.CompatLevel.newest())
    n = len(arr)
    bufs = arr.buffers()
    views = np.frombuffer(bufs[1], np.int32).reshape(-1, 4)[arr.offset: arr.offset + n]
    lens = views[:, 0].astype(np.int64)
    out = np.zeros((n, width), np.uint8)
    inline = lens <= 12
    k = min(width, 12)
    out[inline, :k] = views.view(np.uint8)[inline, 4: 4 + k]
    words = out.view("<u8")  # (n, width // 8)
    for b, rows in _by_buffer(views, inline):
        data = np.frombuffer(bufs[2 + b], np.uint8)
        starts = views[rows, 3].astype(np.int64)
        # each line's first bytes as unaligned little-endian uint64 words read at its start
        # (a strided view of the buffer, no copy: 2 ms where rows of 16 bytes took 3.3); a
        # line too near the buffer's end is taken alone
        near = starts > data.size - width
        if data.size >= width:
            at = np.ndarray((data.size - 7,), "<u8", data, strides=(1,))
            for j in range(width // 8):
                words[rows[~near], j] = at[starts[~near] + 8 * j]
        for r, st in zip(rows[near].tolist(), starts[near].tolist(), strict=True):
            tail = data[st: st + width]
            out[r, : tail.size] = tail
    short = np.flatnonzero(lens < width)
    if short.size:
        out[short] *= np.arange(width)[None, :] < lens[short][:, None]
    return out, lens


def _by_buffer(views: np.ndarray, inline: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """The lines not held inline, grouped by the data buffer they point into: (buffer, rows).
    A chunk's lines point into one buffer; the lines of many small files prepared together
    (``parsers.batch``) into one each: grouped by one stable sort (a pass over every line per
    buffer took 300 ms for 256 files' 378,000 lines)."""
    rows = np.flatnonzero(~inline)
    buf = views[rows, 2]
    if not buf.size:
        return []
    if (buf == buf[0]).all():
        return [(int(buf[0]), rows)]
    order = np.argsort(buf, kind="stable")
    cuts = np.flatnonzero(np.diff(buf[order])) + 1
    firsts = buf[order[np.r_[0, cuts]]].tolist()
    return list(zip(firsts, np.split(rows[order], cuts), strict=True))


def first_bytes(lines: pl.Series) -> np.ndarray:
    """Each line's first byte (0 for an empty line), from the prefix every Arrow string view
    holds inline: no buffer is read (~20 us a chunk, where a regex call costs ~0.5 ms on a
    small file, most of it compiling the pattern)."""
    arr = lines.to_arrow(compat_level=pl.CompatLevel.newest())
    n = len(arr)
    views = np.frombuffer(arr.buffers()[1], np.uint8).reshape(-1, 16)[arr.offset: arr.offset + n]
    lens = views[:, :4].copy().view("<i4")[:, 0]
    return np.where(lens > 0, views[:, 4], 0).astype(np.uint8)


def plain(m: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Lines whose head ``m`` numpy can judge as the regex would: not beginning with white
    space, and ASCII in their first ``m.shape[1]`` bytes (or all of them)."""
    words = m.view(np.uint64)
    high = (np.bitwise_or.reduce(words, axis=1) & np.uint64(0x8080808080808080)) != 0
    ok: np.ndarray = ~_WS[m[:, 0]] & ~high & (lens > 0)
    return ok


def upper(c: np.ndarray) -> np.ndarray:
    return (c >= 65) & (c <= 90)


def lower(c: np.ndarray) -> np.ndarray:
    return (c >= 97) & (c <= 122)


def digit(c: np.ndarray) -> np.ndarray:
    return (c >= 48) & (c <= 57)
