"""A training job's output (``slurm-1234.out``, ``kubectl logs`` of a worker, torchrun logs).

``JobLogParser`` strips launcher/logger prefixes (joblog_prefix.py), then offers each message
to the recognisers in order: Megatron-LM, DeepSpeed, HF Trainer, srun/slurmstepd, PyTorch
distributed (tracebacks, watchdog), NCCL. The first that answers decides the line (EVENT or
NOISE); a line nobody recognises is UNPARSED. Blank lines are NOISE, and so is an unrecognised
INFO/DEBUG message inside a DeepSpeed or HF logger envelope (the framework's own chatter);
WARNING/ERROR ones stay UNPARSED so they are seen.

Row defaults (fields a matcher passes win; a matcher passing None leaves the default):

* ts: the line's own stamp (a prefix, or Megatron's ``[...] datetime: ...``); else a stamp a
  matcher found inside the message (``ts_fallback``, e.g. NCCL's ``[%F %T]``); else the last
  timestamp seen earlier in the file (``inherited``); ``missing`` before any.
* host: the host a matcher read from the line (``host_from`` = line), else the path's host.
* job_id: from the file name (``slurm-1234.out``). rank: from ``srun --label`` or torchrun
  prefixes (``[defaultN]`` is torchrun's local rank -- the only rank such a line names).

Speed: ``parse_chunk`` reads Megatron iteration lines vectorised (joblog_fast.py) and only the
remaining lines go through Python, in order. The "last timestamp" state sees every line: a
remaining line inherits the latest stamp among all earlier lines, vectorised rows included,
and a vectorised row without a stamp inherits from all earlier lines, per-line ones included.

``\\r`` (tqdm redraws): such a line is split and every update judged; the line is EVENT if any
part is, UNPARSED if any non-progress-bar part is unrecognised, NOISE otherwise.
"""

from __future__ import annotations

import functools
from datetime import UTC
from typing import Any, ClassVar

import numpy as np
import polars as pl

from parsers import (
    fastrows,
    joblog_batch,
    joblog_frame,
    joblog_plan,
    joblog_preset,
    joblog_sniff,
    prefilter,
    sigrows,
)
from parsers.base import (
    EVENT,
    NOISE,
    NOT_PREPARED,
    SMALL_CHUNK,
    UNPARSED,
    Emit,
    FileContext,
    LineParser,
    Matcher,
)
from parsers.deepspeed import DeepSpeedMatcher
from parsers.hf_trainer import TQDM, HfTrainerMatcher
from parsers.joblog_fast import FastIterations, megatron_iterations
from parsers.joblog_frame import NO_TS
from parsers.joblog_plan import Prepared
from parsers.joblog_prefix import Prefix, split_prefix
from parsers.joblog_preset import strip_ansi as _strip_ansi
from parsers.megatron import MegatronMatcher
from parsers.message import Fallback, peeled_fields
from parsers.nccl import NcclMatcher
from parsers.sigrows import SigPrefix, sig_chunk, sig_rows
from parsers.slurm_step import SlurmStepMatcher
from parsers.torch_dist import TorchDistMatcher
from parsers.tqdm_parts import BAR_GLUED, tqdm_lines

_OWN = ("exact", "assumed_tz")
#: a job log's chunk of fewer than ``SMALL_CHUNK`` lines is still planned when it holds this
#: many bytes (a Lightning job's tqdm redraws are physical lines of ~100 KB: 8 MiB in ~80)
SMALL_CHUNK_BYTES = 256 << 10


def small_chunk(lines: pl.Series) -> bool:
    """Is the chunk read line by line (``SMALL_CHUNK``, ``SMALL_CHUNK_BYTES``)?"""
    return len(lines) < SMALL_CHUNK and int(lines.str.len_bytes().sum()) < SMALL_CHUNK_BYTES


class JobLogParser(LineParser):
    """Training job output: progress, checkpoints and failures (see module docstring)."""

    name: ClassVar[str] = "joblog"
    description: ClassVar[str] = (
        "training job output (slurm-N.out, kubectl logs): Megatron/DeepSpeed/HF progress and "
        "checkpoints, srun/slurmstepd verdicts, torch distributed and NCCL errors")

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.nccl = NcclMatcher(ctx)
        torch = TorchDistMatcher(ctx)
        self.matchers: list[Matcher] = [
            MegatronMatcher(), DeepSpeedMatcher(), HfTrainerMatcher(), SlurmStepMatcher(ctx.tz),
            torch, self.nccl,
        ]
        #: NCCL's own debug lines (``host:pid:tid [dev] NCCL INFO|WARN ...``) go to the NCCL
        #: matcher first: they are NCCL's (no other matcher claims one), and common in a job
        #: log with NCCL_DEBUG=INFO, where the other matchers spent ~10 us a line saying no
        self._nccl_first: list[Matcher] = [self.nccl, *self.matchers[:-1]]
        self.fallback = Fallback(ctx, skip=(MegatronMatcher, DeepSpeedMatcher,
                                            HfTrainerMatcher, SlurmStepMatcher,
                                            TorchDistMatcher, NcclMatcher))
        # a year-less stamp (c10, glog) takes the year of the file's latest full stamp
        torch.years.ref = self.fallback.years.ref = lambda: self._last_ts
        self._pre = Prefix()
        hf = self.host_fields(None)
        self._path_host, self._path_host_from = hf["host"], hf["host_from"]
        self._last_ts: int | None = None  #: latest timestamp seen (file order)
        self._last_line = 0  #: line of that timestamp
        self._own: list[tuple[int, int]] = []  #: (line, ts) of stamped per-line lines (chunk)
        self._ts: int | None = None  #: current line's timestamp (own or inherited)
        self._flag = "missing"
        self._rank: int | None = None
        self._line = 0
        self._msg = ""
        self._execution_ended = False
        self._emitted = 0
        self._emitted_ts: int | None = None
        self._marks: fastrows.Marks | None = None  #: per-line lines of a tqdm fast chunk
        self._states: list[int | None] = []  #: ``_last_ts`` after each of them

    # -- sniffing ---------------------------------------------------------------------------
    MAX_SCORE: ClassVar[int] = 95

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        """Job output: markers of the training frameworks / launchers in the first bytes
        (``joblog_sniff``)."""
        return joblog_sniff.score(head, FileContext.for_path(path, UTC).job_hint, path)

    # -- emitting ---------------------------------------------------------------------------
    def emit(self, **fields: Any) -> None:
        """One event row with the defaults of the current line or ``pin``'s (module doc)."""
        pin = fields.pop("pin", None)
        ts, flag, rank, line, msg = pin if pin is not None else (
            self._ts, self._flag, self._rank, self._line, self._msg)
        f = {k: v for k, v in fields.items() if v is not None}
        fb = f.pop("ts_fallback", None)
        fbf = f.pop("ts_fallback_flag", None)
        if "ts" in f:
            f.setdefault("ts_flag", "assumed_tz")
            if f["ts_flag"] in _OWN:
                self._emitted_ts = f["ts"]
        elif flag not in _OWN and fb is not None:
            f["ts"], f["ts_flag"] = fb, fbf or "assumed_tz"
        else:
            f["ts"], f["ts_flag"] = ts, flag
        if f.get("host") == "":  # a row about no particular host (a Slurm job start)
            f["host"], f["host_from"] = None, "unknown"
        elif "host" in f:
            f.setdefault("host_from", "line")
        else:
            f["host"], f["host_from"] = self._path_host, self._path_host_from
        if rank is not None:
            f.setdefault("rank", rank)
        if self.ctx.job_hint is not None:
            f.setdefault("job_id", self.ctx.job_hint)
        # progress rows are the bulk of a job log and their fields are extracted: no copy of
        # the text (file/line_no locate it), which keeps events.parquet small (an HF job's
        # 6.7 M tqdm redraws: 65 -> 10 MB)
        if f.get("kind") in ("iteration", "progress_bar"):
            f.pop("message", None)
        else:
            f.setdefault("message", msg)
        f.setdefault("line_no", line)
        self.events.add(**f)
        # a block's row flushed by this line (a CUDA error's tail ended by it) is not this
        # line's: the line still goes to the other recognisers
        if f["line_no"] == self._line:
            self._emitted += 1
        if f.get("kind") == "slurm_job_cancelled":
            self._execution_ended = True

    def pinned(self) -> Emit:
        """``emit`` with this line's defaults: torch's rows come out at a later line."""
        pin = (self._ts, self._flag, self._rank, self._line, self._msg)
        return functools.partial(self.emit, pin=pin)

    # -- per line ---------------------------------------------------------------------------
    def parse_line(self, text: str, line_no: int) -> int:
        """Status of one line (prefixes stripped, matchers in order; ``\\r`` split)."""
        if self._marks is None:
            return self._parse_line(text, line_no)
        return fastrows.parse_marked(self, self._parse_line, text, line_no)

    def _parse_line(self, text: str, line_no: int) -> int:
        if "%|" in text and BAR_GLUED.search(text) is not None:
            # a log record printed right behind a tqdm bar with no newline between (both on
            # stderr), in a line of redraws or not: parts, as if a carriage return ended the bar
            text = BAR_GLUED.sub("\\g<0>\r", text)
        if "\r" not in text:
            return self._one(text, line_no)
        best = NOISE
        for part in text.split("\r"):
            if not part.strip():
                continue
            st = self._one(_strip_ansi(part), line_no)
            if st == EVENT:
                best = EVENT
            elif st == UNPARSED and best != EVENT and not TQDM.match(part):
                best = UNPARSED
        return best

    def _one(self, text: str, line_no: int) -> int:
        p = split_prefix(text, self.ctx.tz, self._pre)
        self._line, self._msg, self._rank = line_no, p.msg, p.rank
        if p.ts is not None and p.flag is not None:
            self._ts, self._flag = p.ts, p.flag
            self._last_ts, self._last_line = p.ts, line_no
            self._own.append((line_no, p.ts))
        elif self._last_ts is not None:
            self._ts, self._flag = self._last_ts, "inherited"
        else:
            self._ts, self._flag = None, "missing"
        msg = p.msg
        if not msg or msg.isspace():
            return NOISE
        self._emitted = 0
        self._emitted_ts = None
        status: int | None = None
        # the torch matcher keys traceback state by rank: interleaved tracebacks of several
        # ranks stay apart, so it gets the rank prefix back
        ranked = f"[rank{p.rank}]:{msg}" if p.rank is not None else msg
        matchers = self._nccl_first if "NCCL " in msg and self.nccl.owns(msg) \
            else self.matchers
        for m in matchers:
            torch = isinstance(m, TorchDistMatcher)
            status = m.match(ranked if torch else msg, line_no,
                             self.pinned() if torch else self.emit)
            if status is not None:
                break
        if self._emitted_ts is not None and p.ts is None:
            self._last_ts, self._last_line = self._emitted_ts, line_no
            self._own.append((line_no, self._emitted_ts))
        if self._execution_ended:
            # Slurm's "*** JOB N ... CANCELLED AT t ***" ends an execution; in an output file
            # appended across requeues the unstamped lines after it may belong to the next
            # execution, so they get no inherited time ('missing') until a new stamp
            self._execution_ended = False
            self._last_ts, self._last_line = None, line_no
        if status != EVENT and not self._emitted:
            # what the job-output matchers leave (or call noise): every other recogniser,
            # after the prefix layer has peeled wrappers this dialect does not know (dmesg,
            # syslog, Ray, glog)
            other = self.fallback.peeled(msg, line_no, self._peeled_emit)
            if other is not None and (status is None or other == EVENT):
                status = other
        if status is None:
            if self._emitted:
                return EVENT
            return NOISE if p.level in ("INFO", "DEBUG") else UNPARSED
        return EVENT if self._emitted else status

    def finish(self) -> None:
        """End of file: let multi-line matchers flush their open blocks."""
        for m in self.matchers:
            m.finish(self.emit)
        self.fallback.finish(self.emit)

    def _peeled_emit(self, p: Any) -> Emit:
        """``emit`` with what the prefix layer read (its stamp, host, uptime) on top."""
        extra = peeled_fields(p)

        def emit(**fields: Any) -> None:
            self.emit(**{**extra, **{k: v for k, v in fields.items() if v is not None}})

        return emit

    # -- per chunk --------------------------------------------------------------------------
    def prepare(self, lines: pl.Series) -> Prepared:
        """On the helper thread (parsers/driver.py), a chunk ahead of ``parse_chunk``: the
        chunk's Megatron iteration lines, read vectorised, and the prefilter's plan for the
        other lines (only those: no regex pass over the ~99% the fast path takes)."""
        return self.prepare_with(lines, megatron_iterations(lines) if len(lines) > 64 else None)

    def prepare_with(self, lines: pl.Series, fast: FastIterations | None,
                     sub: prefilter.ChunkPlan | None = None) -> Prepared:
        """``prepare`` given the chunk's ``megatron_iterations`` (None for a chunk of 64 lines
        or fewer) and, if known, ``joblog_plan.plan`` of the lines those leave."""
        if not prefilter.enabled():
            return Prepared(fast)
        if fast is None or len(fast.rows) == 0:
            if small_chunk(lines):
                return Prepared(fast)
            tqdm = tqdm_lines(lines, self)
            if tqdm is not None:
                return Prepared(fast, tqdm=tqdm,
                                whole=joblog_plan.plan_except(lines, tqdm.lines))
            whole = joblog_plan.plan(lines)
            return Prepared(fast, whole=whole, sig=sig_rows(self, lines, whole))
        taken = np.zeros(len(lines), bool)
        taken[fast.rows] = True
        rest = np.flatnonzero(~taken)
        # not self.vector_plan: this runs on the helper thread, beside parse_chunk's premasks
        if sub is None:
            sub = joblog_plan.plan(lines.gather(rest))
        # the prefixes too (ctx.tz is all they read): kubectl's stamps cost the parsing
        # thread ~15 ms per 8 MiB, and the plan of a chunk they all stand before ~4 ms
        prefix = joblog_frame.fast_prefix(self.ctx.tz, fast)
        kube = None
        if not prefix[3].any() and (prefix[1] == 2).all() and len(lines) >= SMALL_CHUNK:
            kube = joblog_plan.plan_except(lines, fast.rows, sub)
        return Prepared(fast, rest, sub, prefix=prefix, kube=kube)

    def prepare_run(self, parsers: list[Any], parts: list[pl.Series]) -> list[Prepared]:
        """``prepare`` of several small job logs, their costly passes made once for all
        (``parsers.batch``; ``joblog_batch.prepare_run``)."""
        return joblog_batch.prepare_run(parsers, parts)

    def parse_chunk(self, lines: pl.Series, first_line_no: int,
                    prepared: Any = NOT_PREPARED) -> None:
        """Megatron iteration lines vectorised; of the others, the candidates of the prefilter
        (parsers/prefilter.py) per line, in order, the rest by the vectorised rule."""
        self._own = []
        prep: Prepared = self.prepare(lines) if prepared is NOT_PREPARED else prepared
        fast = prep.fast
        if fast is None or len(fast.rows) == 0:
            if prep.tqdm is not None:
                joblog_preset.tqdm_chunk(self, lines, first_line_no, prep.tqdm, prep.whole)
            elif prep.sig is not None and prep.whole is not None:
                sig_chunk(self, lines, first_line_no, prep.sig, prep.whole)
            else:
                super().parse_chunk(lines, first_line_no,
                                    NOT_PREPARED if prep.whole is None else prep.whole)
            return
        fast_ts, fast_flag, fast_rank, keep = prep.prefix if prep.prefix is not None \
            else joblog_frame.fast_prefix(self.ctx.tz, fast)
        if not keep.any():  # e.g. every line with its own kubectl stamp
            kube = fast_flag == 2
            if kube.any() and prefilter.enabled() and len(lines) >= SMALL_CHUNK:
                # the plan of the lines the kubectl rows leave: ``prepare``'s, when those
                # rows are all of the fast path's
                plan = prep.kube if prep.kube is not None else joblog_plan.plan_except(
                    lines, fast.rows[kube], prep.plan if kube.all() else None)
                joblog_preset.kube_chunk(self, lines, first_line_no, fast, kube, fast_ts, plan)
            else:
                super().parse_chunk(lines, first_line_no)
            return
        rows = fast.rows[keep]
        fast_ts, fast_flag, fast_rank = fast_ts[keep], fast_flag[keep], fast_rank[keep]
        start_state = (self._last_line, self._last_ts)
        if prep.plan is not None:
            self._planned_rest(lines, first_line_no, rows, fast_ts, prep)
        else:
            self._every_rest(lines, first_line_no, rows, fast_ts)
        joblog_frame.add_fast_frame(self, fast, keep, rows, fast_ts, fast_flag, fast_rank,
                                    first_line_no, start_state)

    def _planned_rest(self, lines: pl.Series, first: int, rows: np.ndarray,
                      fast_ts: np.ndarray, prep: Prepared) -> None:
        """The lines the fast path left, through the prefilter; stamped lines are context,
        and all of them are read when a fast row has no stamp of its own to inherit one."""
        status = np.full(len(lines), -1, np.int8)
        status[rows] = EVENT
        plan = self._rest_plan(lines, prep, rows, fast_ts)
        self.parse_planned(lines, first, plan, status)
        if (fast_ts == NO_TS).any() and plan.context is not None:
            rest_ctx = np.flatnonzero(plan.context & (status < 0))
            for i, text in zip(rest_ctx.tolist(), lines.gather(rest_ctx).to_list(),
                               strict=True):
                self.set_context(text, i + first)

    def _rest_plan(self, lines: pl.Series, prep: Prepared, rows: np.ndarray,
                   fast_ts: np.ndarray) -> prefilter.ChunkPlan:
        """The prepared plan of the lines the fast path left, laid out over the whole chunk,
        plus the plan of fast rows whose prefix the fast path gave back (``keep``). Context:
        the stamped lines among those, and the fast rows with a stamp of their own (a fast
        row's stamp is what ``set_context`` would read from it)."""
        assert prep.plan is not None and prep.rest is not None
        n = len(lines)
        cand, noise, ctx = np.zeros(n, bool), np.zeros(n, bool), np.zeros(n, bool)
        parts = [(prep.rest, prep.plan)]
        if prep.fast is not None and rows.size < len(prep.fast.rows):
            back = np.setdiff1d(prep.fast.rows, rows)
            sub = self.vector_plan(lines.gather(back))
            assert sub is not None
            parts.append((back, sub))
        for idx, p in parts:
            cand[idx], noise[idx] = p.candidate, p.noise
            if p.context is not None:
                ctx[idx] = p.context
        ctx[rows[fast_ts != NO_TS]] = True
        return prefilter.ChunkPlan(candidate=cand, noise=noise, context=ctx)

    def _every_rest(self, lines: pl.Series, first_line_no: int, rows: np.ndarray,
                    fast_ts: np.ndarray) -> None:
        """The lines the fast path left, every one per line (the prefilter switched off)."""
        n = len(lines)
        taken = np.zeros(n, bool)
        taken[rows] = True
        rest = np.flatnonzero(~taken)
        # latest stamped vectorised row before each remaining row (file order)
        stamped = rows[fast_ts != NO_TS]
        stamped_ts = fast_ts[fast_ts != NO_TS]
        if stamped.size:
            k = np.searchsorted(stamped, rest) - 1
            prev_line = np.where(k >= 0, stamped[np.maximum(k, 0)] + first_line_no, -1)
            prev_ts = np.where(k >= 0, stamped_ts[np.maximum(k, 0)], 0)
        else:  # no vectorised row has a stamp of its own (Megatron before timestamps)
            prev_line = np.full(rest.size, -1, np.int64)
            prev_ts = np.zeros(rest.size, np.int64)
        note = self.acct.note
        texts = lines.gather(rest).to_list() if rest.size else []
        for j, text in enumerate(texts):
            pl_ = int(prev_line[j])
            if pl_ > self._last_line:
                self._last_line, self._last_ts = pl_, int(prev_ts[j])
            i = int(rest[j]) + first_line_no
            note(self.parse_line(text, i), i, text)

    # -- the prefiltered path (parsers/prefilter.py) ----------------------------------------
    def vector_plan(self, lines: pl.Series) -> prefilter.ChunkPlan | None:
        """``joblog_plan.plan`` (the one ``prepare`` made a chunk ahead, if any)."""
        if not prefilter.enabled():
            return None
        pre = self.premasks
        return pre if isinstance(pre, prefilter.ChunkPlan) else joblog_plan.plan(lines)

    def set_context(self, text: str, line_no: int) -> bool:
        """The stamp a line Python does not otherwise read leaves for later lines."""
        found = False
        for part in text.split("\r") if "\r" in text else (text,):
            p = split_prefix(_strip_ansi(part), self.ctx.tz, self._pre)
            if p.ts is not None and p.flag is not None:
                self._last_ts, self._last_line = p.ts, line_no
                self._own.append((line_no, p.ts))
                found = True
        return found

    def is_open(self) -> bool:
        return any(m.is_open() for m in self.matchers) or self.fallback.is_open()

    # -- for parsers.sigrows ----------------------------------------------------------------
    def stamp_of(self, text: str) -> int | None:
        """What ``set_context`` would set ``_last_ts`` to (None: the line has no stamp)."""
        return joblog_preset.stamp_of(self, text)

    def sig_prefix(self, line: str) -> SigPrefix | None:
        return sigrows.joblog_prefix(self, line)

    def sig_constants(self) -> dict[str, str | None]:
        return {"host": self._path_host, "host_from": self._path_host_from,
                "job_id": self.ctx.job_hint}


PARSERS = [JobLogParser]
