"""tqdm bars redrawn with ``\\r`` and HF Trainer loss dicts in a job log, found for a whole
chunk (``tqdm_lines``; their rows are preset by ``joblog_preset.tqdm_chunk``).

An HF Trainer job's output is mostly lines like (tqdm/std.py ``format_meter`` and
``status_printer``: every redraw starts with ``\\r``; transformers/trainer_callback.py
``ProgressCallback.on_log`` prints ``str(logs)`` through ``tqdm.write``, which clears the bar
with a line of spaces first)::

    \\r  0%|          | 1/100000 [00:00<22:55:58,  1.21it/s]\\r  0%|   | 2/100000 [...]...
    \\r<spaces>\\r{'loss': 2.5376, 'grad_norm': 1.0381, 'learning_rate': 1.9e-05, 'epoch': 0.0}

and a Lightning job's (lightning/pytorch/callbacks/progress/tqdm_progress.py: one bar reset
every epoch, never closed, so a whole run of redraws is one physical line of megabytes)::

    \\rEpoch 0:  45%|████▌     | 450/1000 [01:23<01:42,  5.38it/s, v_num=0, train_loss=2.31]...

Each non-blank ``\\r`` part is one row (``progress_bar`` / ``hf_log``, see parsers.hf_trainer).
``tqdm_lines`` takes a line when every part is blank, a bar or a loss dict, in patterns
narrower than the per-line ones (digits only in ``n/total``, printable ASCII before and after
the bar, a plain decimal loss), and no anchor of any recogniser but HfTrainerMatcher is in it
(so no matcher before it claims a part); the others go through ``parse_line``. A bar with a
description (Lightning's and NeMo's ``Epoch 3: ``, datasets' ``Map (num_proc=8): ``, any
``tqdm(desc=...)``) is taken when, on its shape, the per-line pattern (``TQDM_FIELDS``) finds
the same fields, no prefix layer reads anything (``JobLogParser.sig_prefix``) and nothing
stamp-like is in the description; its row's code is the description, cut per part.

How: the patterns are digit-blind (every class holds all ten digits or none: tested), so
whether a part is taken, and where its fields are, depends on its digit-zeroed shape only
(``parsers.dedupe``), and the fields are cut from each line or part at its shape's offsets
(in bytes). Lines that repeat by shape (an HF job: ~170 line shapes in 8 MiB, 9,500 lines of
128,000 parts) are judged once per line shape (``_rows_by_line``, each part of it once per
part shape); the others (a Lightning line of 1,000 redraws is like no other) are split into
their parts by polars, which are judged once per part shape (``_rows_by_part``, ~100 in 8
MiB). Per part, the HF job's chunks cost 12 ms more (the split and the parts' shapes); per
line, a Lightning chunk's shapes are each read once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import polars as pl

from parsers import dedupe, prefilter
from parsers.anchors import CompiledPrefilter

#: a ``parsers.joblog.JobLogParser`` (joblog imports this module)
JobLogParser = Any

BAR = r"^ *[0-9]{1,3}%\|[^|]*\| *([0-9]{1,15})/([0-9]{1,15}) \[[ -~]*$"
#: a bar behind a description (printable ASCII), as narrow as ``BAR`` after it
DESC_BAR = r"^([ -~]*?)[0-9]{1,3}%\|[^|]*\| *([0-9]{1,15})/([0-9]{1,15}) \[[ -~]*$"
LOSS = r"^\{'loss': (-?[0-9]{1,15}(?:\.[0-9]{1,15})?)[,}][ -~]*$"
#: a tqdm bar (``{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]``)
#: with more text glued behind its closing bracket (transformers#15401, DeepSpeed#1054):
#: ``JobLogParser`` splits a line there, so a line with one is left to it (digit-blind: tested
#: per line shape here)
BAR_GLUED = re.compile(r"\d{1,3}%\|[^|]*\| *[\d.]+[kMGT]?/[\d.]+[kMGT]? \[[^\]]*\](?=\S)")
#: ``BAR_GLUED`` loosened for the regex crate (no look-ahead; every part a superset, the last
#: ``\S`` wider than Python's): a line it does not match has no ``BAR_GLUED``
GLUED_LOOSE = r"%\|[^|]*\|[^\[]*\[[^\]]*\][^ \t\n\r\x0b\x0c]"
GLUED_END = r"\][^ \t\n\r\x0b\x0c]"


@dataclass(frozen=True)
class TqdmRows:
    """The chunk's lines read here and their rows (one per non-blank part, in line order)."""

    lines: np.ndarray  #: chunk indices of the lines taken
    row_line: np.ndarray  #: chunk index of each row's line
    frame: pl.DataFrame  #: kind, iteration, value, format, message, code per row


@lru_cache(maxsize=8)
def _others(extra_key: tuple[str, ...]) -> CompiledPrefilter:
    from parsers.hf_trainer import HfTrainerMatcher
    from parsers.message import all_recognisers, prefilter_of

    return prefilter_of(all_recognisers(skip=(HfTrainerMatcher,)), claims=True).compiled()


def others_prefilter() -> CompiledPrefilter:
    """The anchors of every recogniser but HfTrainerMatcher (and ``--rules`` signatures)."""
    from parsers.signature_table import EXTRA

    return _others(tuple(s.id for s in EXTRA))


def tqdm_lines(lines: pl.Series, p: JobLogParser | None = None) -> TqdmRows | None:
    """The chunk's bar / loss-dict lines (see module docstring), or None if it has none.
    ``p``: the parser whose prefix layers a described bar must pass (None: such bars are
    left to ``parse_line``)."""
    has = lines.str.contains("%|", literal=True) | lines.str.starts_with("{'loss': ")
    idx = np.flatnonzero(has.fill_null(False).to_numpy())
    if not idx.size:
        return None
    sub = lines.gather(idx)
    # bar lines differ mostly in their digits: the anchors are tested per digit-zeroed shape
    # when few (~170 in 9,500 lines of 8 MiB; exact either way, parsers/dedupe.py)
    u = dedupe.unique_lines(sub, min_lines=256)
    keep = ~np.asarray(prefilter.masks(sub, {"m": others_prefilter()}, unique=u)["m"], bool)
    if not keep.any():
        return None
    if u is None:  # long lines, or lines that do not repeat: judged per part
        return _rows_by_part(idx[keep], sub.filter(pl.Series(keep)), p)
    return _rows_by_line(idx[keep], sub.filter(pl.Series(keep)), u.codes[keep],
                         u.keys.to_list(), p)


#: the patterns on bytes (every class is ASCII or all but ``|``: a UTF-8 character matches
#: ``[^|]*`` as its bytes do, and ``[ -~]`` neither way), for offsets in bytes
_BLANK_RX, _BAR_RX, _LOSS_RX, _DESC_RX = (re.compile(p.encode())
                                          for p in (r"^ *$", BAR, LOSS, DESC_BAR))
#: a part's judgement: kind (-1 not taken, 0 blank, 1 bar, 2 loss dict), then offsets and
#: lengths in bytes of ``n``, the value (total / loss) and the description
_REJECT = (-1, 0, 0, 0, 0, 0, 0)


def _described(part: bytes, p: JobLogParser) -> tuple[int, ...] | None:
    """(``n`` offset, length, total offset, length, description offset, length) of a bar
    behind a description, as the per-line path reads it (``HfTrainerMatcher``: ``TQDM_FIELDS``
    and ``_bar_desc``), or None unless every part of this shape is read so (module
    docstring). Offsets in bytes of the part (all ASCII up to the bar)."""
    from parsers.hf_trainer import TQDM_FIELDS, _bar_desc

    m = _DESC_RX.match(part)
    if m is None:
        return None
    text = part.decode()
    t = TQDM_FIELDS.search(text)
    if t is None or t.start(1) != m.end(1) or (t.group(2), t.group(4)) != (
            m.group(2).decode(), m.group(3).decode()):
        return None
    head = text[:t.start()]
    pre = p.sig_prefix(text)  # parsers.sigrows.joblog_prefix
    if dedupe.STAMPISH.search(head) or pre is None or pre.at or pre.ts is not None \
            or pre.rank is not None:
        return None
    desc = _bar_desc(text, t.start()) or ""
    return (m.start(2), m.end(2) - m.start(2), m.start(3), m.end(3) - m.start(3),
            len(head) - len(head.lstrip()), len(desc))


def _judge(shape: bytes, p: JobLogParser | None) -> tuple[int, ...]:
    """``_REJECT``'s fields for a part of this digit-zeroed shape."""
    if (m := _BAR_RX.match(shape)) is not None:
        return 1, m.start(1), m.end(1) - m.start(1), m.start(2), m.end(2) - m.start(2), 0, 0
    if (m := _LOSS_RX.match(shape)) is not None:
        # a fork's step in the dict (hf_trainer._DICT_STEP) is read per line
        return (2, 0, 0, m.start(1), m.end(1) - m.start(1), 0, 0) \
            if b"'global_step" not in shape else _REJECT
    if p is not None and (d := _described(shape, p)) is not None:
        return (1, *d)
    if _BLANK_RX.match(shape) is not None:
        return 0, 0, 0, 0, 0, 0, 0
    return _REJECT


def _line_rows(shape: str, p: JobLogParser | None, memo: dict[bytes, tuple[int, ...]]
               ) -> list[tuple[int, ...]] | None:
    """The rows of a line of this digit-zeroed shape, or None if it is not taken (see
    ``_rows_by_part``). A row: kind, then offset and length in bytes of the line of the part,
    ``n``, the value and the description."""
    if BAR_GLUED.search(shape) is not None:
        return None
    rows: list[tuple[int, ...]] = []
    at = 0
    for part in shape.encode().split(b"\r"):
        j = memo.get(part)
        if j is None:
            j = memo[part] = _judge(part, p)
        if j[0] < 0:
            return None
        if j[0]:
            rows.append((j[0], at, len(part), at + j[1], j[2], at + j[3], j[4], at + j[5], j[6]))
        at += len(part) + 1
    return rows or None


def _rows_by_line(idx: np.ndarray, sub: pl.Series, codes: np.ndarray, shapes: list[str],
                  p: JobLogParser | None) -> TqdmRows | None:
    """``TqdmRows`` of the lines ``sub`` (chunk indices ``idx``, shape ``codes`` into
    ``shapes``), judged per line shape; the fields are cut from each row's line (gathered
    once per row: string views, ~0.5 ms per 8 MiB chunk)."""
    table: list[tuple[int, ...]] = []
    first = np.zeros(len(shapes), np.int64)
    count = np.zeros(len(shapes), np.int64)
    memo: dict[bytes, tuple[int, ...]] = {}
    for k, shape in enumerate(shapes):
        rows = _line_rows(shape, p, memo)
        if rows is not None:
            first[k], count[k] = len(table), len(rows)
            table += rows
    taken = count[codes] > 0
    if not taken.any():
        return None
    c = codes[taken]
    n = count[c]
    line_of_row = np.repeat(np.arange(len(c)), n)
    begin = np.cumsum(n) - n
    src = np.repeat(first[c], n) + np.arange(int(n.sum())) - np.repeat(begin, n)
    t = np.asarray(table, np.int64)[src]
    text = sub.filter(pl.Series(taken)).gather(line_of_row)
    rows_at = idx[taken]
    return TqdmRows(rows_at, rows_at[line_of_row], _frame(text, t[:, [0, 3, 4, 5, 6, 7, 8]],
                                                          t[:, 1:3]))


def _frame(text: pl.Series, t: np.ndarray, part: np.ndarray | None = None) -> pl.DataFrame:
    """The rows' fields: ``t`` as ``_REJECT`` (offsets in ``text``), ``part`` the offset and
    length of each row's part (None: the whole text is the part)."""
    bar = t[:, 0] == 1

    def cut(at: int, tt: np.ndarray = t) -> pl.Expr:  # by bytes (str.slice counts characters)
        return pl.col("t").bin.slice(pl.Series(tt[:, at]), pl.Series(tt[:, at + 1])).cast(
            pl.String)

    return pl.DataFrame({"t": text.cast(pl.Binary), "bar": bar}).select(
        pl.when(~pl.col("bar")).then(pl.col("t").cast(pl.String) if part is None
                                     else cut(0, part)).alias("message"),
        pl.when(pl.col("bar")).then(pl.lit("progress_bar")).otherwise(pl.lit("hf_log"))
        .alias("kind"),
        pl.when(pl.col("bar")).then(cut(1)).cast(pl.Int64).alias("iteration"),
        cut(3).cast(pl.Float64).alias("value"),
        pl.when(pl.col("bar")).then(pl.lit("tqdm")).otherwise(pl.lit("hf_trainer"))
        .alias("format"),
        pl.when(pl.Series(t[:, 6] > 0)).then(cut(5)).alias("code"))


def _rows_by_part(idx: np.ndarray, sub: pl.Series, p: JobLogParser | None
                  ) -> TqdmRows | None:
    """``TqdmRows`` of the lines ``sub`` (chunk indices ``idx``): a line is taken when each
    of its parts is (``_judge``), one is not blank, and no text is glued behind a bar
    (``GLUED_LOOSE``)."""
    split = sub.str.split("\r")
    n_parts = split.list.len().to_numpy().astype(np.int64)
    parts = split.explode()
    part_line = np.repeat(np.arange(len(sub)), n_parts)
    u = dedupe.shapes(parts)
    table = np.array([_judge(k.encode(), p) for k in u.keys.to_list()], np.int64).reshape(-1, 7)
    t = table[u.codes]
    row = t[:, 0] > 0
    taken = (np.bincount(part_line, t[:, 0] < 0, len(sub)) == 0) \
        & (np.bincount(part_line, row, len(sub)) > 0)
    # GLUED_LOOSE ends in GLUED_END: the full pattern only where that is (a run of redraws
    # has none: each ``]`` is followed by ``\r``), ~5 ms per MB less on Lightning's lines
    maybe = np.flatnonzero(taken & sub.str.contains(GLUED_END).to_numpy())
    if maybe.size:
        taken[maybe[sub.gather(maybe).str.contains(GLUED_LOOSE).to_numpy()]] = False
    sel = taken[part_line] & row
    if not sel.any():
        return None
    return TqdmRows(idx[taken], idx[part_line[sel]], _frame(parts.filter(pl.Series(sel)),
                                                             t[sel]))
