"""NVIDIA driver (NVRM), NVSwitch (SXid) and Fabric Manager lines in kernel logs.

Formats (printf strings in NVIDIA/open-gpu-kernel-modules):

* ``NVRM: Xid (PCI:%04x:%02x:%02x): %d, pid=%s, name=%s, %s`` (krcReportXid_IMPL,
  src/nvidia/src/kernel/gpu/rc/kernel_rc.c), with `` GPU-I:%02u`` / `` GPU-CI:%02u`` inside
  the parenthesis on MIG; pid ``'<unknown>'`` and name ``<unknown>`` when no channel is known;
  older drivers print ``NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.``
  or ``NVRM: Xid (0000:01:00): 3, ...`` (no ``PCI:``, no pid/name).
* ``NVRM: GPU %04x:%02x:%02x.%x: GPU has fallen off the bus.`` (NV_DEV_PRINTF in osHandleGpuLost,
  src/nvidia/arch/nvalloc/unix/src/osinit.c), old ``NVRM: GPU at 0000:01:00.0 has fallen off
  the bus.``, and the three-line probe message ``NVRM: The NVIDIA GPU %04x:%02x:%02x.%x`` /
  ``NVRM: (PCI ID: %04x:%04x) installed in this system has`` / ``NVRM: fallen off the bus and
  is not responding to commands.`` (kernel-open/nvidia/nv.c).
* ``NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:894)``.
* GSP: ``NVRM: [GPU0 ]_kgspIsHeartbeatTimedOut: Heartbeat timed out, ...``,
  ``NVRM: [GPU0 ]_kgspRpcRecvPoll: GSP RM heartbeat timed out``, ``_kgspLogRpcTimeout``
  banners, ``kflcnCoreDumpNondestructive_IMPL`` core-dump lines, RPC history tables.
* ``nvidia-nvswitch%d: SXid (PCI:%s): %05d, Fatal|Non-fatal, ...`` (nvswitch driver).
* Fabric Manager in the journal: ``nv-fabricmanager[pid]: [May 16 2025 15:10:21] [ERROR] ...``.
* ``NVRM: A GPU crash dump has been created. If possible, please run`` (+ 2 lines),
  ``NVRM: The NVIDIA probe routine failed for 1 device(s).``, ``NVRM: probe of 0000:.. failed
  with error -1`` (kernel-open/nvidia/nv.c, nv-pci.c), ``NVRM: os_schedule: Attempted to yield
  the CPU while in atomic or interrupt context`` (os-interface.c).

Decision: every line of a multi-line report (GSP RPC history, the 3-line probe message, the
crash-dump notice, SXid continuations, the driver's "fallen off the bus" echo of an Xid 79)
gets its own row, of the block's kind and code: a user who pastes any one line of it gets the
same answer, and ``explain`` shows each. Counting reports rather than lines is a GROUP BY of
host, device and minute.
"""

from __future__ import annotations

import re

from parsers.base import EVENT, NOISE, UNPARSED
from parsers.kernel_common import Emit, gpu_bus_id

_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})[^)]*\): (\d+),? ?(.*)")
_PID = re.compile(r"pid=('?<unknown>'?|\d+), (?:name=(.*?), )?")
_GSP_FN = re.compile(r"NVRM: (?:(GPU\d+) )?(_?kgsp\w+|kflcnCoreDump\w+): ")
_FN_SUFFIX = re.compile(r"_(?:IMPL|KERNEL|[A-Z]{2}\d{3})$")
_GSP_BAD = ("timed out", "Timeout", "timeout", "failed", "error", "Error", "crash", "Crash",
            "unexpected", "CRASH", "Failure", "failure")
_GSP_DETAIL = re.compile(r"NVRM: (?:GPU\d+ )?(?:RPC history|RPC event history|GSP RPC buffer"
                         r"|\s{3,}|_kgspLogRpcTimeout)")
_ASSERT = re.compile(r"(nvAssert\w*|nvCheck\w*Failed\w*|nvGpuOpsReportFatalError)")
_SXID = re.compile(r"(\S+): SXid \(PCI:([0-9a-fA-F:.]+)\): (\d+), (.*)")
_MULTI_FIRST = re.compile(r"NVRM: The NVIDIA GPU ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}"
                          r"\.[0-7])\s*$")
#: other driver trouble (kernel-open/nvidia/nv.c, os-interface.c, nv-pci.c)
_NVRM_OTHER = (
    ("A GPU crash dump has been created", "nvrm_error", "crash_dump"),
    ("nvidia-bug-report.sh as root to collect", "nvrm_error", "crash_dump"),
    ("the NVIDIA kernel module is unloaded", "nvrm_error", "crash_dump"),
    ("The NVIDIA probe routine failed", "gpu_lost", "probe_failed"),
    ("os_schedule: Attempted to yield the CPU", "nvrm_error", "os_schedule"),
    ("passivework from an atomic or interrupt context", "nvrm_error", "os_schedule"),
    ("A fatal error was detected", "gpu_lost", "fatal_error"),
    ("None of the NVIDIA devices were initialized", "gpu_lost", "probe_failed"),
)
_PROBE = re.compile(r"NVRM: probe of (\S+) failed with error")


class NvidiaLines:
    """Recogniser for NVIDIA lines; keeps the small state multi-line reports need."""

    def __init__(self) -> None:
        self.gsp_open = False  #: inside a GSP timeout / Xid 119-120 report
        self.gsp_last: str | None = None  #: code of the last gsp_error row of this block
        self.lost_pending: str | None = None  #: device of "The NVIDIA GPU X" (3-line block)
        self.last_rminit = False  #: last row was an RmInitAdapter failure
        self.sxid_last: tuple[str, str] | None = None

    def match(self, body: str, line_no: int, emit: Emit) -> int | None:
        """Classify a kernel message containing ``NVRM`` or ``SXid``; None if neither."""
        if "NVRM" in body:
            return self._nvrm(body, line_no, emit)
        if "SXid" in body:
            return self._sxid(body, emit)
        return None

    def other_line(self) -> None:
        """A kernel line that is not NVIDIA's ends the GSP / fallen-off blocks."""
        self.gsp_open = False
        self.gsp_last = None
        self.sxid_last = None

    def _nvrm(self, body: str, line_no: int, emit: Emit) -> int:
        if "Xid (" in body or "Xid:" in body:
            return self._xid(body, line_no, emit)
        if "fallen off the bus" in body:
            return self._lost(body, line_no, emit, "fallen_off_bus")
        m = _MULTI_FIRST.search(body)
        if m:
            # First line of the 3-line probe message: every line of it gets the row
            self.lost_pending = gpu_bus_id(m.group(1))
            emit("gpu_lost", body, code="fallen_off_bus", device=self.lost_pending)
            return EVENT
        if "installed in this system has" in body and self.lost_pending:
            emit("gpu_lost", body, code="fallen_off_bus", device=self.lost_pending)
            return EVENT
        for needle, kind, code in _NVRM_OTHER:
            if needle in body:
                emit(kind, body, code=code, device=gpu_bus_id(body))
                return EVENT
        pr = _PROBE.search(body)
        if pr:
            emit("gpu_lost", body, code="probe_failed", device=gpu_bus_id(pr.group(1)))
            return EVENT
        if "RmInitAdapter failed" in body:
            self.last_rminit = True
            emit("gpu_lost", body, code="RmInitAdapter", device=gpu_bus_id(body))
            return EVENT
        if "rm_init_adapter failed" in body:
            # companion of "RmInitAdapter failed!" (alone on old drivers): same row
            emit("gpu_lost", body, code="RmInitAdapter", device=gpu_bus_id(body))
            return EVENT
        if "GPU is lost" in body:
            return self._lost(body, line_no, emit, "gpu_is_lost")
        g = _GSP_FN.search(body)
        if g:
            return self._gsp(body, g.group(1), g.group(2), emit)
        if _GSP_DETAIL.search(body):
            if not self.gsp_open:
                return NOISE
            emit("gsp_error", body, code=self.gsp_last, device=None)
            return EVENT
        a = _ASSERT.search(body)
        if a:
            self.last_rminit = False
            emit("nvrm_error", body, code=a.group(1), device=gpu_bus_id(body))
            return EVENT
        return NOISE

    def _xid(self, body: str, line_no: int, emit: Emit) -> int:
        m = _XID.search(body)
        if not m:
            return UNPARSED  # names an Xid but not in any known layout
        device = m.group(1).lower()
        code = m.group(2)
        pid: float | None = None
        p = _PID.match(m.group(3))
        if p and p.group(1).isdigit():
            pid = float(p.group(1))
        self.last_rminit = False
        emit("xid", body, code=code, device=device, value=pid)
        if code in ("119", "120"):
            self.gsp_open, self.gsp_last = True, "xid" + code
        return EVENT

    def _lost(self, body: str, line_no: int, emit: Emit, code: str) -> int:
        device = gpu_bus_id(body) or self.lost_pending
        self.lost_pending = None
        self.last_rminit = False
        emit("gpu_lost", body, code=code, device=device)
        return EVENT

    def _gsp(self, body: str, gpu: str | None, fn: str, emit: Emit) -> int:
        name = _FN_SUFFIX.sub("", fn)
        if name.startswith("kflcnCoreDump"):
            name = "core_dump"
        elif not any(w in body for w in _GSP_BAD):
            if not self.gsp_open:
                return NOISE  # e.g. _kgspProcessRpcEvent informational lines
            emit("gsp_error", body, code=self.gsp_last, device=gpu)  # a line of the report
            return EVENT
        if not (self.gsp_open and (name == "_kgspLogRpcTimeout" or self.gsp_last == name)):
            self.gsp_last = name  # a new report (else a line of the one that is open)
        self.gsp_open = True
        name = self.gsp_last or name
        emit("gsp_error", body, code=name, device=gpu)
        return EVENT

    def _sxid(self, body: str, emit: Emit) -> int:
        m = _SXID.search(body)
        if not m:
            return UNPARSED
        device = m.group(2).lower()
        code = str(int(m.group(3)))
        key = (device, code)
        self.sxid_last = key  # "Severity ..." / "Data {...}" lines continue it: same row
        emit("nvlink_error", body, code=code, device=device)
        return EVENT


def fabric_manager(msg: str, emit: Emit) -> int:
    """A ``nv-fabricmanager`` journal/syslog line: errors are nvlink_error, the rest noise."""
    if "[ERROR]" in msg or "failed with error" in msg:
        emit("nvlink_error", msg, code="fabricmanager")
        return EVENT
    return NOISE
