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
            "unexpected", "CRASH")
_GSP_DETAIL = re.compile(r"NVRM: (?:GPU\d+ )?(?:RPC history|RPC event history|GSP RPC buffer"
                         r"|\s{3,}|_kgspLogRpcTimeout)")
_ASSERT = re.compile(r"(nvAssert\w*|nvCheck\w*Failed\w*|nvGpuOpsReportFatalError)")
_SXID = re.compile(r"(\S+): SXid \(PCI:([0-9a-fA-F:.]+)\): (\d+), (.*)")
_MULTI_FIRST = re.compile(r"NVRM: The NVIDIA GPU ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}"
                          r"\.[0-7])\s*$")


class NvidiaLines:
    """Recogniser for NVIDIA lines; keeps the small state multi-line reports need."""

    def __init__(self) -> None:
        self.gsp_open = False  #: inside a GSP timeout / Xid 119-120 report
        self.gsp_last: str | None = None  #: code of the last gsp_error row of this block
        self.lost_pending: str | None = None  #: device of "The NVIDIA GPU X" (3-line block)
        self.xid79: tuple[str, int] | None = None  #: (device, line_no) of the last Xid 79
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
        if "Xid" in body:
            return self._xid(body, line_no, emit)
        if "fallen off the bus" in body:
            return self._lost(body, line_no, emit, "fallen_off_bus")
        m = _MULTI_FIRST.search(body)
        if m:
            # First line of the 3-line probe message; the row is emitted on its last line.
            self.lost_pending = gpu_bus_id(m.group(1))
            return EVENT
        if "installed in this system has" in body and self.lost_pending:
            return EVENT
        if "RmInitAdapter failed" in body:
            self.last_rminit = True
            emit("gpu_lost", body, code="RmInitAdapter", device=gpu_bus_id(body))
            return EVENT
        if "rm_init_adapter failed" in body:
            # Companion of "RmInitAdapter failed!"; alone (old drivers) it is the signal.
            if self.last_rminit:
                return EVENT
            emit("gpu_lost", body, code="RmInitAdapter", device=gpu_bus_id(body))
            return EVENT
        if "GPU is lost" in body:
            return self._lost(body, line_no, emit, "gpu_is_lost")
        g = _GSP_FN.search(body)
        if g:
            return self._gsp(body, g.group(1), g.group(2), emit)
        if _GSP_DETAIL.search(body):
            return EVENT if self.gsp_open else NOISE
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
        if code == "79":
            self.xid79 = (device, line_no)
        if code in ("119", "120"):
            self.gsp_open, self.gsp_last = True, "xid" + code
        return EVENT

    def _lost(self, body: str, line_no: int, emit: Emit, code: str) -> int:
        device = gpu_bus_id(body) or self.lost_pending
        self.lost_pending = None
        self.last_rminit = False
        if (self.xid79 and device == self.xid79[0] and line_no - self.xid79[1] <= 20
                and code == "fallen_off_bus"):
            return EVENT  # the driver's own echo of the Xid 79 just logged
        emit("gpu_lost", body, code=code, device=device)
        return EVENT

    def _gsp(self, body: str, gpu: str | None, fn: str, emit: Emit) -> int:
        name = _FN_SUFFIX.sub("", fn)
        if name.startswith("kflcnCoreDump"):
            name = "core_dump"
        elif not any(w in body for w in _GSP_BAD):
            return NOISE  # e.g. _kgspProcessRpcEvent informational lines
        if name == "_kgspLogRpcTimeout" and self.gsp_open:
            return EVENT  # banner / details of the Xid 119 just logged
        if self.gsp_open and self.gsp_last == name:
            return EVENT  # repeated line of the same report: one row per block
        self.gsp_open, self.gsp_last = True, name
        emit("gsp_error", body, code=name, device=gpu)
        return EVENT

    def _sxid(self, body: str, emit: Emit) -> int:
        m = _SXID.search(body)
        if not m:
            return UNPARSED
        device = m.group(2).lower()
        code = str(int(m.group(3)))
        rest = m.group(4)
        key = (device, code)
        if not rest.startswith(("Fatal", "Non-fatal")) and self.sxid_last == key:
            return EVENT  # "Severity ..." / "Data {...}" continuation of the same SXid
        self.sxid_last = key
        emit("nvlink_error", body, code=code, device=device)
        return EVENT


def fabric_manager(msg: str, emit: Emit) -> int:
    """A ``nv-fabricmanager`` journal/syslog line: errors are nvlink_error, the rest noise."""
    if "[ERROR]" in msg or "failed with error" in msg:
        emit("nvlink_error", msg, code="fabricmanager")
        return EVENT
    return NOISE
