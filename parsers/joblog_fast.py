"""Vectorised reading of Megatron-LM iteration lines (the bulk of a training job's output).

``megatron_iterations`` finds the lines ``P[' [%Y-%m-%d %H:%M:%S]'] iteration {:8d}/{:8d} |
... elapsed time per iteration (ms): {:.1f} | ...`` (P: a launcher prefix, see below) in a
chunk and returns their row indices, iteration, ms per iteration, Megatron's own stamp (as
naive epoch seconds) and where the message starts -- without a Python loop over the lines.

How: polars finds the two anchors (``" iteration "`` and ``"elapsed time per iteration (ms):
"``) with literal searches, then parses short fixed-width slices at those offsets (``{:8d}/``,
the value up to its space, the 21-byte stamp) in one ``select``. Messages are built as
string views into the chunk's buffer (the reader's Series is a string_view array over one
buffer, so each line's start offset is in its view): no text is copied.

Anything unusual -- anchors missing or in the wrong order, a number or stamp that does not
parse, a line not backed by the single data buffer -- is left to the per-line path, so this is
only ever a faster route to the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

ELAPSED_ANCHOR = "elapsed time per iteration (ms): "
ITER_ANCHOR = " iteration "


@dataclass
class FastIterations:
    rows: np.ndarray  #: row indices (int64) into the chunk
    iteration: np.ndarray  #: int64
    value: np.ndarray  #: float64, ms per iteration
    stamp_s: np.ndarray  #: int64 naive epoch seconds of Megatron's own stamp, or -1
    msg_start: np.ndarray  #: int64 byte offset in the line where the message begins
    prefix_end: np.ndarray  #: int64 byte offset where a launcher prefix ends (0: none)
    data: np.ndarray  #: the chunk's bytes (uint8), for building message views
    starts: np.ndarray  #: int64 start offset of each selected line in ``data``
    lens: np.ndarray  #: int64 byte length of each selected line


def _raw(lines: pl.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(data bytes, start offsets, lengths) of every line, or None if not one buffer."""
    arr = lines.to_arrow(compat_level=pl.CompatLevel.newest())
    if isinstance(arr, pa.ChunkedArray):
        if arr.num_chunks != 1:
            return None
        arr = arr.chunk(0)
    if arr.type != pa.string_view():
        return None
    bufs = arr.buffers()
    if len(bufs) != 3 or bufs[1] is None or bufs[2] is None:
        return None
    views = np.frombuffer(bufs[1], dtype=np.int32).reshape(-1, 4)
    views = views[arr.offset: arr.offset + len(arr)]
    lens = views[:, 0].astype(np.int64)
    long = lens > 12
    if long.any() and (views[long, 2] != 0).any():
        return None
    starts = views[:, 3].astype(np.int64)
    return np.frombuffer(bufs[2], dtype=np.uint8), starts, lens


def megatron_iterations(lines: pl.Series) -> FastIterations | None:
    """Iteration lines of a chunk that can be read vectorised (see module docstring)."""
    raw = _raw(lines)
    if raw is None:
        return None
    data, starts_all, lens_all = raw
    pos = pl.DataFrame({"l": lines}).select(
        v=pl.col("l").str.find(ELAPSED_ANCHOR, literal=True),
        i=pl.col("l").str.find(ITER_ANCHOR, literal=True),
    )
    pos_v = pos.get_column("v").fill_null(-1).cast(pl.Int64).to_numpy()
    pos_i = pos.get_column("i").fill_null(-1).cast(pl.Int64).to_numpy()
    cand = np.flatnonzero((pos_v >= 0) & (pos_i >= 0) & (pos_i < pos_v))
    if cand.size == 0:
        return None
    pos_v, pos_i = pos_v[cand], pos_i[cand]
    sub = pl.DataFrame({"l": lines.gather(cand), "v": pos_v, "i": pos_i})
    line, i, v = pl.col("l"), pl.col("i"), pl.col("v")
    it_field = line.str.slice(i + len(ITER_ANCHOR), 9)
    parsed = sub.select(
        it=pl.when(it_field.str.ends_with("/")).then(
            it_field.str.strip_chars(" /").cast(pl.Int64, strict=False)),
        val=line.str.slice(v + len(ELAPSED_ANCHOR), 14).str.extract(r"^([0-9]+(?:\.[0-9]+)?) ", 1)
        .cast(pl.Float64, strict=False),
        ts=pl.when(i >= 21).then(
            line.str.slice((i - 21).clip(0), 21)
            .str.strptime(pl.Datetime("us"), "[%Y-%m-%d %H:%M:%S]", strict=False)
            .dt.epoch("s")),
    )
    it = parsed.get_column("it")
    val = parsed.get_column("val")
    ok = (it.is_not_null() & val.is_not_null()).to_numpy()
    stamp = parsed.get_column("ts").fill_null(-1).to_numpy().astype(np.int64)
    keep = np.flatnonzero(ok)
    prefix_end = np.where(stamp >= 0, pos_i - 21, pos_i + 1)
    return FastIterations(
        rows=cand[keep], iteration=it.to_numpy()[keep].astype(np.int64),
        value=val.to_numpy()[keep].astype(np.float64), stamp_s=stamp[keep],
        msg_start=(pos_i + 1)[keep], prefix_end=prefix_end[keep], data=data,
        starts=starts_all[cand][keep], lens=lens_all[cand][keep],
    )


def view_series(data: np.ndarray, starts: np.ndarray, lens: np.ndarray, name: str) -> pl.Series:
    """A String Series of ``data[starts[i]: starts[i] + lens[i]]`` without copying the text."""
    n = len(starts)
    if n == 0:
        return pl.Series(name, [], dtype=pl.String)
    views = np.zeros((n, 16), np.uint8)
    v32 = views.view(np.int32)
    v32[:, 0] = lens
    last = max(len(data) - 1, 0)
    short = lens <= 12
    sidx = np.flatnonzero(short) if short.any() else np.zeros(0, np.int64)
    if sidx.size:
        inl = data[np.minimum(starts[sidx][:, None] + np.arange(12)[None, :], last)]
        inl *= (np.arange(12)[None, :] < lens[sidx][:, None]).astype(np.uint8)
        views[sidx, 4:16] = inl
    lidx = np.flatnonzero(~short) if sidx.size else np.arange(n)
    if lidx.size:
        st = starts[lidx]
        pre = (data[st].astype(np.uint32) | (data[st + 1].astype(np.uint32) << 8)
               | (data[st + 2].astype(np.uint32) << 16) | (data[st + 3].astype(np.uint32) << 24))
        v32[lidx, 1] = pre.view(np.int32)
        v32[lidx, 2] = 0
        v32[lidx, 3] = st
    arr = pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(views),
                                                      pa.py_buffer(data)])
    s = pl.from_arrow(arr)
    assert isinstance(s, pl.Series)
    return s.alias(name)
