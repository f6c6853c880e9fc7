"""The job-log dialect's vectorised plan (parsers/prefilter.py): its noise and context
patterns as Rust-regex tests, and the plan of a chunk, which depends on the chunk alone (so
``JobLogParser.prepare`` computes it on the driver's helper thread, a chunk ahead).

Each line is tested by one of the two candidate prefilters, never both: NCCL's healthy
INFO/TRACE/CALL lines (the bulk of an ``NCCL_DEBUG=INFO`` log) by the claims-free one (their
noise claim must not make them candidates), every other line by the full one. A line that
matches neither is scanned to its end, so a second pass over the same line is the costliest
thing the plan could do (nccl-info, 8 MiB: 35 -> 23 ms)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from parsers import dedupe, prefilter
from parsers.joblog_fast import FastIterations
from parsers.message import global_prefilter
from parsers.sigrows import SigRows
from parsers.tqdm_parts import TqdmRows

# The job-output prefixes split_prefix peels, as one vectorised (Rust regex) test:
V_PREFIX = (r"(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d(?::?\d\d)?)?"
            r"(?: - (?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) - )?| )"
            r"| *\d{1,7}: |\[(?:default|rank)\d{1,7}\]: ?|\[\d+,\d+\]<std(?:out|err)>: ?"
            r"| *\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,9})?\] ?"
            r"|\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] \[[A-Z]+\] \[[^\]\s]+\] "
            r"|\[[A-Z]+\|[^\]\s]+\] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} >> "
            r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:"
            r"|\((?:[A-Za-z_][\w.]*(?: pid=(?:\d+|None))?|pid=\d+)(?:, ip=[\d.:a-fA-F]+)?\) )")
#: NCCL's debug INFO/TRACE/CALL lines after those prefixes (NcclMatcher: NOISE unless they
#: carry one of its signal anchors, which keep them candidates)
V_NCCL_INFO = (r"^(?:[a-z][a-z0-9.\-]*\d: )?(?:" + V_PREFIX + r")*"
               r"[^\s:\[\]]+(?::\d+:\d+)? (?:\[\d+\] )?(?:\d+\.\d+ )?"
               r"(?:\S+:\d+(?: \([^)\s]*\))? )?NCCL (?:INFO|TRACE|CALL)\b")
#: a DeepSpeed / HF logger envelope at level INFO or DEBUG (joblog: NOISE when unclaimed)
V_LEVEL_NOISE = (r"^(?:[a-z][a-z0-9.\-]*\d: )?(?:" + V_PREFIX + r")*"
                 r"(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] \[(?:INFO|DEBUG)\] \[[^\]\s]+\] "
                 r"|\[(?:INFO|DEBUG)\|[^\]\s]+\] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} >> )")
V_STAMPED = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d"
#: nothing left after the prefixes (a bare ``[default2]:``, an srun label alone): NOISE
V_EMPTY = r"^(?:[a-z][a-z0-9.\-]*\d: )?(?:" + V_PREFIX + r")*\s*$"


def plan(lines: pl.Series) -> prefilter.ChunkPlan:
    """Candidates: lines with an anchor of any recogniser, except NCCL's healthy INFO lines
    (NOISE by the vectorised rule unless another anchor is in them). The rest: NOISE if blank
    or an INFO/DEBUG DeepSpeed/HF logger line, else UNPARSED. Stamped lines are the context
    of unstamped ones."""
    pats: dict[str, prefilter.Pattern] = {"nccl": V_NCCL_INFO, "empty": V_EMPTY,
                                          "level": V_LEVEL_NOISE, "stamped": V_STAMPED}
    u = dedupe.unique_lines(lines)
    if u is not None:  # each prefilter on the distinct shapes it is for
        m = prefilter.masks(lines, pats, unique=u)
        cand = _key_candidates(lines, u, m["nccl"])
    else:
        m = prefilter.masks(lines, pats, unique=None)
        cand = _candidates(lines, m["nccl"])
    return prefilter.ChunkPlan(candidate=cand, noise=m["empty"] | m["nccl"] | m["level"],
                               context=m["stamped"], shapes=u)


def plan_except(lines: pl.Series, taken: np.ndarray,
                sub: prefilter.ChunkPlan | None = None) -> prefilter.ChunkPlan:
    """``plan`` of a chunk whose lines ``taken`` (sorted indices) a fast path presets: their
    candidate and noise are never read, so the masks run on the other lines only (a tqdm
    chunk: ~4% of its lines; 15.6 -> 2.4 ms per 8 MiB); the context (stamped lines, which
    are read before a candidate, and by ``_inherited`` anywhere) on every line. No shapes:
    the unparsed lines are grouped by digit keys instead, with the same result
    (``Forms.add_shapes``). ``sub``: ``plan`` of those other lines, if already made."""
    n = len(lines)
    keep = np.ones(n, bool)
    keep[taken] = False
    rest = np.flatnonzero(keep)
    if rest.size == n:
        return plan(lines)
    if sub is None:
        sub = plan(lines.gather(rest))
    return prefilter.ChunkPlan(candidate=prefilter.spread(sub.candidate, rest, n, False),
                               noise=prefilter.spread(sub.noise, rest, n, True),
                               context=prefilter.mask(lines, V_STAMPED))


def _key_candidates(lines: pl.Series, u: dedupe.Unique, nccl: np.ndarray) -> np.ndarray:
    """``_candidates`` evaluated on distinct shapes: the claims-free prefilter on those of
    NCCL INFO lines, the full one on the others, each on its own shapes only (both on every
    shape was ~3-4 ms of 8 MiB more, NCCL_DEBUG=INFO output or not). ``nccl``: per line."""
    on_key = np.zeros(len(u.keys), bool)
    on_key[u.codes] = nccl  # a digit-blind test: every line of a shape says the same
    cand = np.zeros(len(lines), bool)
    for keys, claims in ((on_key, False), (~on_key, True)):
        if not keys.any():
            continue
        idx, sub = u.subset(keys)
        part = lines if idx.size == len(lines) else lines.gather(idx)
        cand[idx] = prefilter.masks(part, {"c": global_prefilter(claims=claims)},
                                    unique=sub)["c"]
    return cand


def _candidates(lines: pl.Series, nccl: np.ndarray) -> np.ndarray:
    """The claims-free prefilter on NCCL INFO lines, the full one on the others."""
    if nccl.all():
        return np.asarray(global_prefilter(claims=False).mask_np(lines), bool)
    if not nccl.any():
        return np.asarray(global_prefilter().mask_np(lines), bool)
    cand = np.zeros(len(lines), bool)
    for sub, claims in ((nccl, False), (~nccl, True)):
        idx = np.flatnonzero(sub)
        cand[idx] = global_prefilter(claims=claims).mask_np(lines.gather(idx))
    return cand


@dataclass(frozen=True)
class Prepared:
    """What ``JobLogParser.prepare`` computes a chunk ahead: the fast path's iteration rows,
    the other lines' indices and their prefilter plan (None when the prefilter is off or the
    fast path found nothing)."""

    fast: FastIterations | None
    rest: np.ndarray | None = None
    plan: prefilter.ChunkPlan | None = None
    tqdm: TqdmRows | None = None  #: bar / loss-dict lines (chunks without iteration lines)
    #: the plan of the whole chunk (chunks without iteration lines; with tqdm lines, its
    #: masks only for the lines those leave: ``joblog_plan.plan_except``)
    whole: prefilter.ChunkPlan | None = None
    #: ``joblog_frame.fast_prefix`` of the iteration lines (ts, flag, rank, keep)
    prefix: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
    #: the plan of a chunk whose iteration lines all stand behind kubectl's stamp
    #: (``joblog_plan.plan_except`` of them, for ``joblog_preset.kube_chunk``)
    kube: prefilter.ChunkPlan | None = None
    #: progress lines a data signature recognises (``joblog_sigrows``; chunks without
    #: iteration or tqdm lines)
    sig: SigRows | None = None
