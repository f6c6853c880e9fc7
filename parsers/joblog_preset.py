"""Job-log chunks whose regular lines are read vectorised and preset (``ChunkPlan.preset``).

Two families, each built as the rows the per-line path gives them: the bulk (iteration rows,
bar redraws) as a compact PROGRESS batch after the chunk's per-line rows (as
``joblog_frame`` hands over Megatron's other iteration rows), the loss dicts merged into the
per-line rows in order (parsers/fastrows.py):

* Megatron iteration lines behind ``kubectl logs --timestamps`` stamps (``kube_chunk``; the
  vectorised Megatron fields of parsers/joblog_fast.py with the RFC3339Nano stamp read by
  polars; every prefix differs, so ``JobLogParser._fast_prefix``'s table of prefixes gives up);
* tqdm bars redrawn with ``\\r`` and HF Trainer loss dicts (``tqdm_chunk``), found by
  ``parsers.tqdm_parts``; their stamps (inherited from the lines before) are filled in once
  the chunk's per-line lines have been read.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from parsers import fastrows, prefilter, progress_batch
from parsers.base import EVENT
from parsers.joblog_frame import NO_TS
from parsers.joblog_prefix import Prefix, split_prefix
from parsers.schema import EVENTS
from parsers.tqdm_parts import TqdmRows

#: a ``parsers.joblog.JobLogParser`` (this module works on its state; joblog imports it)
JobLogParser = Any


def strip_ansi(part: str) -> str:
    """Drop the cursor-movement escapes tqdm puts before a redraw (ESC[A, ESC[K)."""
    while part.startswith(("\x1b[A", "\x1b[K")):
        part = part[3:]
    return part


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
                ("uptime_s", pl.Float64), ("rank", pl.Int32), ("device", pl.String))))
        fastrows.merge_frame(p.events, marks, frame.select(EVENTS.names),
                             t.row_line[logs] + first)
    if bar.any():
        n = int(bar.sum())
        sel = t.frame.filter(pl.Series(bar))
        p.events.add_batch(progress_batch.make(
            row_ts[bar], missing[bar], np.where(missing[bar], 4, 3),
            np.full(n, -1, np.int32), sel.get_column("iteration").to_numpy(),
            sel.get_column("value").to_numpy(), t.row_line[bar] + first,
            {**const, "format": "tqdm", "kind": "progress_bar"},
            code=sel.get_column("code").to_arrow() if sel.get_column("code").null_count() < n
            else None))


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
