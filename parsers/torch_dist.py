"""PyTorch distributed lines inside a job's output: ``TorchDistMatcher``.

Line shapes (pytorch/pytorch; cited per pattern in the tests):

* c10 log prefixes before ProcessGroupNCCL / c10d messages: ``[E ProcessGroupNCCL.cpp:828] ``
  (<= 2.2), ``[rank3]:[E ProcessGroupNCCL.cpp:563] `` (2.2/2.3), ``[rank0]:[E1218
  20:27:21.426415540 ProcessGroupNCCL.cpp:629] `` (2.4+), glog builds ``E1029 12:00:00.123456
  1234 torch/csrc/...:616] ``; torch's Python logging (torchrun agent) ``W0409 07:28:49.530000
  1359 torch/distributed/elastic/multiprocessing/api.py:897] `` (2.4+),
  ``[2024-07-25 06:36:18,293] torch.distributed.elastic.multiprocessing.api: [WARNING] ``
  (2.1/2.2), ``WARNING:torch.distributed.elastic.multiprocessing.api:`` (<= 2.0).
* ``[rankN]:`` is the *global* rank (torch sets it from the default group); the ``[Rank N]`` /
  ``[PG 1 Rank N]`` inside a message is the rank *within that process group*, used only when
  there is no ``[rankN]:`` prefix and the group is the default one (no PG, PG 0, default_pg).

Kinds: ``nccl_timeout`` (watchdog collective timeout: code = OpType, value = Timeout(ms)/1000;
watchdog heartbeat hang: code ``watchdog_hang``, value = seconds; ``Timeout at NCCL work: N``
without a preceding watchdog line: code null), ``nccl_error``, ``cuda_error``, ``cuda_oom``,
``nan_loss``, ``rendezvous_error`` (see ``torch_errors``), ``python_exception`` (traceback
final line, or a C++ ``what():`` nothing else recognises: code = the C++ type),
``elastic_child_failed`` (see ``torch_blocks``), ``elastic_worker_failed`` (agent ``failed
(exitcode: N) local_rank: L``: code = exit code, device ``local_rank=L`` -- a local rank, never
put in ``rank``), ``elastic_signal`` (agent ``Received 15 death signal``: code = signal).

Decisions: C++ ``frame #N`` lines and CUDA advisory lines are NOISE (the line they follow
carries the signal). The watchdog's consequence lines (``Some NCCL operations have failed or
timed out``, ``To avoid data inconsistency, ...``, ``Exception (either an error or timeout)
detected by watchdog``) are ``nccl_timeout`` with code ``watchdog_abort`` (ranked below a real
timeout: they also follow NCCL errors); torchrun's ``Sending process N closing signal SIGTERM`` is
``elastic_teardown``; c10d TCPStore socket failures are ``rendezvous_error``. Every signal
line gets its row, repeats and ``what():`` echoes included: a paste of any one of them is
recognised, and the root cause is unchanged (earliest among equals). Month-day stamps in the
prefixes are passed as ``ts_fallback`` (year inferred) for the job-log parser to use only if its
prefix has no time.
"""

from __future__ import annotations

import re
from datetime import UTC
from typing import Any, ClassVar

from parsers.base import EVENT, NOISE, Emit, FileContext
from parsers.timeutil import TimeError, YearInference, local_to_us, parse_iso
from parsers.torch_blocks import ElasticTracker, TracebackTracker, emit_rows
from parsers.torch_errors import RDZV, classify_error

_RANK_PREFIX = re.compile(r"^\[rank(\d+)\]:\s?")
#: c10/util/Logging.cpp prints the date as (month + 1) * 100 + day: [E424 ...] in April
_C10 = re.compile(r"\[([FEWIV])(?:(\d\d?)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+))?(?: \d+)? "
                  r"[^\]\s]+:\d+\] ")
_GLOG = re.compile(r"^([FEWIV])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+)\s+\d+ \S+:\d+\] ")
_PYLOG_TS = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+)\] ")
_PG_RANK = re.compile(r"\[(?:PG (?P<pg>(?:ID )?\d+)(?: PG GUID \d+)? ?(?:\((?P<name>[^)]*)\))? )?"
                      r"Rank (?P<rank>\d+)\]")
_WATCHDOG = re.compile(
    r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>\d+), "
    r"OpType=(?P<op>\w+)(?:, NumelIn=\d+, NumelOut=\d+)?, Timeout\(ms\)=(?P<tmo>\d+)\)(?: "
    r"ran for (?P<ran>\d+) milliseconds)?")
_STUCK = re.compile(r"watchdog got stuck for (\d+) seconds")
_TIMEOUT_AT = re.compile(r"Timeout at NCCL work: (\d+)")
_WORKER_FAILED = re.compile(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: (\d+)\)")
_DEATH = re.compile(r"Received (\d+) death signal, shutting down workers")
_TERMINATE = re.compile(r"terminate called after throwing an instance of '([^']+)'")
_NOISE_MARKS = (
    "CUDA kernel errors might be asynchronously",
    "CUDA_LAUNCH_BLOCKING=1", "TORCH_USE_CUDA_DSA", "Exception raised from ",
    "torch.distributed.run", "torch/distributed/run.py",
    "Setting OMP_NUM_THREADS environment variable", "Dumping nccl trace",
    "ProcessGroupNCCL preparing to dump debug info",
)
#: the watchdog's own consequence lines (ProcessGroupNCCL.cpp, all versions): the watchdog
#: saw an error or a timeout and takes the process down -> nccl_timeout, code watchdog_abort
_ABORT_MARKS = (
    "Some NCCL operations have failed or timed out", "To avoid data inconsistency",
    "detected by watchdog at work", "failure detected by watchdog",
    "Terminating the process after attempting to dump debug info",
)
#: torchrun's agent stopping the other workers after one failed (elastic/multiprocessing/api.py)
_TEARDOWN = re.compile(r"Sending process (\d+) closing signal (SIG\w+)")
#: c10d TCPStore socket failures (torch/csrc/distributed/c10d/socket.cpp)
_C10D_SOCKET = re.compile(
    r"The (client|server) socket (?:has failed to (connect|bind|listen)|has timed out)"
    r"[^(]*(?:\(errno: (\d+) - ([^)]*)\))?")
#: retries that are no failure: IPv6 not available (97), the localhost alias (99)
_BENIGN_ERRNO = ("errno: 97 -", "errno: 99 -")
_DUMP_SIGNAL = "Received a dump signal due to a collective timeout"
_KEYWORDS = ("atchdog", "NCCL", "CUDA", "exitcode", "signal", "terminate", "what():", "Error",
             "socket", "frame #", "torch", "NaN", "Exception", "rror", "data inconsistency",
             "Terminating the process")
_FRAME_CPP = re.compile(r"^frame #\d+: ")
#: what ``_single`` (and ``classify_error``) can claim in a line whose only keywords are
#: ``rror``, ``Error``, ``socket``, ``signal`` or ``torch``: every other rule tests a text
#: holding another keyword, which makes the line a candidate by itself (the only rules that
#: test for ``torch`` are the torchrun noise marks, which are here). The prefilter lets a
#: line holding only these in if it matches one of them (``TorchDistMatcher.CHECKED``,
#: parsers/relax.py): sshd's ``error: Received disconnect``, containerd's ``level=error``,
#: the kernel's ``initializing netlink socket``, torch's own ``UserWarning`` lines (a path
#: ``.../site-packages/torch/...``: ~60 us each in Python) stay out of Python
_KEYWORD_ONLY = (
    RDZV.pattern, _C10.pattern, _GLOG.pattern, "Heartbeat monitor timed out",
    "Timed out initializing process group in store based barrier",
    *(re.escape(m) for m in (*_NOISE_MARKS, *_ABORT_MARKS, _DUMP_SIGNAL)),
    _C10D_SOCKET.pattern, "server socket has failed to listen", _TEARDOWN.pattern,
    _DEATH.pattern)

#: the keywords whose lines must also match one of ``_KEYWORD_ONLY``
_CHECKED_KEYWORDS = ("rror", "Error", "socket", "signal", "torch")


class TorchDistMatcher:
    """Recognises torch.distributed / c10d / elastic lines and Python tracebacks."""

    #: every single line it claims contains one of its keywords (``_KEYWORDS``); tracebacks and
    #: ChildFailedError reports start with one and hold the block open (``is_open``)
    SIGNAL: ClassVar[tuple[str, ...]] = (
        *(k for k in _KEYWORDS if k not in ("NCCL", *_CHECKED_KEYWORDS)),
        "Traceback (most recent call last)",
        "ChildFailedError", "NCCL error", "NCCL communicator", "Some NCCL operations",
        "ProcessGroupNCCL",
        "Timeout at NCCL work", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
        "ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress",
        "ncclTimeout")
    #: c10 / glog prefixed lines it calls noise: those with the keyword "NCCL" (left out of
    #: SIGNAL so NCCL's INFO flood stays out of Python) but no known error. Without one of the
    #: keywords ``_single`` returns None, so a glog line without "NCCL" (kubelet's, say) need
    #: not be a candidate: its other keywords are in SIGNAL.
    #: keywords whose lines must also match one of their patterns (see ``_ERROR_ONLY``)
    CHECKED: ClassVar[dict[str, tuple[str, ...]]] = dict.fromkeys(
        _CHECKED_KEYWORDS, _KEYWORD_ONLY)
    SIGNAL_RE: ClassVar[tuple[str, ...]] = (
        r"\[[FEWIV](?:\d{3,4} \d\d:\d\d:\d\d\.\d+)?(?: \d+)? [^\]\s]+:\d+\] .*NCCL",
        r"\[[FEWIV](?:\d{3,4} \d\d:\d\d:\d\d\.\d+)?(?: \d+)? [^\]\s]*NCCL[^\]\s]*:\d+\] ",
        r"(?:^|[\s:\]])[FEWIV]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+:\d+\] .*NCCL",
        r"(?:^|[\s:\]])[FEWIV]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S*NCCL\S*:\d+\] ")

    def __init__(self, ctx: FileContext | None = None) -> None:
        self.tz = ctx.tz if ctx is not None else UTC
        self.years = YearInference(ctx.mtime if ctx else None, ctx.year if ctx else None)
        self.tracebacks = TracebackTracker()
        self.elastic = ElasticTracker(self.tz)
        self.cpp_type: str | None = None
        #: a "terminate called" awaiting what(): its line, type and the ``emit`` of its line
        self.terminate: tuple[int, str, Emit] | None = None

    # -- protocol ---------------------------------------------------------------------------
    def match(self, text: str, line_no: int, emit: Emit) -> int | None:
        """EVENT/NOISE for a recognised line (rows through ``emit``), else None."""
        if self.terminate is not None:
            emit = self._terminate_echo(line_no, emit)
        return self._match(text, line_no, emit)

    def _terminate_echo(self, line_no: int, emit: Emit) -> Emit:
        """``terminate called after throwing an instance of 'T'`` says nothing until the
        ``what():`` line after it does: the first row of the next lines is copied onto it."""
        assert self.terminate is not None
        t_line, t_type, t_emit = self.terminate
        if line_no - t_line > 3:
            self.terminate = None
            t_emit(kind="python_exception", code=t_type, line_no=t_line, format="torch",
                 message=f"terminate called after throwing an instance of '{t_type}'")
            return emit

        def out(**fields: Any) -> None:
            emit(**fields)
            if self.terminate is not None and fields.get("line_no") in (None, line_no) \
                    and "what():" in str(fields.get("message", "")):
                self.terminate = None
                t_emit(**{**fields, "line_no": t_line})
        return out

    def is_open(self) -> bool:
        return self.terminate is not None or bool(self.tracebacks.open) \
            or self.elastic.report is not None

    def _match(self, text: str, line_no: int, emit: Emit) -> int | None:
        rank: int | None = None
        body = text
        m = _RANK_PREFIX.match(text)
        if m:
            rank, body = int(m.group(1)), text[m.end():]
        if self.elastic.report is not None:
            consumed, rows = self.elastic.feed(body, line_no)
            emit_rows(rows, emit)
            if consumed:
                return EVENT
        consumed, rows = self.tracebacks.feed(rank, body, line_no, emit)
        emit_rows(rows, emit)
        if body.rstrip().endswith("ChildFailedError:"):
            emit_rows(self.elastic.start(line_no), emit)
            return EVENT
        if consumed:
            return EVENT
        if body.strip() == "Traceback (most recent call last):":
            emit_rows(self.tracebacks.start(rank, line_no), emit)
            return EVENT
        return self._single(body, rank, line_no, emit)

    def finish(self, emit: Emit) -> None:
        """Flush open tracebacks and an unclosed ChildFailedError report."""
        if self.terminate is not None:
            self._terminate_echo(self.terminate[0] + 99, emit)
        emit_rows(self.tracebacks.close_all(), emit)
        emit_rows(self.elastic.close(), emit)

    # -- single lines -----------------------------------------------------------------------
    def _single(self, body: str, key: int | None, line_no: int, emit: Emit) -> int | None:
        if not any(k in body for k in _KEYWORDS):
            return None  # cheap exit for the bulk of job output (progress lines, prints)
        base = self._prefix_fields(body)
        rank = key if key is not None else _bracket_rank(body)
        if rank is not None:
            base["rank"] = rank
        if "Watchdog caught" in body:
            w = _WATCHDOG.search(body)
            if w:
                emit(**base, kind="nccl_timeout", code=w.group("op"),
                     value=int(w.group("tmo")) / 1000.0, message=_msg(body),
                     format="torch-c10d")
                return EVENT
        if "watchdog got stuck" in body or "Heartbeat monitor timed out" in body:
            s = _STUCK.search(body)
            emit(**base, kind="nccl_timeout", code="watchdog_hang", message=_msg(body),
                 format="torch-c10d", **({"value": float(s.group(1))} if s else {}))
            return EVENT
        if "Timeout at NCCL work" in body:
            t = _TIMEOUT_AT.search(body)
            if t:
                emit(**base, kind="nccl_timeout", message=_msg(body), format="torch-c10d")
            return EVENT
        if _DUMP_SIGNAL in body:
            emit(**base, kind="nccl_timeout", code="dump_signal", message=_msg(body),
                 format="torch-c10d")
            return EVENT
        if any(k in body for k in _ABORT_MARKS):
            emit(**base, kind="nccl_timeout", code="watchdog_abort", message=_msg(body),
                 format="torch-c10d")
            return EVENT
        if "closing signal" in body:
            td = _TEARDOWN.search(body)
            if td:
                emit(**base, kind="elastic_teardown", code=td.group(2), message=_msg(body),
                     format="torch-elastic")
                return EVENT
        if ("socket" in body and "[c10d]" in body) or "The client socket has timed out" in body:
            cs = _C10D_SOCKET.search(body)
            if cs and any(b in body for b in _BENIGN_ERRNO):
                return NOISE
            if cs:
                what = f"{cs.group(1)}_{cs.group(2)}_failed" if cs.group(2) else \
                    f"{cs.group(1)}_timeout"
                emit(**base, kind="rendezvous_error", code=what, message=_msg(body),
                     format="torch-c10d",
                     **({"value": float(cs.group(3))} if cs.group(3) else {}))
                return EVENT
        if any(k in body for k in _NOISE_MARKS) or _FRAME_CPP.match(body):
            return NOISE
        if "exitcode" in body:
            f = _WORKER_FAILED.search(body)
            if f:
                emit(**base, kind="elastic_worker_failed", code=f.group(1),
                     device=f"local_rank={f.group(2)}", message=_msg(body),
                     format="torch-elastic",
                     **({"value": float(-int(f.group(1)))} if int(f.group(1)) < 0 else {}))
                return EVENT
        if "death signal" in body:
            d = _DEATH.search(body)
            if d:
                emit(**base, kind="elastic_signal", code=d.group(1), message=_msg(body),
                     format="torch-elastic")
                return EVENT
        if "terminate called after throwing" in body:
            c = _TERMINATE.search(body)
            self.cpp_type = c.group(1) if c else None
            self.terminate = (line_no, self.cpp_type or "C++ exception", emit)
            return EVENT
        return self._error_line(body, base, key, line_no, emit)

    def _error_line(self, body: str, base: dict[str, Any], key: int | None, line_no: int,
                    emit: Emit) -> int | None:
        """A one-line error (or a ``what():`` line); opens a tail for its continuation."""
        what = "what():" in body
        fields = classify_error(body)
        if fields is None and what:
            fields = {"kind": "python_exception", "code": self.cpp_type or "C++ exception"}
        if fields is None:
            if _C10.search(body) or _GLOG.match(body):
                return NOISE
            return None
        msg = _msg(body)
        row = {**base, **fields, "message": msg, "format": "torch"}
        if what and self.terminate is not None:  # the row of the line that says what it was
            (t_line, _, t_emit), self.terminate = self.terminate, None
            t_emit(**{**row, "line_no": t_line})
        emit_rows(self.tracebacks.open_tail(key, row or None, line_no, emit), emit)
        return EVENT

    # -- helpers ----------------------------------------------------------------------------
    def _prefix_fields(self, body: str) -> dict[str, Any]:
        """``ts_fallback`` from a c10/glog month-day stamp or a Python-logging date."""
        m = _C10.search(body) or _GLOG.match(body)
        try:
            if m and m.group(2):
                mo, d = int(m.group(2)), int(m.group(3))
                h, mi, s = int(m.group(4)), int(m.group(5)), int(m.group(6))
                us = int((m.group(7) + "000000")[:6])
                ts = local_to_us(self.years.year_for(mo), mo, d, h, mi, s, us, self.tz)
                return {"ts_fallback": ts, "ts_fallback_flag": "inferred_year"}
            p = _PYLOG_TS.match(body)
            if p:
                ts, flag = parse_iso(p.group(1), self.tz)
                return {"ts_fallback": ts, "ts_fallback_flag": flag}
        except (TimeError, ValueError):
            pass
        return {}


def _bracket_rank(body: str) -> int | None:
    """``[Rank N]`` / ``[PG 0 Rank N]`` rank when the group is the default one, else None."""
    m = _PG_RANK.search(body)
    if not m:
        return None
    pg, name = m.group("pg"), m.group("name")
    if pg is None or pg in ("0", "ID 0") or name == "default_pg":
        return int(m.group("rank"))
    return None


def _msg(body: str) -> str:
    """The message without c10/glog/Python-logging prefixes."""
    m = _C10.search(body) or _GLOG.match(body)
    if m:
        return body[m.end():].strip()
    p = _PYLOG_TS.match(body)
    return body[p.end():].strip() if p else body.strip()
