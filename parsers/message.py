"""The message layer: every recogniser, tried on every line of every file.

A *recogniser* knows one family of messages (NVIDIA driver, PCIe/MCE/mlx5, host kernel, Slurm
daemons, srun/slurmstepd, NCCL, PyTorch distributed, Megatron, DeepSpeed, HF Trainer,
Kubernetes text, and the data signatures of ``parsers/signatures/*.toml``). It gets a message
(prefixes already peeled by the file's dialect or by ``parsers.prefix``) and returns EVENT or
NOISE when it claims the line, emitting rows through ``emit(**fields)``, or None.

The file's sniffed source (its *dialect*: kernel log, job output, Slurm daemon log, ...) decides
the envelope, the metadata defaults and which recognisers go first; it never decides which are
tried: what the dialect's own recognisers leave goes to all the others (``MessageLayer``).

Every recogniser declares ``SIGNAL``: literal anchors (and ``SIGNAL_RE``, Rust-regex anchors)
at least one of which is in every line it can claim while it holds no open multi-line block
(``is_open``). The ingest prefilter (``parsers.anchors``) is built from these declarations and
from the data signatures' own patterns, so a line without any anchor never reaches Python;
tests check every recogniser's example lines against it. ``CHECKED`` maps a broad anchor to
the patterns a line holding it must also match to be claimable (parsers/relax.py), when it
holds no other anchor: the signatures' anchors are checked by their own patterns likewise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, tzinfo
from functools import lru_cache
from typing import Any, ClassVar, Protocol

import numpy as np
import polars as pl

from parsers import kernel_host, kernel_pci
from parsers.anchors import CompiledPrefilter, Prefilter
from parsers.base import EVENT, NOISE, Emit, FileContext, never_open
from parsers.gate import gate_of
from parsers.kernel_common import Env
from parsers.kernel_host import HostLines
from parsers.kernel_nvidia import NvidiaLines
from parsers.kernel_pci import PciLines
from parsers.prefilter import enabled as prefilter_enabled
from parsers.relax import relaxed
from parsers.timeutil import YearInference


class Recogniser(Protocol):
    """One family of messages (see module docstring)."""

    SIGNAL: ClassVar[tuple[str, ...]]
    SIGNAL_RE: ClassVar[tuple[str, ...]]

    def match(self, text: str, line_no: int, emit: Emit) -> int | None: ...

    def finish(self, emit: Emit) -> None: ...

    def is_open(self) -> bool: ...


def prefilter_of(recognisers: Iterable[Any], claims: bool = True) -> Prefilter:
    """The union of the recognisers' declared anchors (with their noise claims, or only the
    lines they can emit a row for)."""
    pf = Prefilter()
    for r in recognisers:
        pf.literals.update(getattr(r, "SIGNAL", ()))
        for lit, patterns in getattr(r, "CHECKED", {}).items():
            rx = [relaxed(x) for x in patterns]
            if any(x is None for x in rx):  # (cannot be confirmed: a plain anchor)
                pf.literals.add(lit)
            else:
                key = "|".join(f"(?:{x})" for x in rx)
                pf.checked[key] = (*pf.checked.get(key, ()), lit)
        pf.regexes.update(getattr(r, "SIGNAL_RE", ()))
        if claims:
            pf.literals.update(getattr(r, "CLAIMS", ()))
        extra = getattr(r, "prefilter", None)
        if callable(extra):
            pf.update(extra())
    return pf


class KernelMessages:
    """The kernel's signal recognisers (NVIDIA, PCIe/MCE/EDAC/mlx5/IB, host) for kernel
    messages found outside a kernel log: a job's .err, a paste, a journal export read as text.
    Same code as the kernel dialect, so the same line gives the same row."""

    #: every line these recognisers can emit a row for contains one of these
    SIGNAL: ClassVar[tuple[str, ...]] = (
        "NVRM", "SXid", "AER", "PCIe Bus Error", "DPC: containment", "[Hardware Error]",
        "Machine Check", "Machine check", "temperature above threshold", "EDAC", "Link DOWN",
        "Link down", "Fatal error", "mlx5_cmd_out_err", "mlx5_cmd_check", ": CQ error on CQN ",
        "Will cause a leak", "Killed process", "Kill process", "oom-kill:",
        "invoked oom-killer", "I/O error", "medium error", "target error",
        "XFS (", "LustreError:", "nfs: server", "Aborting journal",
        "capacity change", "INFO: task", "soft lockup", "Kernel panic", "BUG: ", "Oops: ",
        "general protection fault", "#PF: ", "Memory failure: ")
    SIGNAL_RE: ClassVar[tuple[str, ...]] = ()
    #: ... and every line they call noise (outside a kernel log that matters for accounting)
    #: (the checked anchors too: a line holding one is claimed, as noise if not as an event)
    CLAIMS: ClassVar[tuple[str, ...]] = ("mlx5", "Link", "mce: ", "oom_reaper:", "Port: ",
                                         *kernel_host.CHECKED, *kernel_pci.CHECKED)
    #: broad anchors: a line holding one (and no other anchor) is a candidate only if it
    #: matches what the recogniser can give a row for (``kernel_host``, ``kernel_pci``)
    CHECKED: ClassVar[dict[str, tuple[str, ...]]] = {**kernel_host.CHECKED,
                                                     **kernel_pci.CHECKED}

    def __init__(self) -> None:
        self.nv = NvidiaLines()
        self.pci = PciLines()
        self.host = HostLines()
        self._emit: Emit | None = None
        self._line = 0

    def match(self, text: str, line_no: int, emit: Emit) -> int | None:
        self._emit, self._line = emit, line_no
        if "NVRM" in text or "SXid" in text:
            r = self.nv.match(text, line_no, self._kemit)
            if r is not None:
                return r
        self.nv.other_line()
        env = Env(None, "missing", None, None, "kernel", line_no)
        r = self.pci.match(text, self._kemit, env)
        if r is not None:
            return r
        return self.host.match(text, self._kemit)

    def _kemit(self, kind: str, message: str, *, code: str | None = None,
               device: str | None = None, value: float | None = None,
               job_id: str | None = None, env: Env | None = None) -> None:
        assert self._emit is not None
        fields: dict[str, Any] = {"kind": kind, "message": message, "code": code,
                                  "device": device, "value": value, "job_id": job_id,
                                  "format": "kernel"}
        if env is not None and env.line_no != self._line:
            fields["line_no"] = env.line_no
        self._emit(**fields)

    def finish(self, emit: Emit) -> None:
        self._emit = emit
        self.pci.flush(self._kemit)

    def is_open(self) -> bool:
        nv, pci = self.nv, self.pci
        return bool(nv.gsp_open or nv.lost_pending or nv.sxid_last or pci.aer_open
                    or pci.mce_open or pci.mlx5_health_open or self.host.oom_job)


class MessageLayer:
    """All recognisers for one file, in a dialect's order; ``match`` tries them in turn."""

    def __init__(self, recognisers: list[Any]) -> None:
        self.recognisers = recognisers
        #: those that can hold a block open: ``is_open`` runs for every candidate line, and
        #: most recognisers never hold one (``never_open``)
        self.openable = [r for r in recognisers if type(r).is_open is not never_open]
        #: the recognisers that can claim a message, from their anchors (``parsers.gate``)
        self.gate = gate_of(recognisers) if prefilter_enabled() else None
        self._open_bits = [(1 << i, r) for i, r in enumerate(recognisers)
                           if type(r).is_open is not never_open]

    def match(self, text: str, line_no: int, emit: Emit) -> int | None:
        """EVENT as soon as one recogniser emits; NOISE if one claimed it as a line without
        a signal and no later one found a signal in it; None if nobody knows it. Only the
        recognisers with an anchor in ``text`` or an open block are asked (``gate``)."""
        status: int | None = None
        asked = self.recognisers
        if self.gate is not None:
            bits = self.gate.mask(text)
            for bit, r in self._open_bits:
                if not bits & bit and r.is_open():
                    bits |= bit
            asked = [r for i, r in enumerate(self.recognisers) if bits >> i & 1]
        for r in asked:
            st = r.match(text, line_no, emit)
            if st == EVENT:
                return EVENT
            if st == NOISE:
                status = NOISE
        return status

    def finish(self, emit: Emit) -> None:
        for r in self.recognisers:
            r.finish(emit)

    def is_open(self) -> bool:
        return any(r.is_open() for r in self.openable)


def all_recognisers(ctx: FileContext | None = None, *, tz: tzinfo = UTC,
                    years: YearInference | None = None,
                    skip: tuple[type, ...] = ()) -> list[Any]:
    """A fresh instance of every recogniser, in the default order, except ``skip``."""
    from parsers.deepspeed import DeepSpeedMatcher
    from parsers.hf_trainer import HfTrainerMatcher
    from parsers.k8s_text import K8sText
    from parsers.megatron import MegatronMatcher
    from parsers.nccl import NcclMatcher
    from parsers.signature_table import SignatureMatcher
    from parsers.slurm_messages import CtldMessages, SlurmdMessages
    from parsers.slurm_step import SlurmStepMatcher
    from parsers.torch_dist import TorchDistMatcher

    tz = ctx.tz if ctx is not None else tz
    makers: list[tuple[type, Callable[[], Any]]] = [
        (KernelMessages, KernelMessages),
        (SlurmStepMatcher, lambda: SlurmStepMatcher(tz)),
        (CtldMessages, CtldMessages),
        (SlurmdMessages, SlurmdMessages),
        (NcclMatcher, lambda: NcclMatcher(ctx)),
        (TorchDistMatcher, lambda: TorchDistMatcher(ctx)),
        (MegatronMatcher, MegatronMatcher),
        (DeepSpeedMatcher, DeepSpeedMatcher),
        (HfTrainerMatcher, HfTrainerMatcher),
        (K8sText, lambda: K8sText(tz, years)),
        (SignatureMatcher, SignatureMatcher),
    ]
    return [make() for cls, make in makers if cls not in skip]


class Fallback:
    """What a dialect does with what its own recognisers leave: the other recognisers on the
    message, and the prefix layer plus all recognisers on a line without the dialect's
    envelope (a pasted line, another program's output in the same file)."""

    def __init__(self, ctx: FileContext, skip: tuple[type, ...] = ()) -> None:
        from parsers.prefix import Peeled

        self.years = YearInference(ctx.mtime, ctx.year)
        self.tz = ctx.tz
        self._ctx = ctx
        self.layer = MessageLayer(all_recognisers(ctx, years=self.years, skip=skip))
        #: every recogniser (``raw``), made at the first line that needs it: most files of a
        #: dialect have none (a fleet's 2,048 node logs: ~0.07 ms each spared)
        self._full: MessageLayer | None = None if skip else self.layer
        self.peeled_rec = Peeled()

    @property
    def full(self) -> MessageLayer:
        if self._full is None:
            self._full = MessageLayer(all_recognisers(self._ctx, years=self.years))
        return self._full

    def message(self, text: str, line_no: int, emit: Emit) -> int | None:
        """The recognisers the dialect does not run itself, on an already peeled message."""
        return self.layer.match(text, line_no, emit)

    def peeled(self, text: str, line_no: int,
               emit_for: Callable[[Any], Emit]) -> int | None:
        """The other recognisers on ``text`` after the prefix layer (for a dialect whose own
        prefix handling left an unknown wrapper on the message)."""
        from parsers.prefix import peel

        p = peel(text, self.tz, self.years, self.peeled_rec)
        if not p.msg.strip():
            return None
        return self.layer.match(p.msg, line_no, emit_for(p))

    def raw(self, text: str, line_no: int,
            emit_for: Callable[[Any], Emit]) -> int | None:
        """A line without the dialect's envelope: peel what can be peeled, try everything."""
        from parsers.prefix import peel, strip_ansi

        if "\r" in text:  # tqdm redraws and what was glued behind them: each part is judged
            seen = {self.raw(strip_ansi(part), line_no, emit_for)
                    for part in text.split("\r") if part.strip()}
            return EVENT if EVENT in seen else (NOISE if NOISE in seen else None)
        p = peel(text, self.tz, self.years, self.peeled_rec)
        if not p.msg.strip():
            return None
        return self.full.match(p.msg, line_no, emit_for(p))

    def finish(self, emit: Emit) -> None:
        self.layer.finish(emit)
        if self._full is not None and self._full is not self.layer:
            self._full.finish(emit)

    def is_open(self) -> bool:
        full = self._full
        return self.layer.is_open() or (full is not None and full is not self.layer
                                         and full.is_open())


def peeled_fields(p: Any) -> dict[str, Any]:
    """Row fields a peeled prefix gives: time, uptime, host, rank (for a dialect's emit)."""
    out: dict[str, Any] = {}
    if p.ts is not None:
        out["ts"], out["ts_flag"] = p.ts, p.flag
    if p.uptime_s is not None:
        out["uptime_s"] = p.uptime_s
        if p.ts is None:
            out["ts_flag"] = "uptime"
    if p.host:
        out["host"] = p.host
    if p.rank is not None:
        out["rank"] = p.rank
    return out


# -- the prefilter of the whole layer (parsers/prefilter.py) ---------------------------------
@lru_cache(maxsize=8)
def _compiled(extra_key: tuple[str, ...], claims: bool) -> CompiledPrefilter:
    pf = prefilter_of(all_recognisers(), claims=claims)
    return pf.compiled()


def global_prefilter(claims: bool = True) -> CompiledPrefilter:
    """The prefilter of every recogniser and signature (and ``--rules`` text signatures):
    with ``claims``, also the lines a recogniser calls noise."""
    from parsers.signature_table import EXTRA

    return _compiled(tuple(s.id for s in EXTRA), claims)


def candidates_with_default_noise(lines: pl.Series, default_noise: np.ndarray,
                                  signal: np.ndarray | None = None) -> np.ndarray:
    """Candidates for a dialect whose own rule already calls ``default_noise`` lines NOISE:
    there only a recogniser's possible events matter; elsewhere its noise claims too.
    ``signal``: the claims-free prefilter's mask, if already computed."""
    cand = global_prefilter(claims=False).mask_np(lines) if signal is None else signal.copy()
    rest = ~default_noise & ~cand
    if rest.any():
        idx = np.flatnonzero(rest)
        cand[idx] = global_prefilter(claims=True).mask_np(lines.gather(idx))
    return np.asarray(cand, dtype=bool)


