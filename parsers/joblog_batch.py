"""``JobLogParser.prepare`` of a run of small job logs (``parsers.batch``), made once for all.

A campaign leaves one output file per Slurm job (``slurm-%j.out``), most of them small: the
simulated Llama-3 campaign's 379 job logs are 67 KB on average. ``prepare`` of one costs
~3.5 ms whatever its size -- ``megatron_iterations`` ~1.4 ms and the plan of the lines it
leaves ~2.3 ms, the fixed costs of their polars queries -- 1.3-1.5 s of the campaign's
~6 s ingest (the plan of all 379 files' rest at once: 20-60 ms). Both passes read each
line on its own, so they run here once over the run's lines (the files' buffers copied
into one, ``joblog_fast._raw``) and are cut into each file's share: the values ``prepare``
of that file alone returns (``test_batch_joblog`` compares them), but for the plan's
``shapes``, which the fast path's plan never reads (``_rest_plan``).

Each file then takes ``prepare``'s own branches with its share (``prepare_with``): a file
of 64 lines or fewer gets no fast rows, one without any goes its own way (tqdm, whole-chunk
plan), and one behind kubectl's stamps gets its ``plan_except``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from parsers import joblog_plan, prefilter
from parsers.joblog_fast import FastIterations, megatron_iterations

MIN_FAST_LINES = 65  #: ``prepare`` reads iteration lines vectorised in a chunk this long


def prepare_run(parsers: list[Any], parts: list[pl.Series]) -> list[Any]:
    """Each file's ``prepare`` (``parsers[k]``, a ``JobLogParser``, of the lines ``parts[k]``)."""
    sizes = [len(p) for p in parts]
    ends = np.cumsum(sizes)
    both = pl.concat(parts) if len(parts) > 1 else parts[0]
    found = megatron_iterations(both) if max(sizes) >= MIN_FAST_LINES else None
    fasts: list[FastIterations | None] = []
    for part, n, end in zip(parts, sizes, ends.tolist(), strict=True):
        if n < MIN_FAST_LINES:
            fasts.append(None)
        else:
            share = None if found is None else found.lines_between(end - n, end)
            # none found, or not one string_view array: the file as ``prepare`` reads it
            # (which tells a file without candidates, None, from one whose candidates all
            # failed to parse, no rows)
            fasts.append(share if share is not None and len(share.rows)
                         else megatron_iterations(part))
    subs = _rest_plans(parts, fasts) if prefilter.enabled() else [None] * len(parts)
    return [p.prepare_with(lines, fast, sub) for p, lines, fast, sub
            in zip(parsers, parts, fasts, subs, strict=True)]


def _rest_plans(parts: list[pl.Series], fasts: list[FastIterations | None]
                ) -> list[prefilter.ChunkPlan | None]:
    """``joblog_plan.plan`` of the lines each file's fast rows leave (None for a file
    without fast rows: ``prepare`` plans it otherwise), made in one pass."""
    rests: list[np.ndarray | None] = []
    for lines, fast in zip(parts, fasts, strict=True):
        if fast is None or len(fast.rows) == 0:
            rests.append(None)
            continue
        taken = np.zeros(len(lines), bool)
        taken[fast.rows] = True
        rests.append(np.flatnonzero(~taken))
    picked = [lines.gather(r) for lines, r in zip(parts, rests, strict=True) if r is not None]
    if not picked:
        return [None] * len(parts)
    plan = joblog_plan.plan(pl.concat(picked) if len(picked) > 1 else picked[0])
    out: list[prefilter.ChunkPlan | None] = []
    at = 0
    for r in rests:
        if r is None:
            out.append(None)
            continue
        cut = slice(at, at + r.size)
        at += r.size
        out.append(prefilter.ChunkPlan(
            candidate=plan.candidate[cut].copy(), noise=plan.noise[cut].copy(),
            context=None if plan.context is None else plan.context[cut].copy()))
    return out
