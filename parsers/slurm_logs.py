"""Slurm daemon logs: slurmctld (the controller) and slurmd/slurmstepd (one per node).

Both print ``[ISO stamp] message`` (see ``parsers.slurm_common`` for the envelopes). Message
wordings were checked against Slurm's source (src/slurmctld/job_mgr.c, job_scheduler.c,
node_mgr.c, ping_nodes.c, preempt.c, src/plugins/sched/backfill, src/slurmd/slurmstepd/req.c,
mgr.c, task/cgroup) and against a real Slurm 22.05.8 (sample_logs/real_formats/slurm/).

Decisions where reality is ambiguous:

* ``job_start``: ``code`` holds the NodeList expression (``n[1-2]``) and ``host`` stays null:
  a job start is about several nodes; expand ``code`` with parsers.hostlist when needed.
* Array tasks keep Slurm's ``JobId=3_1(3)`` user-facing id ``3_1`` (what sacct's JobID shows);
  the raw id in parentheses is dropped. slurmd/slurmstepd only know raw ids (``[3.0]``).
* ``_job_complete`` prints a status line and then ``done`` for the same job; both become
  ``job_end`` rows (code ``WEXITSTATUS 3`` / ``WTERMSIG 11`` / ``OOM failure`` /
  ``cancelled by interactive user`` / ``done``), ``value`` = the number when there is one.
* ``update_node: node X reason set to: R`` is remembered and becomes the ``code`` of the
  following ``state set to DOWN`` row of that node (the line itself counts as EVENT).
* slurmd ``step_start`` / ``step_end`` carry the step name (``batch``, ``extern``, ``0``) in
  ``code``; slurmd never prints the exit status on those lines. ``get_exit_code task N died by
  signal: S`` becomes ``task_exit`` (code ``signal S``, value S).
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any, ClassVar

import numpy as np
import polars as pl

from parsers import fastrows, hostlist, prefilter
from parsers.base import (
    EVENT,
    NOISE,
    NOT_PREPARED,
    SMALL_CHUNK,
    UNPARSED,
    Emit,
    FileContext,
    LineParser,
    Parser,
)
from parsers.message import Fallback, candidates_with_default_noise, peeled_fields
from parsers.slurm_common import (
    V_ENVELOPE,
    Envelope,
    looks_like_slurm_log,
    parse_envelope,
    strip_level,
)
from parsers.slurm_fast import Fast, ctld_fast, slurmd_fast
from parsers.slurm_messages import CtldMessages, SlurmdMessages
from parsers.timeutil import YearInference

_EMBEDDED = re.compile(r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")

_CTLD_WORDS = ("sched: Allocate", "_job_complete", "_slurm_rpc_", "slurmctld version",
               "Running as primary controller", "sched/backfill", "update_node:")
_SLURMD_WORDS = ("slurmd version", "Launching batch job", "launch task StepId", "done with job",
                 "slurmstepd", "oom-kill event", "get_exit_code")
_STEP_PREFIX = re.compile(r"\] \[\d+(?:_\d+)?\.\w+\] ")


def _score(head: str, path: str, own: str, own_words: tuple[str, ...],
           other_words: tuple[str, ...]) -> int:
    """Sniff score shared by both parsers: envelope, file name, content words."""
    if not looks_like_slurm_log(head):
        return 0
    name = PurePath(path).name.lower()
    score = 20
    if name.startswith(own) and not (own == "slurmd" and name.startswith("slurmdbd")):
        score += 50
    own_hits = sum(1 for w in own_words if w in head)
    other_hits = sum(1 for w in other_words if w in head)
    score += 15 * own_hits - 15 * other_hits
    return max(0, min(95, score))


class _SlurmLogParser(LineParser):
    """Common per-line flow: envelope, then ``_message`` (implemented by subclasses)."""

    #: a syslog line's host field names the node (slurmd), not the controller (slurmctld)
    syslog_host_is_node: ClassVar[bool] = False

    #: the dialect's own recogniser class (tried first; the message layer gets the rest)
    own_class: ClassVar[type] = object

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.years = YearInference(ctx.mtime, ctx.year)
        self.fallback = Fallback(ctx, skip=(self.own_class,))
        self._marks: fastrows.Marks | None = None  #: lines read per line (fast chunks)

    # -- the fast path of the bulk lines (parsers/slurm_fast.py) ---------------------------
    def _fast(self, lines: pl.Series) -> Fast | None:
        """The dialect's vectorised reading of its bulk lines (None: none)."""
        return None

    def _fast_chunk(self, lines: pl.Series) -> Fast | None:
        """Run in ``parse_chunk``, not a chunk ahead in ``prepare``: as fast on 2 cores (polars
        already uses both) and 25-40 MB less peak RSS on the slurm mix."""
        if len(lines) < SMALL_CHUNK or not prefilter.enabled():
            return None
        return self._fast(lines)

    def parse_chunk(self, lines: pl.Series, first_line_no: int,
                    prepared: Any = NOT_PREPARED) -> None:
        fast = self._fast_chunk(lines)
        plan = self.vector_plan(lines, np.flatnonzero(fast[0] < 0)) if fast is not None else None
        if fast is None or plan is None:
            super().parse_chunk(lines, first_line_no, None)
            return
        status, rows, idx = fast
        plan.candidate &= status < 0
        plan.preset = status
        self._marks = marks = fastrows.Marks(self.events)
        try:
            self.parse_planned(lines, first_line_no, plan)
        finally:
            self._marks = None
        if rows is not None:
            fastrows.merge_frame(self.events, marks,
                                 rows.with_columns(pl.col("line_no") + first_line_no),
                                 idx + first_line_no)

    def parse_line(self, text: str, line_no: int) -> int:
        if self._marks is not None:
            self._marks.mark(line_no)
        if not text.strip():
            return NOISE
        env = parse_envelope(text, self.ctx.tz, self.years)
        if env is None:
            r = self.fallback.raw(text, line_no, lambda p: self._emitter(
                Envelope(None, "missing", None, text), line_no, peeled_fields(p)))
            return UNPARSED if r is None else r
        i = env.message.find("[", 1)
        if i > 0 and _EMBEDDED.match(env.message, i):
            # two daemon threads wrote into one line (seen in real slurmd logs):
            # ``[ts] [5.0] get_e[ts] [3.0] get_exit_code task 0 died by signal: 9``
            tail = self.parse_line(env.message[i:], line_no)
            env.message = env.message[:i]
            head = self._safe_message(env, line_no)
            return EVENT if EVENT in (head, tail) else NOISE
        return self._safe_message(env, line_no)

    def finish(self) -> None:
        self.fallback.finish(self._emitter(Envelope(None, "missing", None, ""), 0, {}))

    # -- the prefiltered path (parsers/prefilter.py) ----------------------------------------
    def vector_plan(self, lines: pl.Series, rest: np.ndarray | None = None
                    ) -> prefilter.ChunkPlan | None:
        """Lines with a daemon envelope are NOISE unless an anchor makes them candidates;
        lines without one are UNPARSED unless a recogniser could claim them. ``rest``: the
        only lines whose candidate and noise matter (those a fast path left; the others are
        preset): the masks are computed for them alone (on a slurmctld chunk, ~0.3% of the
        lines), the years for every line."""
        if not prefilter.enabled():
            return None
        sub = lines if rest is None or rest.size == len(lines) else lines.gather(rest)
        noise = prefilter.mask(sub, V_ENVELOPE) | prefilter.blank(sub)
        cand = candidates_with_default_noise(sub, noise)
        if sub is not lines:
            assert rest is not None
            noise = prefilter.spread(noise, rest, len(lines), True)
            cand = prefilter.spread(cand, rest, len(lines), False)
        months = prefilter.months(lines, prefilter.SHORT_MONTH)
        return prefilter.ChunkPlan(
            candidate=cand, noise=noise,
            years=self.years.vector(months) if months.any() else None)

    def pin_year(self, year: int | None) -> None:
        self.years.pinned = year

    def is_open(self) -> bool:
        return self.fallback.is_open()

    def _safe_message(self, env: Envelope, line_no: int) -> int:
        try:
            return self._message(env, line_no)
        except (ValueError, hostlist.HostlistError):
            return UNPARSED

    def _message(self, env: Envelope, line_no: int) -> int:
        raise NotImplementedError

    def _own(self, own: Any, env: Envelope, line_no: int) -> int:
        """The dialect's recogniser first, then the rest of the message layer; NOISE if none
        claims the line (a well-formed daemon line without a signal)."""
        emit = self._emitter(env, line_no, {})
        r = own.match(env.message, line_no, emit)
        if r is None or r == NOISE:  # the rest of the layer, prefixes inside peeled first
            r2 = self.fallback.peeled(strip_level(env.message), line_no, lambda p: self._emitter(
                env, line_no, peeled_fields(p)))
            r = r2 if r2 is not None else r
        return NOISE if r is None else r

    def _emitter(self, env: Envelope, line_no: int, extra: dict[str, Any]) -> Emit:
        def emit(**fields: Any) -> None:
            f = {k: v for k, v in fields.items() if v is not None}
            for k in ("ts_fallback", "ts_fallback_flag"):
                f.pop(k, None)
            host = f.pop("host", None) or extra.get("host")
            if "host" in fields and fields["host"] == "":
                hf: dict[str, Any] = {"host": None, "host_from": "unknown"}
            else:
                if host is None and self.syslog_host_is_node:
                    host = env.host
                hf = self._host(host)
            row = {"ts": env.ts, "ts_flag": env.ts_flag, "message": env.message,
                   "line_no": line_no, **{k: v for k, v in extra.items() if k != "host"},
                   **hf, **f}
            self.events.add(**row)
        return emit

    def _host(self, host: str | None) -> dict[str, Any]:
        return self.host_fields(host)


class SlurmctldParser(_SlurmLogParser):
    """slurmctld log: job starts/ends/requeues/cancels/time limits/preemption, node state."""

    own_class: ClassVar[type] = CtldMessages

    name: ClassVar[str] = "slurmctld"
    description: ClassVar[str] = "Slurm controller log (slurmctld.log or its syslog lines)"

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.ctld = CtldMessages()

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        return _score(head, path, "slurmctld", _CTLD_WORDS, _SLURMD_WORDS)

    def _fast(self, lines: pl.Series) -> Fast | None:
        return ctld_fast(lines, self.ctx.tz, self.name, self.ctx.path)

    def _host(self, host: str | None) -> dict[str, Any]:
        # slurmctld lines are about nodes, never about the controller's own host
        return {"host": host, "host_from": "line"} if host else {"host": None,
                                                                 "host_from": "unknown"}

    def _message(self, env: Envelope, line_no: int) -> int:
        return self._own(self.ctld, env, line_no)


_NAME_HOST = re.compile(r"^slurmd[-_.](.+?)(?:\.log)?$")
_GENERIC_DIRS = {"log", "logs", "slurm", "var", "tmp", "slurmd", "output", "jobs"}


def slurmd_host(ctx: FileContext) -> str | None:
    """Host of a per-node slurmd log: ``slurmd-n1.log`` / ``slurmd.node017.log`` (the
    ``SlurmdLogFile=.../slurmd-%n.log`` convention), else the path's host hint, else the
    directory of a plain ``<host>/slurmd.log``."""
    p = PurePath(ctx.path)
    m = _NAME_HOST.match(p.name)
    if m and m.group(1).lower() != "log":
        return m.group(1)
    if ctx.host_hint:
        return ctx.host_hint
    parent = p.parent.name
    if p.name.startswith("slurmd") and parent and parent.lower() not in _GENERIC_DIRS:
        return parent
    return None


class SlurmdParser(_SlurmLogParser):
    """slurmd / slurmstepd log of one node: step launches and ends, cgroup OOM kills,
    the ``*** JOB n ON node CANCELLED AT ... DUE TO ... ***`` banners."""

    name: ClassVar[str] = "slurmd"
    syslog_host_is_node: ClassVar[bool] = True
    own_class: ClassVar[type] = SlurmdMessages
    description: ClassVar[str] = "Slurm node daemon log (slurmd-<node>.log, slurmstepd lines)"

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.node = slurmd_host(ctx)
        self.slurmd = SlurmdMessages()

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        score = _score(head, path, "slurmd", _SLURMD_WORDS, _CTLD_WORDS)
        if score and _STEP_PREFIX.search(head):
            score = min(95, score + 15)
        return score

    def _host(self, host: str | None) -> dict[str, Any]:
        if host:
            return {"host": host, "host_from": "line"}
        if self.node:
            return {"host": self.node, "host_from": "path"}
        return {"host": None, "host_from": "unknown"}

    def _message(self, env: Envelope, line_no: int) -> int:
        return self._own(self.slurmd, env, line_no)

    def _fast(self, lines: pl.Series) -> Fast | None:
        hf = self._host(None)
        return slurmd_fast(lines, self.ctx.tz, self.name, self.ctx.path, hf["host"],
                           hf["host_from"])


PARSERS: list[type[Parser]] = [SlurmctldParser, SlurmdParser]
