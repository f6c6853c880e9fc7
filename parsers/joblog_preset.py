"""Job-log chunks whose regular lines are read vectorised and preset (``ChunkPlan.preset``).

Two families, each built as the rows the per-line path gives them: the bulk (iteration rows,
bar redraws) as a compact PROGRESS batch after the chunk's per-line rows (as
``joblog_frame`` hands over Megatron's other iteration rows), the loss dicts merged into the
per-line rows in order (parsers/fastrows.py):

* Megatron iteration lines behind ``kubectl logs --timestamps`` stamps (``kube_chunk``; the
  vectorised Megatron fields of parsers/joblog_fast.py with the RFC3339Nano stamp read by
  polars; every prefix differs, so ``JobLogParser._fast_prefix``'s table of prefixes gives up);
* tqdm bars redrawn with ``\\r`` and HF Trainer loss dicts (``tqdm_chunk``), below.

tqdm bars redrawn with ``\\r`` and HF Trainer loss dicts in a job log, read for a whole chunk.

An HF Trainer job's output is mostly lines like (tqdm/std.py ``format_meter`` and
``status_printer``: every redraw starts with ``\\r``; transformers/trainer_callback.py
``ProgressCallback.on_log`` prints ``str(logs)`` through ``tqdm.write``, which clears the bar
with a line of spaces first)::

    \\r  0%|          | 1/100000 [00:00<22:55:58,  1.21it/s]\\r  0%|   | 2/100000 [...]...
    \\r<spaces>\\r{'loss': 2.5376, 'grad_norm': 1.0381, 'learning_rate': 1.9e-05, 'epoch': 0.0}

Each non-blank ``\\r`` part is one row (``progress_bar`` / ``hf_log``, see parsers.hf_trainer);
the bars' rows go out as a PROGRESS batch (``tqdm_chunk``), after the chunk's other rows.
``tqdm_lines`` takes a line when every part is blank, a bare bar (no description) or a loss
dict, in patterns narrower than the per-line ones (digits only in ``n/total``, printable ASCII
after the bar, a plain decimal loss), and no anchor of any recogniser but HfTrainerMatcher is
in it (so no matcher before it claims a part); the others go through ``parse_line``. The rows'
stamps (inherited from the lines before) are filled in by ``JobLogParser`` once the chunk's
per-line lines have been read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import polars as pl

from parsers import dedupe, fastrows, prefilter, progress_batch
from parsers.anchors import CompiledPrefilter
from parsers.base import EVENT
from parsers.joblog_frame import NO_TS
from parsers.joblog_prefix import Prefix, split_prefix
from parsers.schema import EVENTS

#: a ``parsers.joblog.JobLogParser`` (this module works on its state; joblog imports it)
JobLogParser = Any



def strip_ansi(part: str) -> str:
    """Drop the cursor-movement escapes tqdm puts before a redraw (ESC[A, ESC[K)."""
    while part.startswith(("\x1b[A", "\x1b[K")):
        part = part[3:]
    return part

BAR = r"^ *[0-9]{1,3}%\|[^|]*\| *([0-9]{1,15})/([0-9]{1,15}) \[[ -~]*$"
LOSS = r"^\{'loss': (-?[0-9]{1,15}(?:\.[0-9]{1,15})?)[,}][ -~]*$"


@dataclass(frozen=True)
class TqdmRows:
    """The chunk's lines read here and their rows (one per non-blank part, in line order)."""

    lines: np.ndarray  #: chunk indices of the lines taken
    row_line: np.ndarray  #: chunk index of each row's line
    frame: pl.DataFrame  #: kind, iteration, value, format, message per row


@lru_cache(maxsize=8)
def _others(extra_key: tuple[str, ...]) -> CompiledPrefilter:
    from parsers.hf_trainer import HfTrainerMatcher
    from parsers.message import all_recognisers, prefilter_of

    return prefilter_of(all_recognisers(skip=(HfTrainerMatcher,)), claims=True).compiled()


def _others_prefilter() -> CompiledPrefilter:
    from parsers.signature_table import EXTRA

    return _others(tuple(s.id for s in EXTRA))


def tqdm_lines(lines: pl.Series) -> TqdmRows | None:
    """The chunk's bar / loss-dict lines (see module docstring), or None if it has none."""
    has = lines.str.contains("%|", literal=True) | lines.str.starts_with("{'loss': ")
    idx = np.flatnonzero(has.fill_null(False).to_numpy())
    if not idx.size:
        return None
    sub = lines.gather(idx)
    # bar lines differ mostly in their digits: the anchors are tested per digit-zeroed shape
    # when few (~170 in 9,500 lines of 8 MiB; exact either way, parsers/dedupe.py)
    u = dedupe.unique_lines(sub, min_lines=256)
    other = prefilter.masks(sub, {"m": _others_prefilter()}, unique=u)["m"]
    if u is None:  # lines that do not repeat: their shapes all the same (exact either way)
        u = dedupe.shapes(sub)
    keep = ~np.asarray(other, bool)
    return _rows_by_shape(idx[keep], sub.filter(pl.Series(keep)), u.codes[keep],
                          u.keys.to_list())


#: the patterns on bytes (every class is ASCII or all but ``|``: a UTF-8 character matches
#: ``[^|]*`` as its bytes do, and ``[ -~]`` neither way), for offsets in bytes
_BLANK_RX, _BAR_RX, _LOSS_RX = (re.compile(p.encode()) for p in (r"^ *$", BAR, LOSS))


def _shape_rows(shape: bytes) -> list[tuple[int, ...]] | None:
    """The rows of a line of this digit-zeroed shape, or None if it is not taken: every
    ``\\r`` part blank, a bar (``BAR``) or a loss dict (``LOSS``), and one not blank. A row
    is (kind: 1 bar 2 loss, part offset, part length, ``n`` offset, length, value offset,
    length), offsets in bytes of the line."""
    rows: list[tuple[int, ...]] = []
    at = 0
    for part in shape.split(b"\r"):
        if (m := _BAR_RX.match(part)) is not None:
            rows.append((1, at, len(part), at + m.start(1), m.end(1) - m.start(1),
                         at + m.start(2), m.end(2) - m.start(2)))
        elif (m := _LOSS_RX.match(part)) is not None:
            rows.append((2, at, len(part), 0, 0, at + m.start(1), m.end(1) - m.start(1)))
        elif _BLANK_RX.match(part) is None:
            return None
        at += len(part) + 1
    return rows or None


def _rows_by_shape(idx: np.ndarray, sub: pl.Series, codes: np.ndarray,
                   shapes: list[str]) -> TqdmRows | None:
    """``TqdmRows`` of the lines ``sub`` (chunk indices ``idx``, shape ``codes`` into
    ``shapes``: ``dedupe.keys``).

    The three patterns are digit-blind (every class holds all ten digits or none: tested),
    so whether a line is taken, and where its parts and their groups are, depends only on
    its digit-zeroed shape: they run once per distinct shape (~170 in 8 MiB, 9,500 lines of
    128,000 parts), in Python's ``re`` (the per-line path's engine), and the fields are cut
    from each line at its shape's offsets (in bytes), where every line was split into its
    parts and the patterns with captures run on each: ``tqdm_lines`` of 8 MiB, alternated in
    one process, median 71.6 -> 38.9 ms."""
    table: list[tuple[int, ...]] = []
    first = np.zeros(len(shapes), np.int64)
    count = np.zeros(len(shapes), np.int64)
    for k, shape in enumerate(shapes):
        rows = _shape_rows(shape.encode())
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
    bar = t[:, 0] == 1
    text = sub.filter(pl.Series(taken)).gather(line_of_row)

    def cut(at: int) -> pl.Expr:  # by bytes: str.slice counts characters (3x slower)
        return pl.col("t").bin.slice(pl.Series(t[:, at]), pl.Series(t[:, at + 1])).cast(
            pl.String)

    frame = pl.DataFrame({"t": text.cast(pl.Binary), "bar": bar}).select(
        pl.when(~pl.col("bar")).then(cut(1)).alias("message"),
        pl.when(pl.col("bar")).then(pl.lit("progress_bar")).otherwise(pl.lit("hf_log"))
        .alias("kind"),
        pl.when(pl.col("bar")).then(cut(3)).cast(pl.Int64).alias("iteration"),
        cut(5).cast(pl.Float64).alias("value"),
        pl.when(pl.col("bar")).then(pl.lit("tqdm")).otherwise(pl.lit("hf_trainer"))
        .alias("format"))
    rows_at = idx[taken]
    return TqdmRows(rows_at, rows_at[line_of_row], frame)


def stamp_of(p: JobLogParser, text: str) -> int | None:
    """What ``set_context`` would set ``_last_ts`` to (None: the line has no stamp)."""
    ts = None
    for part in text.split("\r") if "\r" in text else (text,):
        r = split_prefix(strip_ansi(part), p.ctx.tz, Prefix())
        if r.ts is not None and r.flag is not None:
            ts = r.ts
    return ts


def with_preset(p: JobLogParser, lines: pl.Series, first: int, taken: np.ndarray,
                plan: prefilter.ChunkPlan | None = None
                ) -> tuple[prefilter.ChunkPlan, fastrows.Marks, list[int | None]]:
    """The chunk through the prefilter's plan (``plan``, else the parser's) with the lines
    ``taken`` preset EVENT (their rows built vectorised by the caller): the plan, which
    lines went through ``parse_line`` and ``_last_ts`` after each."""
    plan = p.vector_plan(lines) if plan is None else plan
    assert plan is not None
    status = np.full(len(lines), -1, np.int8)
    status[taken] = EVENT
    plan.candidate &= status < 0
    plan.preset = status
    p._marks, p._states = fastrows.Marks(p.events), []
    try:
        p.parse_planned(lines, first, plan)
        return plan, p._marks, p._states
    finally:
        p._marks, p._states = None, []


def kube_chunk(p: JobLogParser, lines: pl.Series, first: int, fast: Any, kube: np.ndarray,
               ts: np.ndarray, plan: prefilter.ChunkPlan | None = None) -> None:
    """Iteration lines behind a kubectl stamp (``_fast_prefix``): the rows the per-line path
    gives them, as a compact PROGRESS batch after the chunk's other rows (as the other
    Megatron iteration rows go; built per row in Python lists, their eight constant
    columns cost the parsing thread ~15 ms per 8 MiB). ``plan``: the chunk's, if already
    made (``joblog_plan.plan_except``)."""
    rows = fast.rows[kube]
    _, marks, _ = with_preset(p, lines, first, rows, plan)
    keep = marks.unread(rows + first)
    if not keep.any():
        return
    k = int(keep.sum())
    p.events.add_batch(progress_batch.make(
        ts[kube][keep], np.zeros(k, bool), np.full(k, 2, np.int8), np.full(k, -1, np.int32),
        fast.iteration[kube][keep], fast.value[kube][keep], rows[keep] + first,
        {"host": p._path_host, "host_from": p._path_host_from, "source": p.name,
         "format": "megatron", "kind": "iteration", "job_id": p.ctx.job_hint,
         "file": p.ctx.path}))


def tqdm_chunk(p: JobLogParser, lines: pl.Series, first: int, t: TqdmRows,
               plan: prefilter.ChunkPlan | None = None) -> None:
    """The chunk with its bar / loss-dict lines preset (rows built by polars), the other
    candidates per line. The loss dicts' rows are merged in per-line order
    (parsers/fastrows.py); the bars' rows -- the bulk, with no text of their own -- go out as a
    compact PROGRESS batch (parsers/progress_batch.py), as Megatron's iteration rows do.
    ``plan``: the chunk's, if already made (``joblog_plan.plan_except``)."""
    start = p._last_ts
    plan, marks, states = with_preset(p, lines, first, t.lines, plan)
    ts = _inherited(p, lines, first, plan, t.lines, marks, states, start)
    row_ts = ts[np.searchsorted(t.lines, t.row_line)]
    missing = row_ts == NO_TS
    bar = t.frame.get_column("iteration").is_not_null().to_numpy() \
        & marks.unread(t.row_line + first)
    const = {"host": p._path_host, "host_from": p._path_host_from, "source": p.name,
             "job_id": p.ctx.job_hint, "file": p.ctx.path}
    logs = ~bar
    if logs.any():
        keep = pl.Series(logs)
        frame = t.frame.filter(keep).with_columns(
            pl.Series("ts", row_ts[logs]).set(pl.Series(missing[logs]), None)
            .cast(pl.Datetime("us", "UTC")),
            # not a numpy array of str: its conversion cost ~12 ms per 100,000 rows
            pl.when(pl.Series(missing[logs])).then(pl.lit("missing"))
            .otherwise(pl.lit("inherited")).alias("ts_flag"),
            pl.Series("line_no", t.row_line[logs] + first),
            *(pl.lit(v, pl.String).alias(c) for c, v in const.items()),
            *(pl.lit(None, dt).alias(c) for c, dt in (
                ("uptime_s", pl.Float64), ("rank", pl.Int32), ("code", pl.String),
                ("device", pl.String))))
        fastrows.merge_frame(p.events, marks, frame.select(EVENTS.names),
                             t.row_line[logs] + first)
    if bar.any():
        n = int(bar.sum())
        sel = t.frame.filter(pl.Series(bar))
        p.events.add_batch(progress_batch.make(
            row_ts[bar], missing[bar], np.where(missing[bar], 4, 3),
            np.full(n, -1, np.int32), sel.get_column("iteration").to_numpy(),
            sel.get_column("value").to_numpy(), t.row_line[bar] + first,
            {**const, "format": "tqdm", "kind": "progress_bar"}))


def _inherited(p: JobLogParser, lines: pl.Series, first: int, plan: prefilter.ChunkPlan,
               fast: np.ndarray, marks: fastrows.Marks, states: list[int | None],
               start: int | None) -> np.ndarray:
    """``_last_ts`` as the per-line path has it at each fast line (``NO_TS``: none; ``p``:
    a JobLogParser, or a TextParser for ``parsers.sigrows``):
    the state after the last line read per line before it, unless a stamped context line
    Python did not read comes after that one (then that line's stamp)."""
    parsed = np.asarray(marks.parsed, np.int64) - first
    ctx = np.setdiff1d(np.flatnonzero(plan.context), parsed) if plan.context is not None \
        else None
    state = np.array([NO_TS if s is None else s for s in states], np.int64)
    # a sentinel first entry: the state at the chunk's start, "read" at line -1
    parsed = np.concatenate(([-1], parsed))
    state = np.concatenate(([NO_TS if start is None else start], state))
    pi = np.searchsorted(parsed, fast) - 1  # >= 0: every fast line is after line -1
    out = state[pi].astype(np.int64)
    if ctx is None:
        return out
    ci = np.searchsorted(ctx, fast) - 1
    bound = parsed[pi]
    use = (ci >= 0) & (ctx[np.maximum(ci, 0)] > bound) if ctx.size else ci < -1
    memo: dict[int, int | None] = {}
    for j in np.flatnonzero(use).tolist():
        c, b = int(ci[j]), int(bound[j])
        if c not in memo:
            k, got = c, None
            while k >= 0 and ctx[k] > b and got is None:
                got = p.stamp_of(str(lines[int(ctx[k])]))
                k -= 1
            memo[c] = got
        got = memo[c]
        if got is not None:
            out[j] = got
    return out
