"""PCIe AER, machine checks (mce/EDAC) and Mellanox mlx5 / InfiniBand lines.

Formats:

* AER (drivers/pci/pcie/aer.c): the root port's header ``pcieport 0000:00:03.1: AER:
  [Multiple ]<severity> error received: 0000:3b:00.0`` (5.x), ``... error message received from
  0000:3b:00.0`` (6.x), ``... error received: id=00e0`` (4.x); then per device
  ``<drv> <bdf>: PCIe Bus Error: severity=<severity>, type=<layer>, (<agent>)`` and the detail
  lines ``  device [10de:2330] error status/mask=...`` and ``   [ 0] RxErr   (First)``.
  Severity strings: Corrected / Uncorrected (Non-Fatal) / Uncorrected (Fatal), renamed
  Correctable / Uncorrectable (...) in 6.x. Every line of a report gets a row: the header's
  row waits for the device line and then carries ``<header> -> <device line>`` (so the rule
  table can tell a GPU's report from a NIC's or a drive's), the detail lines repeat the
  device's severity. ``pcieport ...: DPC: containment event`` -> code ``dpc``.
* ``mce: [Hardware Error]: CPU %d: Machine Check%s: %Lx Bank %d: %016Lx`` (__print_mce,
  arch/x86/kernel/cpu/mce/core.c) and ``mce: [Hardware Error]: Machine check events logged``.
* ``EDAC MC1: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#2_DIMM#0 (...)``
  (edac_mc.c), older ``EDAC MC0: 4 CE error on CPU#0Channel#2_DIMM#0 (...)``.
* ``<drv> <bdf> <ibdev>: Port: 1 Link DOWN`` (ib_cache.c), ``mlx5_core <bdf> <netdev>: Link
  down``, ``mlx5_core <bdf>: Port module event[error]: module 0, Cable error, High
  Temperature``, ``... Port module event: module 1, Cable unplugged`` (mlx5 events.c),
  ``poll_health:...: device's health compromised - reached miss count`` (health.c),
  ``mlx5_cmd_out_err:838:(pid 1441871): ACCESS_REG(0x805) op_mod(0x1) failed, ...`` (cmd.c;
  ``mlx5_cmd_check:795:(pid 9993): ...`` before 5.16, the same message from mlx5_cmd_check()).
"""

from __future__ import annotations

import re

from parsers.base import EVENT, NOISE
from parsers.kernel_common import Emit, Env, full_bdf

_SEV = r"(Corrected|Correctable|Uncorrect(?:ed|able) \((?:Non-)?Fatal\))"
_AER_HEAD = re.compile(r"(?:AER: )?(Multiple )?" + _SEV +
                       r" error (?:received|message received from)[: ]+(\S+)")
_AER_DETAIL = re.compile(r"^(\S+) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): "
                         r"(?:AER: )?PCIe Bus Error: severity=" + _SEV)
_AER_BITS = re.compile(r"error status/mask=|\[\s?\d+\] \S|TLP Header:")
_MCE = re.compile(r"CPU (\d+): Machine Check( Exception)?: \w+ Bank (\d+): ([0-9a-fA-F]{16})")
_EDAC = re.compile(r"^EDAC (?:\S+ )?MC(\d+): (?:(\d+) )?(CE|UE) (?:.*? on )?([^ (]*)")
_IB_PORT = re.compile(r"(\S+): Port: (\d+) Link (\w+)")
_NET_DOWN = re.compile(r"^mlx5_core \S+ (\S+): Link down")
_CMD_ERR = re.compile(r"mlx5_cmd_(?:out_err|check):\d+:\(pid \d+\): (\w+)\(")
#: broad anchors -> the patterns every line holding only that anchor must match for
#: ``PciLines._mlx5`` to give it a row (``KernelMessages.CHECKED``): ``Port module event:
#: module 0, Cable plugged`` and other health chatter stay out of Python
CHECKED = {"Port module event": (r"Port module event(?:\[error\]|.*unplugged)",),
           "health": (r"health compromised|print_health_info|health_try_recover|health.*synd"
                      r"|synd.*health",)}


def aer_code(sev: str) -> str:
    """AER severity string (old or new wording) -> corrected / uncorrected_(non)fatal."""
    if sev.startswith("Correct"):
        return "corrected"
    return "uncorrected_nonfatal" if "Non-Fatal" in sev else "uncorrected_fatal"


def _aer_source(src: str, port_bdf: str | None) -> str | None:
    """Source of an AER header: a BDF, or (4.x) ``id=00e0`` = bus<<8 | devfn, in the
    reporting port's PCI domain."""
    if src.startswith("id="):
        try:
            rid = int(src[3:].rstrip(","), 16)
        except ValueError:
            return None
        domain = port_bdf[:4] if port_bdf else "0000"
        return f"{domain}:{rid >> 8:02x}:{(rid & 0xff) >> 3:02x}.{rid & 7}"
    return full_bdf(src)


class PciLines:
    """AER blocks, MCE/EDAC and mlx5/IB recognisers with their block state."""

    def __init__(self) -> None:
        #: AER header waiting for its detail lines: (env, message, code, source device)
        self.aer_head: tuple[Env, str, str, str | None] | None = None
        self.aer_open = False  #: inside an AER report (detail lines are part of it)
        self.aer_code: str | None = None  #: severity of the device line of the open report
        self.aer_dev: str | None = None
        self.aer_detail: str | None = None
        self.mce_open = False
        self.mce_code: str | None = None
        self.mlx5_health_open = False

    def flush(self, emit: Emit) -> None:
        """Emit an AER header whose per-device details never came (no row would be lost)."""
        if self.aer_head:
            env, msg, code, dev = self.aer_head
            self.aer_head = None
            emit("pcie_aer", msg, code=code, device=dev, env=env)

    def match(self, body: str, emit: Emit, env: Env) -> int | None:
        """Classify AER / mce / EDAC / mlx5 lines; None when the line is none of these."""
        if self.aer_open:
            if (_AER_BITS.search(body) or "recovery failed" in body) \
                    and "PCIe Bus Error" not in body:
                detail = f" -> {self.aer_detail}" if self.aer_detail else ""
                emit("pcie_aer", body + detail, code=self.aer_code, device=self.aer_dev)
                return EVENT
            if "AER" not in body and "PCIe Bus Error" not in body:
                self.flush(emit)
                self.aer_open = False
        if "AER" in body or "PCIe Bus Error" in body:
            return self._aer(body, emit, env)
        if "DPC: containment event" in body:
            emit("pcie_aer", body, code="dpc", device=full_bdf(body))
            return EVENT
        if "[Hardware Error]" in body or body.startswith("mce: "):
            return self._mce(body, emit)
        self.mce_open = False
        if body.startswith("EDAC"):
            return self._edac(body, emit)
        if "mlx5" in body or "Link" in body:
            return self._mlx5(body, emit)
        return None

    def _aer(self, body: str, emit: Emit, env: Env) -> int:
        d = _AER_DETAIL.search(body)
        if d:
            if self.aer_head is not None:  # the header's row names this device now
                henv, hmsg, _hcode, _hdev = self.aer_head
                emit("pcie_aer", f"{hmsg} -> {body}", code=aer_code(d.group(3)),
                     device=d.group(2).lower(), env=henv)
            self.aer_head = None
            self.aer_open = True
            self.aer_code, self.aer_dev = aer_code(d.group(3)), d.group(2).lower()
            self.aer_detail = body
            emit("pcie_aer", body, code=self.aer_code, device=self.aer_dev)
            return EVENT
        h = _AER_HEAD.search(body)
        if h:
            self.flush(emit)
            port = full_bdf(body.split(" AER", 1)[0])
            src = _aer_source(h.group(3), port)
            self.aer_head = (env, body, aer_code(h.group(2)), src)
            self.aer_open = True
            self.aer_code, self.aer_dev, self.aer_detail = aer_code(h.group(2)), src, None
            return EVENT
        if not self.aer_open and ("AER: device recovery failed" in body
                                  or "can't recover (no error_detected" in body):
            # drivers/pci/pcie/err.c, without the report before it (cut off, or pasted
            # alone): the device stays failed, which only an uncorrectable error does
            emit("pcie_aer", body, code="uncorrected_fatal", device=full_bdf(body))
            return EVENT
        return NOISE  # "AER: enabled with IRQ", "device recovery successful", ...

    def _mce(self, body: str, emit: Emit) -> int:
        m = _MCE.search(body)
        if m:
            status = int(m.group(4), 16)
            uc = bool(status >> 61 & 1) or bool(m.group(2))
            self.mce_open = True
            self.mce_code = "uncorrected" if uc else "corrected"
            emit("mce", body, code=self.mce_code,
                 device=f"cpu{m.group(1)}/bank{m.group(3)}")
            return EVENT
        if "Machine check events logged" in body:
            emit("mce", body, code="events_logged")
            return EVENT
        if "temperature above threshold" in body:
            emit("mce", body, code="thermal_throttle")
            return EVENT
        if "[Hardware Error]" in body:
            if not self.mce_open:
                return NOISE
            emit("mce", body, code=self.mce_code)
            return EVENT
        return NOISE  # "mce: CPU12: Core temperature/speed normal", init lines

    def _edac(self, body: str, emit: Emit) -> int:
        m = _EDAC.search(body)
        if not m:
            return NOISE  # decoder chatter ("HANDLING MCE MEMORY ERROR", "TSC 0", ...)
        where = m.group(4) or ""
        device = f"mc{m.group(1)}" + (f":{where}" if where and where != "page" else "")
        emit("edac", body, code=m.group(3), device=device,
             value=float(m.group(2)) if m.group(2) else 1.0)
        return EVENT

    def _mlx5(self, body: str, emit: Emit) -> int | None:
        p = _IB_PORT.search(body)
        if p:
            if p.group(3) != "DOWN":
                return NOISE
            emit("ib_link_down", body, code="DOWN", device=f"{p.group(1)}/{p.group(2)}")
            return EVENT
        n = _NET_DOWN.search(body)
        if n:
            emit("ib_link_down", body, code="link_down", device=n.group(1))
            return EVENT
        if not body.startswith(("mlx5_core", "infiniband mlx5", "mlx5_ib")):
            return None
        dev = full_bdf(body)
        if "Port module event" in body:
            if "[error]" in body:
                emit("mlx5_error", body, code="module_error", device=dev)
                return EVENT
            if "unplugged" in body:
                emit("mlx5_error", body, code="cable_unplugged", device=dev)
                return EVENT
            return NOISE
        if "health compromised" in body or "Fatal error" in body:
            self.mlx5_health_open = True
            emit("mlx5_error", body, code="health_compromised", device=dev)
            return EVENT
        if "print_health_info" in body or ("health" in body and "synd" in body) \
                or "health_try_recover" in body:
            emit("mlx5_error", body, code="health_compromised", device=dev)
            self.mlx5_health_open = True
            return EVENT
        self.mlx5_health_open = False
        if ": CQ error on CQN " in body:
            # eq.c mlx5_eq_async_int (mlx5_eq_int before 5.x), MLX5_EVENT_TYPE_CQ_ERROR:
            # mlx5_core_warn(dev, "CQ error on CQN 0x%x, syndrome 0x%x\n", ...) ("syndrom" in
            # 3.x/4.x): a completion queue overran or hit an access error; its QPs are in error
            emit("mlx5_error", body, code="error_cqe", device=dev)
            return EVENT
        c = _CMD_ERR.search(body)
        if c:
            emit("mlx5_error", body, code="cmd_out_err", device=dev)
            return EVENT
        if "timeout. Will cause a leak of a command resource" in body:
            emit("mlx5_error", body, code="cmd_timeout", device=dev)
            return EVENT
        return NOISE
