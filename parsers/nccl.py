"""NCCL debug lines inside a job's output: ``NcclMatcher``.

NCCL prints (src/debug.cc, ``ncclDebugLog``; verified in NVIDIA/nccl across versions)::

    host:pid:tid [cudaDev] NCCL INFO <msg>                       INFO, all versions
    host:pid:tid [cudaDev] <file-or-func>:<line> NCCL WARN <msg>  WARN, 2.x (a blank line before)
    host:pid:tid [cudaDev] <file>:<line> (<func>) NCCL WARN <msg> WARN, newest (2.27+)
    [2025-11-24 11:20:21] host:pid:tid [cudaDev] ... NCCL WARN    2.23+: NCCL_DEBUG_TIMESTAMP_*
    host:pid:tid [cudaDev] <ms> <func>:<line> NCCL TRACE <msg>    TRACE builds
    host:pid:tid NCCL CALL <msg>                                   NCCL_DEBUG_SUBSYS=CALL
    NCCL version 2.18.1+cuda12.1                                   level VERSION (no prefix)

``host`` is ``gethostname()`` cut at the first ``.``; ``cudaDev`` is the CUDA device of the
calling thread (goes to ``device``). NCCL lines carry no global rank: the job-log parser fills
``rank`` from its prefix.

Decisions (reality is ambiguous):

* Every INFO / TRACE / CALL / VERSION line is NOISE except ``comm ... - Abort COMPLETE``
  (``nccl_abort``) and the ``misc/socket.cc:64 -> 6`` lines, NCCL's error back-trace
  (NCCLCHECK in src/include/checks.h): ``nccl_trace`` (code = the ncclResult_t name). The
  WARN before them says why; they show where it propagated (and they are often all that a
  paste or a rank without the WARN shows).
* A WARN becomes the most specific kind its message supports: ``nccl_ib_error`` (IB completion
  error, code = the ibv_wc status number; async event, code = the event text; a failed verbs
  call, code = the verb), ``nccl_socket_error`` (code = the socket failure text),
  ``cuda_error`` for ``Cuda failure 'X'`` (code = the CUDA error text, as for torch's
  ``CUDA error: X``, so one rule set judges both), else ``nccl_warn`` (code = an NCCL result
  name when the line names one or gives ``retcode N`` / ``res=N``).
* The optional ``[%F %T]`` NCCL timestamp is local time without zone: it is passed as
  ``ts_fallback`` (flag ``assumed_tz``) for the job-log parser to use only when its own prefix
  has no time.
"""

from __future__ import annotations

import re
from datetime import UTC
from typing import Any, ClassVar

from parsers.base import EVENT, NOISE, Emit, FileContext, never_open
from parsers.timeutil import TimeError, parse_iso

#: ncclResult_t values (src/nccl.h.in) -> names, for ``retcode 3`` / ``res=3`` / ``-> 6``.
NCCL_RESULTS = {
    1: "ncclUnhandledCudaError", 2: "ncclSystemError", 3: "ncclInternalError",
    4: "ncclInvalidArgument", 5: "ncclInvalidUsage", 6: "ncclRemoteError", 7: "ncclInProgress",
    8: "ncclTimeout",
}

_PREFIX = re.compile(
    r"^(?:\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?)\] )?"
    r"(?:(?P<host>[^\s:\[\]]+)(?::(?P<pid>\d+):(?P<tid>\d+))? )?"
    r"(?:\[(?P<dev>\d+)\] )?(?:\d+\.\d+ )?"
    r"(?:(?P<src>\S+:\d+)(?: \((?P<func>[^)\s]*)\))? )?"
    r"NCCL (?P<level>WARN|INFO|TRACE|CALL|ABORT)\b ?(?P<msg>.*)$"
)


#: the ``host:pid:tid [dev]`` head behind something no prefix layer takes off (grep's
#: ``file.log:`` and a stamp, a log viewer's ``| 2024-11-28T07:42:11.527Z | ``), or with
#: the host cut out (``:41367:41367 [1] enqueue.cc:422 NCCL WARN ...``)
_EMBEDDED = re.compile(
    r"(?:^|[\s|:\]])(?P<host>[^\s:\[\]|]*):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] "
    r"(?:\d+\.\d+ )?(?:(?P<src>\S+:\d+)(?: \((?P<func>[^)\s]*)\))? )?"
    r"NCCL (?P<level>WARN|INFO|TRACE|CALL|ABORT)\b ?(?P<msg>.*)$")


def _envelope(text: str) -> re.Match[str] | None:
    """NCCL's debug-line envelope; without the ``host:pid:tid`` head (a paste that trimmed
    it: ``NCCL WARN NET/IB : Got completion ...``, ``misc/ibvwrap.cc:280 NCCL WARN ...``)
    only with a message behind the level."""
    m = _PREFIX.match(text)
    if m is None:
        return _EMBEDDED.search(text) if " NCCL " in text else None
    if m.group("host") is None and not m.group("msg").strip():
        return None
    return m


_VERSION = re.compile(r"^NCCL version \d+\.\d+\.\d+\S*$")
#: a transport WARN's message on its own (torch's ``Last error:`` continuation, pastes)
_BARE = re.compile(r"^\s*(?:NET/IB\w*\s?: ?"  # "NET/IBP:Got completion ..." (a plugin's name)
                   r"|(?:NET/Socket|Net|socketProgress(?:Opt)?|socketStartConnect)\s?: "
                   r"|Call to (?:wrap_)?ibv_\w+ failed"
                   # NCCLCHECK's CUDACHECK: WARN("Cuda failure %d '%s'", ...), the message torch
                   # repeats under "Last error:" (src/include/checks.h)
                   r"|Cuda failure (?:\d+ )?'"
                   # src/proxy.cc proxyServiceLoop: WARN("[Proxy Service %d] Failed to execute
                   # operation %s from rank %d, retcode %d", ...)
                   r"|\[Proxy Service \d+\] Failed to execute operation )")
#: NCCLCHECK's error-return trace (src/include/checks.h: ``INFO(NCCL_ALL,"%s:%d -> %d", ...)``)
TRACE = re.compile(r"(?:^|\s)(?P<src>[\w./\-]+\.(?:cc|c|h|cu|cpp|hpp)):(?P<line>\d+) -> "
                   r"(?P<res>\d+)(?: \[[^\]]*\])?\s*$")

# IB completion error, all wordings (transport/net_ib.cc):
#   2.4-2.18  "NET/IB : Got completion from peer %s with error %d, opcode %d, len %d, vendor err %d"
#   2.19+     "... with status=%d opcode=%d len=%d vendor err %d (%s) localGid .. hca %s"
#   newest    "NET/IB: Got completion from peer %s with status=%s(%d) opcode=%s(%d) vendor_err=%u"
#   oldest    "NET/IB : Got completion with error %d, opcode %d, len %d, vendor err %d"
IB_COMPLETION = re.compile(
    r"Got completion (?:from peer (?P<peer>\S+) )?with (?:error |status=)"
    r"(?:(?P<sname>[A-Z_]+)\()?(?P<status>\d+)"
)
#: async events (net_ib.cc ncclIbAsyncThreadMain; newer transport/net_ib/common.cc):
#: ``Got async event : port error`` (<= 2.21), ``Got async error event: port error`` (2.22+),
#: ``Got non-fatal async event: port error(10)`` (2.28+), ``async fatal event: local
#: catastrophic error``, ``async fatal event on QP (0x..): local work queue catastrophic error``
_IB_ASYNC = re.compile(
    r"NET/IB\w* ?: (?:\S+ )?(?:Got (?:non-fatal |fatal )?async (?:error )?event ?: ?"
    r"|async (?:fatal )?event(?: on \w+ \([^)]*\))? ?: ?)(?P<event>.+?)(?:\(\d+\))?\s*$")
_IBV_CALL = re.compile(r"(?:Call to |NET/IB\w* ?: )(?P<verb>(?:wrap_)?ibv_\w+) failed")
_CUDA_FAILURE = re.compile(r"Cuda failure (?:\d+ )?'(?P<err>[^']*)'")
_RESULT_NAME = re.compile(r"\b(nccl(?:UnhandledCuda|System|Internal|Remote)Error|ncclInvalid"
                          r"(?:Usage|Argument)|ncclInProgress|ncclTimeout)\b")
_RETCODE = re.compile(r"\b(?:retcode|res=)\s?(\d)\b")
_SOCKET_CODES = ("Connection closed by remote peer", "Connection reset by peer",
                 "Connection refused", "Connection timed out", "No route to host",
                 "Broken pipe", "Network is unreachable", "Socket recv failed",
                 "message truncated")
_SOCKET_HINTS = ("socketProgress", "Net : ", "NET/Socket", "socket.cc", "Socket recv",
                 "Call to recv", "Call to send", "Call to connect", "connect to", "Connect to ",
                 "socketStartConnect", "socketPoll", "socketFinalizeAccept", "socketWait")


def ib_completion_code(text: str) -> str | None:
    """The ibv_wc status number of an IB completion error text, or None."""
    m = IB_COMPLETION.search(text)
    return m.group("status") if m else None


def _socket_code(msg: str) -> str | None:
    """Socket failure text of a NET/Socket or bootstrap socket WARN, or None."""
    if not any(h in msg for h in _SOCKET_HINTS):
        return None
    for code in _SOCKET_CODES:
        if code in msg:
            return code
    return "socket" if ("failed" in msg or "closed" in msg) else None


class NcclMatcher:
    """Recognises NCCL debug lines (see module docstring); one row per signal line."""

    #: "NCCL" is in every debug line (the job-output dialect keeps healthy INFO lines out of
    #: Python with a vectorised rule, parsers.joblog); the rest are transport messages alone
    SIGNAL: ClassVar[tuple[str, ...]] = ("NCCL WARN", "NCCL ABORT", "Abort COMPLETE",
                                         "socketProgress", "socketStartConnect",
                                         "] Failed to execute operation ", "Cuda failure ")
    #: the error-return trace, and a transport message without NCCL's prefix (_BARE): at the
    #: start of the message, not after "NCCL INFO " (healthy "NET/IB : Using ..." lines)
    SIGNAL_RE: ClassVar[tuple[str, ...]] = (
        r"\.(?:cc|c|h|cu|cpp|hpp):\d+ -> \d+",
        r"(?:^|[\]:]|[^O]\s)(?:NET/IB\w*|NET/Socket|Net) ?:")
    CLAIMS: ClassVar[tuple[str, ...]] = ("NCCL",)

    is_open = never_open

    def __init__(self, ctx: FileContext | None = None) -> None:
        self.tz = ctx.tz if ctx is not None else UTC

    @staticmethod
    def owns(text: str) -> bool:
        """True for a line in NCCL's debug format (``host:pid:tid [dev] NCCL LEVEL ...``)."""
        return _envelope(text) is not None

    def match(self, text: str, line_no: int, emit: Emit) -> int | None:
        """EVENT/NOISE for an NCCL line, None for anything else."""
        if "NCCL" not in text:
            if _BARE.match(text) is None:
                return None
            # a WARN's message without its prefix: torch's "Last error:" line, a paste
            emit(message=text.strip(), **self.classify_warn(text))
            return EVENT
        m = _envelope(text)
        if m is None:
            return NOISE if _VERSION.match(text) else None
        level, msg = m.group("level"), m.group("msg")
        if level == "INFO":
            if msg.endswith("- Abort COMPLETE"):
                emit(**self._base(m, msg), kind="nccl_abort", format="nccl")
                return EVENT
            t = TRACE.search(msg) if " -> " in msg else None
            if t is not None:
                res = int(t.group("res"))
                emit(**self._base(m, msg), kind="nccl_trace", format="nccl",
                     code=NCCL_RESULTS.get(res, str(res)))
                return EVENT
            return NOISE
        if level != "WARN":
            return NOISE
        fields = self._base(m, msg)
        fields.update(self.classify_warn(msg))
        emit(**fields)
        return EVENT

    def finish(self, emit: Emit) -> None:
        """No multi-line state."""

    def _base(self, m: re.Match[str], msg: str) -> dict[str, Any]:
        fields: dict[str, Any] = {"host": m.group("host") or None, "message": msg}
        if m.group("dev") is not None:
            fields["device"] = m.group("dev")
        ts = m.groupdict().get("ts")
        if ts:
            try:
                us, flag = parse_iso(ts, self.tz)
            except (TimeError, ValueError):
                pass
            else:
                fields["ts_fallback"] = us
                fields["ts_fallback_flag"] = flag
        return fields

    @staticmethod
    def classify_warn(msg: str) -> dict[str, Any]:
        """kind/code/format for a WARN message (see module docstring for the order)."""
        if "completion" in msg:
            m = IB_COMPLETION.search(msg)
            if m:
                return {"kind": "nccl_ib_error", "code": m.group("status"), "format": "nccl-ib"}
        if "async" in msg:
            a = _IB_ASYNC.search(msg)
            if a:
                return {"kind": "nccl_ib_error", "code": a.group("event"), "format": "nccl-ib"}
        if "ibv_" in msg:
            v = _IBV_CALL.search(msg)
            if v:
                return {"kind": "nccl_ib_error", "code": v.group("verb").removeprefix("wrap_"),
                        "format": "nccl-ib"}
        if "Cuda failure" in msg:
            c = _CUDA_FAILURE.search(msg)
            if c:
                return {"kind": "cuda_error", "code": c.group("err"), "format": "nccl"}
        sock = _socket_code(msg)
        if sock is not None:
            return {"kind": "nccl_socket_error", "code": sock, "format": "nccl-socket"}
        out: dict[str, Any] = {"kind": "nccl_warn", "format": "nccl"}
        n = _RESULT_NAME.search(msg)
        if n:
            out["code"] = n.group(1)
        else:
            r = _RETCODE.search(msg)
            if r and int(r.group(1)) in NCCL_RESULTS:
                out["code"] = NCCL_RESULTS[int(r.group(1))]
        return out
