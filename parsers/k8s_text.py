"""Kubernetes as people paste it: ``kubectl describe pod``, header-less ``kubectl get events``
rows, ``kubectl get pods`` rows.

Formats (kubernetes/kubectl, staging/src/k8s.io/kubectl/pkg/describe/describe.go and
pkg/printers/internalversion/printers.go):

* describe's Events table, ``Type Reason Age From Message`` (1.10+): ``  Warning  BackOff
  2m (x25 over 10m)  kubelet  Back-off restarting failed container trainer in pod ...``;
  before 1.10 ``FirstSeen LastSeen Count From SubObjectPath Type Reason Message`` with the
  source as ``kubelet, gpu-node-3``. ``kubectl get events`` rows: ``LAST SEEN TYPE REASON
  OBJECT MESSAGE`` (``5m  Warning  BackOff  pod/trainer-0  Back-off ...``). Any of these rows,
  with or without its header, becomes ``k8s_event`` (code = Reason; host from ``kubelet,
  <node>`` or a ``node/<name>`` object).
* describe's container state blocks (``describeContainerState``)::

      State:          Waiting
        Reason:       CrashLoopBackOff
      Last State:     Terminated
        Reason:       OOMKilled
        Exit Code:    137

  A ``Reason:`` right under a ``Terminated`` state becomes ``pod_terminated`` (code = Reason,
  value = the exit code when the next lines give it; the ``Exit Code:`` line gets the same
  row), under ``Waiting`` ``pod_waiting``. Indentation is not relied on: pastes lose it.
* describe's pod-level ``Status: Failed`` / ``Reason: Evicted`` / ``Message: The node was low
  on resource: memory. ...`` becomes ``pod_evicted`` (code = Reason, message = the Message
  line, so the rule table can tell memory from ephemeral-storage evictions).
* ``kubectl get pods``: ``trainer-0   0/1   CrashLoopBackOff   5 (2m ago)   20m`` ->
  ``pod_status`` (code = STATUS) for the statuses that mean trouble.
"""

from __future__ import annotations

import re
from datetime import tzinfo
from typing import Any, ClassVar

from parsers.base import EVENT, NOISE, Emit
from parsers.timeutil import YearInference

_AGE = r"(?:<unknown>|<invalid>|\d+[smhdy](?:\d+[smhdy])?)(?: \(x\d+ over \d+[smhdy]\w*\))?"
_EVENT_ROW = re.compile(
    r"^\s*(?:(?P<pre>.*?)\s{2,})?(?P<type>Normal|Warning)\s+(?P<reason>[A-Z][A-Za-z]+)\s+"
    r"(?P<rest>\S.*)$")
_DESCRIBE_REST = re.compile(r"^" + _AGE + r"\s+(?P<src>\S.*?)\s{2,}(?P<msg>\S.*)$")
_OBJECT_REST = re.compile(r"^(?P<obj>[a-z.]+/\S+|\S+)\s+(?P<msg>\S.*)$")
_SRC_NODE = re.compile(r"kubelet,\s*(\S+)")
_NODE_OBJ = re.compile(r"\bnode/(\S+)")
_STATE = re.compile(r"^\s*(Last )?State:\s+(Terminated|Waiting|Running)\b")
_REASON = re.compile(r"^(\s*)Reason:\s+(\S+)\s*$")
_EXIT = re.compile(r"^\s*Exit Code:\s+(\d+)")
_MESSAGE = re.compile(r"^\s*Message:\s+(.*\S)\s*$")
_POD_STATUS = re.compile(r"^\s*Status:\s+(Failed|Succeeded|Pending|Running|Unknown)\s*$")
_TROUBLE = ("CrashLoopBackOff", "OOMKilled", "Error", "Evicted", "ImagePullBackOff",
            "ErrImagePull", "CreateContainerError", "CreateContainerConfigError",
            "ContainerStatusUnknown", "RunContainerError", "StartError", "Init:Error",
            "Init:CrashLoopBackOff", "NodeLost", "Unknown", "OutOfcpu",
            "OutOfmemory", "UnexpectedAdmissionError")
_PODS_ROW = re.compile(r"^(?:\S+\s+)?(?P<name>[a-z0-9][a-z0-9.\-]*)\s+(?P<ready>\d+/\d+)\s+"
                       r"(?P<status>" + "|".join(re.escape(s) for s in _TROUBLE)
                       + r")\s+(?P<restarts>\d+)(?: \([^)]*\))?\s+\S+")
BLOCK_LINES = 6  #: a state block's Reason / Exit Code come within this many lines


class K8sText:
    """Recogniser for Kubernetes text pastes (see module docstring)."""

    SIGNAL: ClassVar[tuple[str, ...]] = ()
    #: its words, and what ``match`` claims in a line holding them (a superset: ``_REASON``
    #: and ``_EXIT`` claim only after a state; ``_expire`` works by line distance, so a
    #: line it is not asked about changes nothing): ``syncPowerState:`` or ``Status: ok``
    #: in another program's line stays out of Python (parsers/relax.py)
    CHECKED: ClassVar[dict[str, tuple[str, ...]]] = {
        **dict.fromkeys(("Normal ", "Warning "), (_EVENT_ROW.pattern,)),
        **dict.fromkeys(("Reason:", "State:", "Exit Code:", "Message:", "Status:"), (
            _STATE.pattern, _REASON.pattern, _EXIT.pattern, _MESSAGE.pattern,
            _POD_STATUS.pattern))}
    SIGNAL_RE: ClassVar[tuple[str, ...]] = (
        r"\s\d+/\d+\s+(?:" + "|".join(re.escape(s) for s in _TROUBLE) + r")\s",)

    def __init__(self, tz: tzinfo | None = None, years: YearInference | None = None) -> None:
        self.state: tuple[str, int] | None = None  #: (Terminated|Waiting, line) of a block
        self.pending: dict[str, Any] | None = None  #: a pod_terminated row awaiting Exit Code
        self.pod_failed: int | None = None  #: line of a pod-level ``Status: Failed``
        self.evicted: dict[str, Any] | None = None  #: pod_evicted row awaiting its Message
        self.last_terminated: dict[str, Any] | None = None  #: for the Exit Code line after it

    def match(self, text: str, line_no: int, emit: Emit) -> int | None:
        self._expire(line_no, emit)
        if "Reason:" in text or "State:" in text or "Exit Code:" in text \
                or "Message:" in text or "Status:" in text:
            r = self._describe(text, line_no, emit)
            if r is not None:
                return r
        if "Normal" in text or "Warning" in text:
            r = self._event_row(text, emit)
            if r is not None:
                return r
        p = _PODS_ROW.match(text)
        if p is not None:
            emit(kind="pod_status", code=p.group("status"), value=float(p.group("restarts")),
                 device=p.group("name"), message=text.strip(), format="kubectl-get-pods")
            return EVENT
        return None

    def _describe(self, text: str, line_no: int, emit: Emit) -> int | None:
        s = _STATE.match(text)
        if s is not None:
            self._flush(emit)
            self.state = (s.group(2), line_no)
            return EVENT if s.group(2) != "Running" else NOISE
        r = _REASON.match(text)
        if r is not None:
            reason = r.group(2)
            if self.state is not None and line_no - self.state[1] <= 2:
                kind = "pod_terminated" if self.state[0] == "Terminated" else "pod_waiting"
                self._flush(emit)
                self.pending = {"kind": kind, "code": reason, "message": text.strip(),
                                "line_no": line_no, "format": "kubectl-describe"}
                if kind == "pod_waiting":
                    self._flush(emit)
                return EVENT
            if self.pod_failed is not None or reason in ("Evicted", "NodeLost",
                                                         "DeadlineExceeded", "Preempting"):
                self.evicted = {"kind": "pod_evicted", "code": reason, "line_no": line_no,
                                "message": text.strip(), "format": "kubectl-describe"}
                return EVENT
            return None
        e = _EXIT.match(text)
        if e is not None and (self.pending is not None or self.last_terminated is not None):
            row = self.pending or self.last_terminated
            assert row is not None
            row["value"] = float(e.group(1))
            self._flush(emit)
            emit(**{**row, "line_no": line_no, "message": text.strip()})
            self.last_terminated = None
            return EVENT
        m = _MESSAGE.match(text)
        if m is not None and self.evicted is not None:
            row = self.evicted
            self.evicted = None
            emit(**{**row, "message": m.group(1)})
            return EVENT
        st = _POD_STATUS.match(text)
        if st is not None:
            self.pod_failed = line_no if st.group(1) == "Failed" else None
            return NOISE
        return None

    def _event_row(self, text: str, emit: Emit) -> int | None:
        m = _EVENT_ROW.match(text)
        if m is None:
            return None
        rest = m.group("rest")
        d = _DESCRIBE_REST.match(rest)
        src = d.group("src") if d else ""
        msg = d.group("msg") if d else rest
        if d is None:
            o = _OBJECT_REST.match(rest)
            if o is not None:
                src, msg = o.group("obj"), o.group("msg")
        host = _SRC_NODE.search(src) or _SRC_NODE.search(m.group("pre") or "") \
            or _NODE_OBJ.search(src) or _NODE_OBJ.search(m.group("pre") or "")
        row: dict[str, Any] = {"kind": "k8s_event", "code": m.group("reason"),
                               "message": msg.strip(), "format": "kubectl-event-row"}
        if host is not None:
            row["host"] = host.group(1).rstrip(",")
        emit(**row)
        return EVENT

    def _expire(self, line_no: int, emit: Emit) -> None:
        if self.state is not None and line_no - self.state[1] > BLOCK_LINES:
            self.state = None
            self._flush(emit)
        if self.evicted is not None and line_no - self.evicted["line_no"] > 2:
            row, self.evicted = self.evicted, None
            emit(**row)

    def _flush(self, emit: Emit) -> None:
        if self.pending is not None:
            row, self.pending = self.pending, None
            if row["kind"] == "pod_terminated":
                self.last_terminated = dict(row)
            emit(**row)

    def finish(self, emit: Emit) -> None:
        self._flush(emit)
        if self.evicted is not None:
            row, self.evicted = self.evicted, None
            emit(**row)

    def is_open(self) -> bool:
        return self.pending is not None or self.evicted is not None
