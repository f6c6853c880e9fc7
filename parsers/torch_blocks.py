"""Multi-line blocks in job output: Python tracebacks and the torch elastic ChildFailedError
report. Used by ``TorchDistMatcher``; each class keeps its own small state.

Traceback (CPython ``traceback`` module; torch 2.3+ prefixes every line of a rank's uncaught
exception with ``[rankN]: ``, so tracebacks are kept per rank prefix)::

    Traceback (most recent call last):
      File "/x/train.py", line 10, in <module>
        main()
        ^^^^^^                                   (3.11+ caret lines)
    ValueError: bad value                        <- final line: type and message
                                                 (+ continuation lines the classifier knows)
    The above exception was the direct cause of the following exception:   (chain)

Decisions: frame, code and caret lines are EVENT (part of the block); one row per traceback
chain, emitted when the line after the final line (and its known continuation) is not a chain
marker. In a chain the row is the first exception that ``classify_error`` recognises (a CUDA /
NCCL / OOM / NaN / rendezvous error is that kind, never ``python_exception``), else the last
one (the exception that ended the process).

ChildFailedError report (torch/distributed/elastic/multiprocessing/errors/__init__.py,
``_MSG_FORMAT_TEMPLATE`` / ``_FAILURE_FORMAT_TEMPLATE``): one ``elastic_child_failed`` row per
failure entry, on the entry's ``traceback :`` line (where it says what killed the rank), and
the root cause's row once more on the report's first line; flushed at the closing ``====``
border or in ``finish``.

A traceback's row, and a one-line error's that waits for its continuation lines, comes out
at a later line (the one that ends it). It keeps the ``emit`` of its own line (``ORIGIN``),
so its stamp and the other defaults of the dialect are those of the line it is about, not of
the line that happened to close it (which the prefilter may put far later: parsers/prefilter.py
sends only candidates and wake lines to Python).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any

from parsers.base import Emit
from parsers.nccl import NcclMatcher
from parsers.signature_table import SignatureMatcher
from parsers.timeutil import TimeError, parse_iso
from parsers.torch_errors import NCCL_NAME_LINE, classify_error

_FRAME = re.compile(r'^\s+File "[^"]*", line \d+')
_FINAL = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::(?: (?P<msg>.*))?)?$")
_EXC_SUFFIX = ("Error", "Exception", "Interrupt", "Exit", "Failure", "Fault", "Timeout",
               "Warning", "StopIteration")
CHAIN_MARKERS = ("The above exception was the direct cause of the following exception:",
                 "During handling of the above exception, another exception occurred:")
#: lines that continue an exception message (torch / NCCL wordings)
_CONTINUATIONS = ("ncclUnhandledCudaError: ", "ncclSystemError: ", "ncclInternalError: ",
                  "ncclInvalidArgument: ", "ncclInvalidUsage: ", "ncclRemoteError: ",
                  "Last error:", "CUDA kernel errors might be asynchronously reported",
                  "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
                  "Compile with `TORCH_USE_CUDA_DSA`", "Exception raised from ", "frame #",
                  "Original reason for failure was", "Search for `cuda", "For more detailed error")
#: the advisory lines torch prints under a CUDA error (c10/cuda/CUDAException.cpp)
_CUDA_ADVICE = ("CUDA kernel errors might be asynchronously", "For debugging consider passing",
                "Compile with `TORCH_USE_CUDA_DSA`", "Search for `cuda", "For more detailed error")
#: indented lines a frame line may carry (its source line, 3.11+ carets; a 3.13 source line
#: can span several lines): more than these without a new frame line end the frames
_CODE_LINES = 4
_FRAME_OTHER = ("|", "+-", "+ Exception Group", "[Previous line repeated", "...")
MAX_BLOCK_LINES = 2000  #: a block not closed after this many lines is flushed
IDLE_LINES = 3  #: a finished chain of another rank prefix is closed after this many lines
#: a row's key holding the ``emit`` of the line the row is about (``emit_rows`` pops it)
ORIGIN = "\0emit"


def emit_rows(rows: list[dict[str, Any]], emit: Emit) -> None:
    """Emit rows finished by a block (they carry their own ``line_no``), each through the
    ``emit`` of its own line if it kept one, else through ``emit``."""
    for row in rows:
        (row.pop(ORIGIN, None) or emit)(**row)


def exception_type(line: str) -> tuple[str, str] | None:
    """(type, message) if ``line`` looks like a traceback's final line, else None."""
    m = _FINAL.match(line)
    if not m:
        return None
    t = m.group("type")
    last = t.rsplit(".", 1)[-1]
    if not (last.endswith(_EXC_SUFFIX) or "Error" in last):
        return None
    return t, (m.group("msg") or "")


@dataclass
class Traceback:
    """State of one open traceback chain (per rank prefix)."""

    start: int
    key: int | None = None  #: the ``[rankN]:`` prefix rank the lines carry
    last: int = 0  #: line number of the last line that belonged to it
    state: str = "frames"  #: frames | tail (after a final line) | marker (after a chain marker)
    best: dict[str, Any] | None = None  #: the row so far
    classified: bool = False
    last_error: bool = False  #: the previous line was "Last error:"
    since_frame: int = _CODE_LINES  #: indented lines since the last frame line (none yet)
    emit: Emit | None = None  #: the ``emit`` of ``best``'s line


class TracebackTracker:
    """Per-rank traceback chains; ``feed`` returns (consumed, rows to emit)."""

    def __init__(self) -> None:
        self.open: dict[int | None, Traceback] = {}
        self.table = SignatureMatcher()

    def start(self, key: int | None, line_no: int) -> list[dict[str, Any]]:
        """A ``Traceback (most recent call last):`` line: continue a chain or open one."""
        tb = self.open.get(key)
        if tb is not None and tb.state == "marker":
            tb.state, tb.since_frame = "frames", _CODE_LINES
            return []
        rows = self.close(key)
        self.open[key] = Traceback(start=line_no, key=key, last=line_no)
        return rows

    def open_tail(self, key: int | None, row: dict[str, Any] | None, line_no: int,
                  emit: Emit | None = None) -> list[dict[str, Any]]:
        """A one-line error outside a traceback: its continuation lines (``ncclRemoteError:
        ...``, ``Last error:`` + the NCCL last error) join ``row``, emitted when they end.
        ``row`` None: a duplicate whose continuation is consumed without a row."""
        rows = self.close(key)
        if row is not None:
            row = {**row, "line_no": line_no}
        self.open[key] = Traceback(start=line_no, key=key, last=line_no, state="tail", best=row,
                                   classified=row is not None, emit=emit)
        return rows

    def feed(self, key: int | None, text: str, line_no: int,
             emit: Emit | None = None) -> tuple[bool, list[dict[str, Any]]]:
        """Offer a line (rank prefix removed) to the open traceback of ``key``. Finished
        chains of other keys idle for more than ``IDLE_LINES`` lines are closed first, so their
        rows come out close to where they were printed."""
        rows = self._close_idle(key, line_no)
        tb = self.open.get(key)
        if tb is None:
            return False, rows
        if line_no - tb.start > MAX_BLOCK_LINES:
            return False, rows + self.close(key)
        consumed, more = self._feed(tb, text, line_no, emit)
        if consumed:
            tb.last = line_no
        return consumed, rows + more

    def _close_idle(self, key: int | None, line_no: int) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for k, tb in list(self.open.items()):
            if k != key and tb.state != "frames" and line_no - tb.last > IDLE_LINES:
                rows.extend(self.close(k))
        return rows

    def _feed(self, tb: Traceback, text: str, line_no: int,
              emit: Emit | None) -> tuple[bool, list[dict[str, Any]]]:
        key = tb.key
        if tb.state == "frames":
            if _FRAME.match(text):
                tb.since_frame = 0
                return True, []
            if text[:1].isspace() and text.strip() and (
                    tb.since_frame < _CODE_LINES or text.lstrip().startswith(_FRAME_OTHER)):
                # a frame's source line and 3.11+ caret lines; exception-group borders and
                # "[Previous line repeated N more times]". Other indented lines are not the
                # traceback's (a header whose frames never came must not swallow them)
                tb.since_frame += 1
                return True, []
            exc = exception_type(text)
            if exc is None:
                return False, []
            self._final(tb, exc, text, line_no, emit)
            tb.state = "tail"
            return True, []
        stripped = text.strip()
        if not stripped:
            return False, []  # blank lines inside a chain: left to the job-log parser
        if stripped in CHAIN_MARKERS:
            tb.state = "marker"
            return True, []
        if tb.state == "marker":
            if stripped == "Traceback (most recent call last):":
                tb.state, tb.since_frame = "frames", _CODE_LINES
                return True, []
            return False, self.close(key)
        # tail: known continuation lines of the final exception's message; those that say
        # something themselves (the NCCL result name, NCCL's last error) get their own row
        if tb.last_error:
            tb.last_error = False
            self._append(tb, stripped)
            fields = {"message": stripped, **NcclMatcher.classify_warn(stripped)}
            return True, self._own_row(tb, stripped, line_no, fields)
        if stripped.startswith("Search for `cuda") and (tb.best is None or tb.best.get(
                "kind") not in ("cuda_error", "cuda_oom")):
            return False, self.close(key)  # names its own CUDA error: a row of its own
        if stripped.startswith(_CONTINUATIONS):
            tb.last_error = stripped == "Last error:"
            n = NCCL_NAME_LINE.match(stripped)
            if n and tb.best is not None and tb.best.get("kind") == "nccl_error":
                tb.best["code"] = tb.best.get("code") or n.group("name")
            if n or stripped.startswith("Original reason"):
                self._append(tb, stripped)
            if n:
                return True, self._own_row(tb, stripped, line_no, {
                    "kind": "nccl_error", "code": n.group("name"), "message": stripped})
            if tb.best is not None and tb.best.get("kind") in ("cuda_error", "cuda_oom") \
                    and stripped.startswith(_CUDA_ADVICE):
                # torch's CUDA error message goes on for 3-4 lines: each says the same error
                return True, self._own_row(tb, stripped, line_no, {
                    "kind": tb.best["kind"], "code": tb.best.get("code"), "message": stripped})
            return True, []
        return False, self.close(key)

    @staticmethod
    def _own_row(tb: Traceback, text: str, line_no: int,
                 fields: dict[str, Any]) -> list[dict[str, Any]]:
        row = {"format": "python-traceback", **fields, "line_no": line_no}
        if tb.key is not None:
            row["rank"] = tb.key
        return [row]

    def close(self, key: int | None) -> list[dict[str, Any]]:
        """Close the chain of ``key``; its row (if any)."""
        tb = self.open.pop(key, None)
        if tb is None or tb.best is None:
            return []
        row = dict(tb.best)
        if tb.emit is not None:
            row[ORIGIN] = tb.emit
        if key is not None:
            row.setdefault("rank", key)
        return [row]

    def close_all(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for key in list(self.open):
            rows.extend(self.close(key))
        return rows

    def _final(self, tb: Traceback, exc: tuple[str, str], text: str, line_no: int,
               emit: Emit | None) -> None:
        etype = exc[0]
        fields = classify_error(text)
        if fields is None:
            # the signature table's errors (a checkpoint write failure, an XLA or TF CUDA
            # error, 'NCCL Error 2: ...') end tracebacks as often as they stand alone
            fields = self.table.fields(text.strip())
            if fields is not None:
                fields.pop("format", None)
        if fields is not None and etype.endswith("ChildFailedError"):
            fields = None
        if fields is not None:
            if not tb.classified:
                tb.best = {**fields, "message": text.strip(), "format": "python-traceback",
                           "line_no": line_no}
                tb.classified, tb.emit = True, emit
            return
        if etype.endswith("ChildFailedError"):
            return  # the elastic report that follows carries the rows
        if not tb.classified:
            tb.best = {"kind": "python_exception", "code": etype, "message": text.strip(),
                       "format": "python-traceback", "line_no": line_no}
            tb.emit = emit

    @staticmethod
    def _append(tb: Traceback, extra: str) -> None:
        if tb.best is not None and len(tb.best.get("message", "")) < 2000:
            tb.best["message"] = f"{tb.best['message']} | {extra}"


_FIELD = re.compile(r"^  (time|host|rank|exitcode|error_file|traceback)\s*: ?(.*)$")
_RANK = re.compile(r"^(-?\d+) \(local_rank: (-?\d+)\)")
_EXIT = re.compile(r"^(-?\d+) \(pid: (\d+)\)")
_SIGNAL = re.compile(r"^Signal (\d+) \(")
_IPV4 = re.compile(r"^\d+\.\d+\.\d+\.\d+$")


@dataclass
class ElasticReport:
    """State of one ChildFailedError report."""

    start: int
    borders: int = 0
    title: str = ""
    title_line: int = 0
    section: str = "other"  #: other (under "Failures:") | root (under "Root Cause")
    entries: list[dict[str, Any]] = field(default_factory=list)
    current: dict[str, Any] | None = None
    in_traceback: bool = False


class ElasticTracker:
    """Collects a ChildFailedError report; rows come out when it closes."""

    def __init__(self, tz: tzinfo) -> None:
        self.tz = tz
        self.report: ElasticReport | None = None

    def start(self, line_no: int) -> list[dict[str, Any]]:
        rows = self.close()
        self.report = ElasticReport(start=line_no)
        return rows

    def feed(self, text: str, line_no: int) -> tuple[bool, list[dict[str, Any]]]:
        """Offer a line; (consumed, rows) -- rows when the closing border arrives."""
        r = self.report
        if r is None:
            return False, []
        if line_no - r.start > MAX_BLOCK_LINES:
            return False, self.close()
        s = text.rstrip()
        if s and set(s) == {"="}:
            r.borders += 1
            return (True, self.close()) if r.borders >= 2 else (True, [])
        if s and set(s) == {"-"}:
            self._end_entry(r)
            return True, []
        if s == "Failures:":
            r.section = "other"
            return True, []
        if s.startswith("Root Cause"):
            r.section = "root"
            return True, []
        if s == "  <NO_OTHER_FAILURES>":
            return True, []
        if re.fullmatch(r"\[\d+\]:", s):
            self._end_entry(r)
            r.current = {"idx": s[1:-2], "section": r.section, "line_no": line_no}
            return True, []
        f = _FIELD.match(s)
        if f and r.current is not None:
            r.current[f.group(1)] = f.group(2)
            r.current.setdefault("lines", []).append(line_no)
            r.current[f.group(1) + "_line"] = line_no
            r.in_traceback = f.group(1) == "traceback"
            return True, []
        if r.current is not None and r.in_traceback and text.startswith("  "):
            exc = exception_type(s.strip())
            if exc is not None:
                r.current["exception"] = s.strip()
            return True, []
        if r.borders == 1 and not r.title and s.endswith(" FAILED"):
            r.title = s
            r.title_line = line_no
            return True, []
        return False, []

    def close(self) -> list[dict[str, Any]]:
        r = self.report
        self.report = None
        if r is None:
            return []
        self._end_entry(r)
        rows = [self._row(r, e) for e in r.entries]
        if not rows:
            # the header alone (a truncated paste, a report cut off by the job's end): it
            # still says a worker failed
            return [{"kind": "elastic_child_failed", "format": "torch-elastic",
                     "line_no": r.start}]
        # the report's first line and title and each entry's exitcode line say it too
        roots = [row for row, e in zip(rows, r.entries, strict=True)
                 if e.get("section") == "root"] or rows
        extra = [{**roots[0], "line_no": r.start}]
        if r.title_line:
            extra.append({**roots[0], "line_no": r.title_line})
        extra += [{**row, "line_no": e["exitcode_line"]}
                  for row, e in zip(rows, r.entries, strict=True)
                  if e.get("exitcode_line") and e["exitcode_line"] != row["line_no"]]
        return extra + rows

    @staticmethod
    def _end_entry(r: ElasticReport) -> None:
        if r.current is not None:
            r.entries.append(r.current)
        r.current = None
        r.in_traceback = False

    def _row(self, r: ElasticReport, e: dict[str, Any]) -> dict[str, Any]:
        """One ``elastic_child_failed`` row. ``time`` is the failure time in the agent host's
        local time (``datetime.fromtimestamp(...).isoformat(sep="_")``): read in --tz
        (``assumed_tz``). ``host`` is ``socket.getfqdn()``: shortened to the first label (as
        Slurm and NCCL name hosts) unless it is an IP address."""
        tb_says = not e.get("traceback", "").startswith("To enable traceback")
        line = (e.get("traceback_line") if tb_says else None) or e.get("exitcode_line") \
            or e["line_no"]
        row: dict[str, Any] = {"kind": "elastic_child_failed", "format": "torch-elastic",
                               "line_no": line}
        host = e.get("host", "").strip()
        if host:
            row["host"] = host if _IPV4.match(host) else host.split(".", 1)[0]
        rk = _RANK.match(e.get("rank", ""))
        if rk:
            row["rank"] = int(rk.group(1))
            row["device"] = f"local_rank={rk.group(2)}"
        ex = _EXIT.match(e.get("exitcode", ""))
        tb = e.get("traceback", "")
        if ex:
            row["code"] = ex.group(1)
            if int(ex.group(1)) < 0:
                row["value"] = float(-int(ex.group(1)))
        sig = _SIGNAL.match(tb)
        if sig and "value" not in row:
            row["value"] = float(sig.group(1))
        t = e.get("time", "")
        if t:
            try:
                us, flag = parse_iso(t, self.tz)
            except (TimeError, ValueError):
                pass
            else:
                row["ts"] = us
                row["ts_flag"] = flag
        which = "root cause" if e.get("section") == "root" else "other failure"
        name = r.title.removesuffix(" FAILED") or "?"
        detail = e.get("exception") or tb
        row["message"] = (f"ChildFailedError {which} [{e.get('idx')}] {name}: rank "
                          f"{e.get('rank', '?')} exitcode {e.get('exitcode', '?')}: {detail}")
        return row
