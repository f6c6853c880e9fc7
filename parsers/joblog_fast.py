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

    def lines_between(self, lo: int, hi: int) -> FastIterations:
        """The rows of the chunk's lines ``lo`` to ``hi`` (exclusive), as the rows of a chunk
        of those lines alone (the lines are read one by one: a part of the chunk has the
        same rows): what ``megatron_iterations`` of one file of several read together
        gives (``parsers.batch``)."""
        a, b = np.searchsorted(self.rows, [lo, hi])
        return FastIterations(
            rows=self.rows[a:b] - lo, iteration=self.iteration[a:b], value=self.value[a:b],
            stamp_s=self.stamp_s[a:b], msg_start=self.msg_start[a:b],
            prefix_end=self.prefix_end[a:b], data=self.data, starts=self.starts[a:b],
            lens=self.lens[a:b])


#: the data buffers of a chunk, at most, copied into one (the lines of a run of small files
#: prepared together, ``parsers.batch``: one buffer per file)
MAX_BUFFERS = 1024


def _raw(lines: pl.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(data bytes, start offsets, lengths) of every line, or None if the lines are not one
    string_view array. Several data buffers (files concatenated) are copied into one."""
    arr = lines.to_arrow(compat_level=pl.CompatLevel.newest())
    if isinstance(arr, pa.ChunkedArray):
        if arr.num_chunks != 1:
            return None
        arr = arr.chunk(0)
    if arr.type != pa.string_view():
        return None
    bufs = arr.buffers()
    if len(bufs) < 3 or len(bufs) > 2 + MAX_BUFFERS or bufs[1] is None \
            or any(b is None for b in bufs[2:]):
        return None
    views = np.frombuffer(bufs[1], dtype=np.int32).reshape(-1, 4)
    views = views[arr.offset: arr.offset + len(arr)]
    lens = views[:, 0].astype(np.int64)
    long = lens > 12
    starts = views[:, 3].astype(np.int64)
    if len(bufs) == 3:
        if long.any() and (views[long, 2] != 0).any():
            return None
        return np.frombuffer(bufs[2], dtype=np.uint8), starts, lens
    which = views[long, 2]
    if which.size and (which.min() < 0 or which.max() >= len(bufs) - 2):
        return None
    sizes = np.array([b.size for b in bufs[2:]], np.int64)
    base = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    starts[long] += base[which]
    data = np.concatenate([np.frombuffer(b, dtype=np.uint8) for b in bufs[2:]])
    return data, starts, lens


def megatron_iterations(lines: pl.Series) -> FastIterations | None:
    """Iteration lines of a chunk that can be read vectorised (see module docstring)."""
    raw = _raw(lines)
    if raw is None:
        return None
    data, starts_all, lens_all = raw
    # a missing anchor reads as 0 (elapsed) or the largest u32 (iteration): no candidate.
    # The second search only where the first found something (~1.4 ms of 8 MiB saved on
    # every chunk of other lines; one query for both did not skip it)
    elapsed = lines.str.find(ELAPSED_ANCHOR, literal=True)
    if elapsed.null_count() == len(elapsed):
        return None
    pos_v = elapsed.fill_null(0).to_numpy()  # u32 without nulls: no copy
    pos_i = lines.str.find(ITER_ANCHOR, literal=True).fill_null(
        np.iinfo(np.uint32).max).to_numpy()
    cand = np.flatnonzero(pos_i < pos_v)
    if cand.size == 0:
        return None
    pos_v, pos_i = pos_v[cand].astype(np.int64), pos_i[cand].astype(np.int64)
    base = starts_all[cand]
    # one window per line over Megatron's stamp, " iteration " and the {:8d}/ field
    room = pos_i >= 21
    win = _gather(data, base + np.maximum(pos_i - 21, 0), 41)
    it = _ints(win[:, 32:41], 8, b"/")
    stamp = np.where(room, _stamp(win[:, :21]), -1)
    if not room.all():  # no room for a stamp before " iteration ": read the field alone
        short = np.flatnonzero(~room)
        it[short] = _ints(_gather(data, (base + pos_i)[short] + len(ITER_ANCHOR), 9), 8, b"/")
    val = _decimal(_gather(data, base + pos_v + len(ELAPSED_ANCHOR), 14))
    keep = np.flatnonzero((it >= 0) & np.isfinite(val))
    prefix_end = np.where(stamp >= 0, pos_i - 21, pos_i + 1)
    return FastIterations(
        rows=cand[keep], iteration=it[keep], value=val[keep], stamp_s=stamp[keep],
        msg_start=(pos_i + 1)[keep], prefix_end=prefix_end[keep], data=data,
        starts=base[keep], lens=lens_all[cand][keep],
    )


def _gather(data: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """(n, width) bytes starting at each offset (a window past the end reads as zeros).

    The buffer is viewed as overlapping ``width``-byte void items, so each row is one memcpy
    (indexing a sliding_window_view copies byte by byte, ~30% slower)."""
    if len(data) < width:
        return np.zeros((len(at), width), np.uint8)
    last = len(data) - width
    items = np.ndarray(shape=(last + 1,), dtype=np.dtype((np.void, width)), buffer=data,
                       strides=(1,))
    out: np.ndarray = items[np.minimum(at, last)].view(np.uint8).reshape(len(at), width)
    over = np.flatnonzero(at > last)
    for r in over:  # at most the chunk's last line or two
        k = int(at[r])
        row = np.zeros(width, np.uint8)
        tail = data[k:]
        row[: len(tail)] = tail
        out[r] = row
    return out


def _eight_digits(d: np.ndarray) -> np.ndarray:
    """(n, 8) digit values (0-9, most significant first) -> the 8-digit numbers (uint64), by
    SWAR: three multiply-shift steps on each row read as a little-endian uint64 (simdjson's
    parse_eight_digits_unrolled)."""
    v = np.ascontiguousarray(d, dtype=np.uint8).view("<u8")[:, 0]
    v = ((v & np.uint64(0x0F0F0F0F0F0F0F0F)) * np.uint64(2561)) >> np.uint64(8)
    v = ((v & np.uint64(0x00FF00FF00FF00FF)) * np.uint64(6553601)) >> np.uint64(16)
    out: np.ndarray = ((v & np.uint64(0x0000FFFF0000FFFF)) * np.uint64(42949672960001)) \
        >> np.uint64(32)
    return out


_ONES = np.uint64(0x0101010101010101)


def _all8(mask: np.ndarray) -> np.ndarray:
    """Row-wise all() of an (n, 8) bool array, as one uint64 compare per row (numpy's
    ``all(axis=1)`` over 8 columns is ~5x slower)."""
    out: np.ndarray = np.ascontiguousarray(mask).view("<u8")[:, 0] == _ONES
    return out


def _ints(b: np.ndarray, width: int, end: bytes) -> np.ndarray:
    """Right-aligned ``{:8d}`` fields followed by ``end`` (``width`` is 8): the value, or -1."""
    assert width == 8
    b8 = np.ascontiguousarray(b[:, :8])
    d = b8 - np.uint8(48)  # uint8: a space is 240, any other non-digit > 9 too
    dig = d <= 9
    ok = _all8(dig | (b8 == 32)) & dig[:, 7] & (b[:, 8] == end[0])
    # spaces then digits: the digit bytes (1 = 0xFF after the multiply) are the high ones, so
    # the complement is 2^(8k) - 1
    low = ~(dig.view("<u8")[:, 0] * np.uint64(255))
    ok &= (low & (low + np.uint64(1))) == 0
    val = _eight_digits(d * dig).astype(np.int64)
    return np.where(ok, val, -1)


_POW10 = 10 ** np.arange(9, dtype=np.uint64)


def _decimal(b: np.ndarray) -> np.ndarray:
    """``{:.Nf}`` followed by a space (Megatron's ms per iteration): the value, or nan.

    Megatron prints ``{:.1f}``: up to 8 integer digits, the dot, one digit, a space. Those are
    read 8 digits at a time (``_eight_digits``); anything else goes through
    ``_decimal_general``."""
    n, width = b.shape
    sp = np.argmax(b == 32, axis=1)  # first space (0 if none: not this shape)
    nint = sp - 2  # integer digits if the number is d...d.d
    flat = b.reshape(-1)
    at = np.arange(n) * width + np.maximum(sp, 2)
    tenth = flat[at - 1] - np.uint8(48)
    fast = (sp >= 3) & (sp <= 10) & (flat[at - 2] == 46) & (tenth <= 9)
    head = b[:, :8] - np.uint8(48)  # uint8: anything but a digit wraps to > 9
    inside = np.arange(8)[None, :] < nint[:, None]
    fast &= _all8((head <= 9) | ~inside)
    v = _eight_digits(np.where(inside & fast[:, None], head, np.uint8(0)))
    # v holds the integer digits left-aligned in 8 places: drop the 8 - nint trailing zeros
    mant = (v // _POW10[np.clip(8 - nint, 0, 8)]).astype(np.int64)
    out: np.ndarray = np.where(fast, (mant * 10 + tenth) / 10.0, np.nan)
    slow = np.flatnonzero(~fast)
    if slow.size:
        out[slow] = _decimal_general(b[slow])
    return out


def _decimal_general(b: np.ndarray) -> np.ndarray:
    """Any ``{:.Nf}`` followed by a space, byte by byte: the value, or nan."""
    n, width = b.shape
    val = np.zeros(n, np.int64)
    frac = np.zeros(n, np.int64)  # digits after the dot
    dots = np.zeros(n, np.int64)
    ndig = np.zeros(n, np.int64)
    live = np.ones(n, bool)  # still inside the number
    ok = np.zeros(n, bool)  # ended with a space
    for j in range(width):
        c = b[:, j]
        dig = live & (c >= 48) & (c <= 57)
        dot = live & (c == 46)
        stop = live & ~dig & ~dot
        ok |= stop & (c == 32)
        live &= ~stop
        val = np.where(dig, val * 10 + (c.astype(np.int64) - 48), val)
        frac += dig & (dots > 0)
        ndig += dig
        dots += dot
    good = ok & (dots <= 1) & (ndig > 0) & (b[:, 0] != 46)
    return np.where(good, val / np.power(10.0, frac), np.nan)


_STAMP_DIGITS = [1, 2, 3, 4, 6, 7, 9, 10, 12, 13, 15, 16, 18, 19]


def _stamp(b: np.ndarray) -> np.ndarray:
    """``[%Y-%m-%d %H:%M:%S]`` -> naive epoch seconds, or -1. The digits are read only on
    rows whose brackets and separators are in place (a line behind another program's
    stamp, kubectl's, has none: ~5 ms per 8 MiB chunk spared)."""
    out = np.full(len(b), -1, np.int64)
    frame = (b[:, 0] == 91) & (b[:, 20] == 93) & (b[:, 5] == 45) & (b[:, 8] == 45)
    frame &= (b[:, 11] == 32) & (b[:, 14] == 58) & (b[:, 17] == 58)
    at = np.flatnonzero(frame)
    if not at.size:
        return out
    b = b if at.size == len(b) else b[at]
    d = b[:, _STAMP_DIGITS] - np.uint8(48)  # uint8: anything but a digit wraps to > 9
    ok = d.max(axis=1) <= 9
    d = d.astype(np.int64)
    y = d[:, 0] * 1000 + d[:, 1] * 100 + d[:, 2] * 10 + d[:, 3]
    mo, day = d[:, 4] * 10 + d[:, 5], d[:, 6] * 10 + d[:, 7]
    h, mi, sec = d[:, 8] * 10 + d[:, 9], d[:, 10] * 10 + d[:, 11], d[:, 12] * 10 + d[:, 13]
    ok &= (mo >= 1) & (mo <= 12) & (day >= 1) & (day <= 31) & (h < 24) & (mi < 60) & (sec < 61)
    out[at] = np.where(ok, _civil_days(y, mo, day) * 86400 + h * 3600 + mi * 60 + sec, -1)
    return out


def _civil_days(y: np.ndarray, mo: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil)."""
    yy = y - (mo <= 2)
    era = yy // 400
    yoe = yy - era * 400
    mp = (mo + 9) % 12
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    out: np.ndarray = era * 146097 + doe - 719468
    return out


_K_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
_DAYS_IN = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], np.int64)
_FRAC_SCALE = 10 ** np.arange(5, -1, -1, dtype=np.int64)  #: six digits -> microseconds


def kubectl_us(data: np.ndarray, starts: np.ndarray, plen: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """``kubectl logs --timestamps``' prefix, ``%Y-%m-%dT%H:%M:%S[.%f]Z`` (RFC3339Nano in
    UTC: 1-9 fraction digits) and then one or two spaces, ``plen[i]`` bytes from
    ``starts[i]``: (UTC epoch microseconds, the fraction cut to microseconds; ok). Not ok
    where the prefix is anything else, or a date that does not exist, or more spaces: the
    caller reads those with the regex (``joblog_frame.V_KUBECTL``), whose answers these are
    wherever ok (``test_kubectl_stamps``). Read backwards from the prefix's end (the 'Z'
    before its spaces), so that each test is one column of the rows, not a window."""
    n = len(starts)
    w = _gather(data, starts, 32)
    rows = np.arange(n)
    last = np.clip(plen - 1, 0, 31)
    second = w[rows, np.clip(plen - 2, 0, 31)]
    one = second == 90  # "Z "
    two = ~one & (second == 32) & \
        (w[rows, np.clip(plen - 3, 0, 31)] == 90)  # "Z  "
    z = np.where(one, plen - 2, plen - 3)  # where the 'Z' is
    ok = (one | two) & (w[rows, last] == 32) & (z >= 19) & (z != 20) & (z <= 29)
    ok &= (w[:, 4] == 45) & (w[:, 7] == 45) & (w[:, 10] == 84) & (w[:, 13] == 58)
    ok &= (w[:, 16] == 58) & ((z == 19) | (w[:, 19] == 46))
    k = np.clip(z - 20, 0, 9)  # fraction digits
    frac_ok = ((w[:, 20:29] - np.uint8(48)) <= 9) | (np.arange(9)[None, :] >= k[:, None])
    ok &= frac_ok.all(axis=1)
    d8 = w[:, _K_DIGITS] - np.uint8(48)  # uint8: anything but a digit wraps to > 9
    ok &= d8.max(axis=1) <= 9
    # ISO_SECONDS' classes: [12] year, [01] month, [0-3] day, hour to 23, [0-5] min and sec
    ok &= ((d8[:, 0] == 1) | (d8[:, 0] == 2)) & (d8[:, 4] <= 1) & (d8[:, 6] <= 3)
    ok &= (d8[:, 10] <= 5) & (d8[:, 12] <= 5)
    d = [d8[:, j].astype(np.int64) for j in range(14)]
    y = d[0] * 1000 + d[1] * 100 + d[2] * 10 + d[3]
    mo, day = d[4] * 10 + d[5], d[6] * 10 + d[7]
    h, mi, sec = d[8] * 10 + d[9], d[10] * 10 + d[11], d[12] * 10 + d[13]
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    dim = _DAYS_IN[np.clip(mo, 0, 12)] + ((mo == 2) & leap)
    ok &= (mo >= 1) & (mo <= 12) & (day >= 1) & (day <= dim) & (h <= 23)
    frac = np.zeros(n, np.int64)
    for j in range(6):  # the first six digits, zeros past the last
        frac += np.where(k > j, w[:, 20 + j].astype(np.int64) - 48, 0) * _FRAC_SCALE[j]
    secs = _civil_days(y, mo, day) * 86400 + h * 3600 + mi * 60 + sec
    return np.where(ok, secs * 1_000_000 + frac, 0), ok


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
