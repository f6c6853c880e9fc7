"""Lines nothing recognised, folded into masked forms with exact counts (per file).

An unparsed line is where the next rule comes from. Every one is masked (numbers, hex, ids,
addresses, times become placeholders, as Drain3's masking does) and counted by its masked form,
vectorised on the prefiltered path and line by line otherwise (the same regular expressions,
so both give the same forms). ``pipeline.ingest.unknown`` then mines templates from the forms
of all files (Drain3) and ranks them.

Memory stays bounded: at most ``MAX_FORMS`` distinct forms are kept per file; lines of further
forms are counted under ``OVERFLOW``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

MAX_FORMS = 2000
#: ``add_chunk`` of at most this many lines runs in Python (``_add_few``). Measured: 95
#: lines of one form 0.63 vs 2.41 ms by polars; 256 lines of 41 forms 2.1 vs 7.2 ms; 256
#: lines all distinct 3.1 vs 10.0 ms; from ~500 distinct lines polars is faster
FEW_LINES = 256
OVERFLOW = "<more forms than kept>"
#: (pattern, placeholder), applied in order; the same text for Python re and Rust regex.
#: Two passes only (ids, then anything that starts with a digit: numbers, times, dates,
#: addresses, versions): the unknown lines of a big file are masked at disk speed, and Drain3
#: generalises what the masks leave.
MASKS: tuple[tuple[str, str], ...] = (
    (r"0x[0-9a-fA-F]+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
     r"[0-9a-fA-F]{12}|\b[0-9a-f]{12,}\b", "<ID>"),
    (r"\d[\d.:,\-]*", "<N>"),
)
_PY = [(re.compile(p), r) for p, r in MASKS]
MAX_TEXT = 300


def mask_line(text: str) -> str:
    s = text.strip()[:MAX_TEXT]
    for rx, rep in _PY:
        s = rx.sub(rep, s)
    return s


def mask_series(lines: pl.Series) -> pl.Series:
    s = lines.str.strip_chars().str.slice(0, MAX_TEXT)
    for p, rep in MASKS:
        s = s.str.replace_all(p, rep.replace("$", "$$"))
    return s


@dataclass
class Forms:
    """Masked form -> [count, first line number, first example] for one file."""

    forms: dict[str, list[object]] = field(default_factory=dict)

    def add(self, form: str, count: int, line_no: int, example: str) -> None:
        got = self.forms.get(form)
        if got is not None:
            got[0] = int(got[0]) + count  # type: ignore[call-overload]
            return
        if len(self.forms) >= MAX_FORMS:
            form, example = OVERFLOW, ""
            got = self.forms.get(form)
            if got is not None:
                got[0] = int(got[0]) + count  # type: ignore[call-overload]
                return
        self.forms[form] = [count, line_no, example[:MAX_TEXT]]

    def add_line(self, text: str, line_no: int) -> None:
        self.add(mask_line(text), 1, line_no, text)

    def add_chunk(self, lines: pl.Series, line_nos: pl.Series) -> None:
        """Unparsed lines of a chunk (in file order), vectorised: lines are grouped by their
        ``digit_keys`` first (cheap), and only the first line of each group is masked; the
        groups are then summed per form. Same forms, counts, first lines and order as masking
        every line (``test_unknown`` checks it), at a fraction of the cost: the regular
        expressions run on ~1 line in 100 of a typical unknown flood."""
        if not len(lines):
            return
        if len(lines) <= FEW_LINES:
            self._add_few(lines.to_list(), line_nos.to_list())
            return
        keyed = _first_of(digit_keys(lines), np.arange(len(lines)))
        first = keyed.get_column("i")
        self._add_groups(lines.gather(first), keyed.get_column("n"), line_nos.gather(first))

    def _add_few(self, texts: list[str], nos: list[int]) -> None:
        """``add_chunk`` of a few lines in Python: the polars queries' fixed costs (~1-3 ms a
        call, their regular expressions compiled each time) are most of a small file's. The
        same groups (digit keys) and order; a line is masked by ``mask_line`` where that and
        ``mask_series`` provably agree (ASCII without the separators ``\x1c``-``\x1f``, which
        Python's ``strip`` removes and Rust's does not), else by ``mask_series``."""
        groups: dict[str, list[int]] = {}  #: digit key -> [first line's index, count]
        for i, text in enumerate(texts):
            groups.setdefault(text.translate(_DIGIT_KEY), [i, 0])[1] += 1
        reps = [texts[i] for i, _ in groups.values()]
        odd = [k for k, t in enumerate(reps) if not t.isascii() or _SEPARATORS.search(t)]
        masked = [mask_line(t) for t in reps]
        if odd:
            for k, form in zip(odd, mask_series(pl.Series([reps[k] for k in odd],
                                                          dtype=pl.String)).to_list(),
                               strict=True):
                masked[k] = form
        summed: dict[str, list[Any]] = {}  #: form -> [count, first line's number, its text]
        for form, (i, n) in zip(masked, groups.values(), strict=True):
            got = summed.get(form)
            if got is None:
                summed[form] = [n, nos[i], texts[i]]
            else:
                got[0] += n
        for form, (n, no, line) in summed.items():
            self.add(form, n, no, line)

    def add_shapes(self, lines: pl.Series, where: np.ndarray, first_line_no: int,
                   shapes: Any) -> None:
        """``add_chunk`` of the chunk's lines ``where``, grouped by the chunk's digit-zeroed
        shapes (``parsers.dedupe.Unique``, computed for its masks) instead of digit keys.
        Lines of one shape have one masked form, unless the shape has ``0x`` (the one place
        ``MASKS`` tells a ``0`` from another digit: ``HEX_SENSITIVE``): those lines are
        grouped by their digit keys, as ``add_chunk`` does. Same forms, counts, first lines
        and order (``test_unknown`` checks it)."""
        if not where.size:
            return
        codes = shapes.codes[where]
        unsafe = shapes.has(HEX_SENSITIVE)[codes]
        parts = []
        if not unsafe.all():
            parts.append(_first_of(pl.Series(codes[~unsafe]), where[~unsafe]))
        if unsafe.any():
            odd = where[unsafe]
            parts.append(_first_of(digit_keys(lines.gather(odd)), odd))
        keyed = pl.concat(parts).sort("i") if len(parts) > 1 else parts[0]
        first = keyed.get_column("i")
        self._add_groups(lines.gather(first), keyed.get_column("n"), first + first_line_no)

    def _add_groups(self, reps: pl.Series, counts: pl.Series, line_nos: pl.Series) -> None:
        """Groups of lines of one masked form each (first line, count, its number), in the
        order of their first lines: summed per form."""
        df = pl.DataFrame({"form": mask_series(reps), "n": counts, "no": line_nos,
                           "line": reps})
        g = df.group_by("form", maintain_order=True).agg(
            pl.col("n").sum(), pl.col("no").first(), pl.col("line").first())
        for form, n, no, line in g.iter_rows():
            self.add(form, int(n), int(no), line)


#: the digit text ``MASKS`` tell apart from other digits (``0x``): a line's masked form
#: depends on its digits only through it (``test_unknown`` checks that every other mask is
#: ``dedupe.digit_blind``)
HEX_SENSITIVE = "0x"


def _first_of(keys: pl.Series, index: np.ndarray) -> pl.DataFrame:
    """Per distinct key, in order of first appearance: its first ``index`` and its count."""
    return pl.DataFrame({"k": keys, "i": index}).group_by("k", maintain_order=True).agg(
        pl.len().alias("n").cast(pl.Int64), pl.col("i").first().cast(pl.Int64)).select("i", "n")


_DIGITS = bytes.maketrans(b"23456789", b"11111111")
_DIGIT_KEY = str.maketrans("23456789", "11111111")  #: ``_DIGITS`` for a str
_SEPARATORS = re.compile("[\x1c-\x1f]")


def digit_keys(lines: pl.Series) -> pl.Series:
    """Each line with the ASCII digits 2-9 written as 1. Two lines with the same key have the
    same masked form: every mask above tests a digit only for being a digit (``\\d``,
    ``[0-9a-f]``, ``\\b``), except ``0x``, so ``0`` is kept; the bytes 0x32-0x39 occur in
    UTF-8 only as those digits. One translation of the chunk's bytes (``bytes.translate``)."""
    arr = lines.to_arrow().cast(pa.large_string())
    bufs = arr.buffers()
    off = np.frombuffer(bufs[1], np.int64, len(arr) + 1, arr.offset * 8)
    data = bufs[2].to_pybytes()[off[0]:off[-1]] if bufs[2] is not None else b""
    out = pa.Array.from_buffers(pa.large_string(), len(arr), [
        None, pa.py_buffer((off - off[0]).tobytes()), pa.py_buffer(data.translate(_DIGITS))])
    s = pl.from_arrow(out)
    assert isinstance(s, pl.Series)
    return s
