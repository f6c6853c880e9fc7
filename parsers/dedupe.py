"""A chunk's regex masks computed once per distinct line *shape*, not once per line.

Most of a fleet's log bytes are the same few messages with other numbers in them: the
healthy INFO lines of every NCCL rank, a progress line per step, a kubelet message per pod.
Written with every ASCII digit as ``0`` (``keys``), such a chunk has few distinct lines
(NCCL_DEBUG=INFO output, 8 MiB: 82,835 lines, 6,810 keys; ``[rankN]`` step lines: 196,588
lines, 11 keys). A pattern that cannot tell one ASCII digit from another (``digit_blind``:
every class it tests holds all ten or none of them, and no literal in it is a digit) gives
the same answer on a line and on its key, so it is evaluated on the distinct keys and spread
back to the lines by their dictionary codes. The answers are exact by construction;
``tests/parsers/test_dedupe.py`` compares them with the per-line evaluation.

A pattern that names a digit (RFC 5424's version ``1``, a zero-padded day) is evaluated on
the lines. A literal prefilter with a few digit literals (``mlx5_cmd_out_err``) is split:
its digit-free part runs on the keys, its digit literals run relaxed on the keys (``mlx0_...``)
and the lines whose key matched are then tested exactly (``CompiledPrefilter.key_parts``).

It pays only where lines repeat: a sample of the chunk decides (``unique_lines``), and a
chunk whose distinct keys would still hold most of its bytes (a kubelet log of pod UUIDs,
a syslog of long unique lines) is evaluated line by line, as before.
"""

from __future__ import annotations

import functools
import re
import re._constants as sre_c
import re._parser as sre_parse
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

#: chunks of fewer lines are evaluated line by line (the keys cost more than they save)
MIN_LINES = 16_384
#: lines spread over the chunk whose keys estimate how much of it is repeated (a sample
#: repeats less than the chunk, so the estimate errs on the side of line by line)
SAMPLE_LINES = 1_024
#: evaluate on keys only if the sample's distinct keys hold at most this share of its bytes.
#: Sample / whole chunk (8 MiB): NCCL INFO 0.18 / 0.12, ``[rankN]`` steps 0.005 / 0.00,
#: slurmctld 0.03 / 0.00, a fleet's healthy syslog 0.38-0.42 / 0.16-0.17 (its lines repeat
#: ~8 times a chunk, mostly once in a sample of 1,024), one in four of them a candidate
#: 0.51-0.53 / 0.37, kube-controller-manager 0.62-0.64 / 0.54. The keys cost ~10-15 ms a
#: chunk and a syslog chunk's five patterns ~60 ms (107 CPU-ms) on its lines, 20 on its
#: keys: at 0.45 (it was 0.25) the healthy syslog of the benchmark reads in 3.78-4.19 s
#: instead of 5.26-5.75, output identical; at 0.7 the other two were no faster (syslog-
#: errors 101-105 -> 108-110 s, kube-controller-manager 2.5-3.0 vs 2.1-2.6 s, +80 MiB)
MAX_UNIQUE_SHARE = 0.45

_ZERO = bytes.maketrans(b"123456789", b"000000000")
_DIGITS = frozenset("0123456789")


@dataclass
class Unique:
    """The distinct keys of a chunk and, per line, the index of its key."""

    keys: pl.Series
    codes: np.ndarray
    _has: dict[str, np.ndarray] = field(default_factory=dict)

    def spread(self, values: np.ndarray) -> np.ndarray:
        """Per line, the value of its key."""
        out: np.ndarray = values[self.codes]
        return out

    def subset(self, keep: np.ndarray) -> tuple[np.ndarray, Unique]:
        """The lines whose key ``keep`` (per key) marks, and their own ``Unique`` (the kept
        keys, in the same order): patterns only some keys need are evaluated on those."""
        if keep.all():
            return np.arange(len(self.codes)), self
        idx = np.flatnonzero(keep[self.codes])
        return idx, self._kept(keep, self.codes[idx])

    def of_lines(self, idx: np.ndarray) -> Unique:
        """The ``Unique`` of the lines ``idx`` (the keys they have, in the same order): what
        ``shapes(lines.gather(idx))`` finds, up to the keys' order, without reading them."""
        codes = self.codes[idx]
        keep = np.zeros(len(self.keys), bool)
        keep[codes] = True
        return self._kept(keep, codes)

    def _kept(self, keep: np.ndarray, codes: np.ndarray) -> Unique:
        """The keys ``keep`` marks, for lines of these ``codes`` (all among them)."""
        return Unique(self.keys.filter(pl.Series(keep)), (np.cumsum(keep) - 1)[codes])

    def has(self, text: str) -> np.ndarray:
        """Per distinct key: does it contain ``text`` (digits as ``0``)?"""
        got = self._has.get(text)
        if got is None:
            got = np.asarray(self.keys.str.contains(text, literal=True).fill_null(False)
                             .to_numpy(), bool)
            self._has[text] = got
        return got


def zero_digit_bytes(raw: np.ndarray) -> np.ndarray:
    """A copy of the bytes ``raw`` (uint8) with every ASCII digit written as ``0``, as
    ``bytes.translate(_ZERO)`` gives, in three vectorised passes: 3.7 ms for 8 MiB, where
    ``translate`` (a table lookup per byte, plus the copy out of Arrow) took 13.8 ms."""
    d = raw - np.uint8(48)  # a digit's value; 208..255 or 10..207 for any other byte
    np.multiply(d, d < 10, out=d)  # the digits' values, 0 elsewhere
    np.subtract(raw, d, out=d)
    return d


def keys(lines: pl.Series) -> pl.Series:
    """``lines`` with every ASCII digit written as ``0`` (same lengths, same other bytes):
    the string views' inline bytes and data buffers translated, nothing else copied."""
    arr = lines.to_arrow(compat_level=pl.CompatLevel.newest())
    if not isinstance(arr, pa.StringViewArray):  # pragma: no cover - polars' own type
        arr = arr.cast(pa.string_view())
    n = len(arr)
    bufs = arr.buffers()
    lens = np.frombuffer(bufs[1], "<u4").reshape(-1, 4)[arr.offset: arr.offset + n, 0]
    held = sum(b.size for b in bufs[2:] if b is not None)
    if held > 2 * int(lens[lens > 12].sum()) + (1 << 16):
        # a few lines gathered from a chunk still point into all of its bytes: copy them
        # out (~0.7 ms for a quarter of 8 MiB) rather than translate the whole chunk
        arr = arr.cast(pa.large_string()).cast(pa.string_view())
        bufs = arr.buffers()
    # a view is 4 little-endian uint32: length, then the line's first 4 bytes, then either
    # its next 8 bytes (a line of at most 12) or where its bytes are (buffer, offset): all
    # zeroed (``zero_digit_bytes``) but the length and where, then put back as two uint64 words
    # (length in the low half of the first)
    views = np.frombuffer(bufs[1], "<u8").reshape(-1, 2)[arr.offset: arr.offset + n]
    tr = zero_digit_bytes(np.ascontiguousarray(views).view(np.uint8)).view("<u8").reshape(n, 2)
    low = np.uint64(0xFFFFFFFF)
    out = np.empty((n, 2), "<u8")
    out[:, 0] = (tr[:, 0] & ~low) | (views[:, 0] & low)
    out[:, 1] = np.where(lens <= 12, tr[:, 1], views[:, 1])
    data = [pa.py_buffer(zero_digit_bytes(np.frombuffer(b, np.uint8))) for b in bufs[2:]
            if b is not None]
    valid = bufs[0]
    got = pl.from_arrow(pa.Array.from_buffers(pa.string_view(), n, [valid, pa.py_buffer(out),
                                                                    *data]))
    assert isinstance(got, pl.Series)
    return got


def unique_lines(lines: pl.Series, min_lines: int = MIN_LINES) -> Unique | None:
    """The chunk's distinct keys, or None where evaluating on them would not pay (fewer
    than ``min_lines`` lines: a caller whose lines are long may ask for fewer)."""
    if len(lines) < min_lines or lines.null_count():
        return None
    n = len(lines)
    every = np.linspace(0, n - 1, min(SAMPLE_LINES, n)).astype(np.int64)
    if repeated_share(lines.gather(every).to_list()) > MAX_UNIQUE_SHARE:
        return None
    return shapes(lines)


def shapes(lines: pl.Series) -> Unique:
    """The distinct keys of ``lines`` (no nulls), whatever they would save."""
    enc = pc.dictionary_encode(keys(lines).to_arrow(compat_level=pl.CompatLevel.newest()))
    uniq = pl.from_arrow(enc.dictionary)
    assert isinstance(uniq, pl.Series)
    return Unique(uniq.alias("l"), np.asarray(enc.indices.to_numpy(), np.int64))


def repeated_share(sample: list[str]) -> float:
    """The share of ``sample``'s bytes in the first line of each distinct key (what the
    patterns would still read if the sample were the chunk): ~0.5 ms for 1,024 lines."""
    blob = "\n".join(sample).encode("utf-8", "surrogatepass")
    parts = blob.translate(_ZERO).split(b"\n")
    total = len(blob) - len(parts) + 1
    if total <= 0:
        return 1.0
    return sum(len(k) for k in dict.fromkeys(parts)) / total


@functools.lru_cache(maxsize=1024)
def digit_blind(pattern: str) -> bool:
    """Does ``pattern`` (the Rust-regex syntax shared with Python's ``re``) give the same
    answer for any ASCII digit in place of another? False when unsure (it does not parse
    in Python, or uses a construct not walked here)."""
    try:
        tree = sre_parse.parse(pattern)
    except Exception:
        return False
    return _blind(tree)


def _class_digits(items: Any) -> set[str] | None:
    got: set[str] = set()
    for op, av in items:
        if op is sre_c.LITERAL:
            got |= {chr(av)} & _DIGITS
        elif op is sre_c.RANGE:
            got |= {d for d in _DIGITS if av[0] <= ord(d) <= av[1]}
        elif op is sre_c.CATEGORY:
            if av in (sre_c.CATEGORY_DIGIT, sre_c.CATEGORY_WORD, sre_c.CATEGORY_NOT_SPACE):
                got |= _DIGITS
        elif op is not sre_c.NEGATE:
            return None
    return got


def _blind(seq: Any) -> bool:
    for op, av in seq:
        if op in (sre_c.LITERAL, sre_c.NOT_LITERAL):
            if chr(av) in _DIGITS:
                return False
        elif op is sre_c.IN:
            got = _class_digits(av)
            if got is None or got not in (set(), set(_DIGITS)):
                return False
        elif op is sre_c.SUBPATTERN:
            if not _blind(av[-1]):
                return False
        elif op is sre_c.BRANCH:
            if not all(_blind(b) for b in av[1]):
                return False
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
            if not _blind(av[2]):
                return False
        elif op is sre_c.ATOMIC_GROUP:
            if not _blind(av):
                return False
        elif op not in (sre_c.AT, sre_c.ANY):
            return False
    return True


#: stamp-like text of any layer (ISO date, clock time, dmesg uptime) in a key: a shape without
#: a stamp that a prefix layer reads may hold lines with one (``0000-00-00`` is no date)
STAMPISH = re.compile(r"0000-00-00|00:00:00|\[ *0+\.0+\]|\b0{9,}\b")


def zero_digits(text: str) -> str:
    """A literal as it appears in a key."""
    return text.translate(str.maketrans("123456789", "000000000"))
