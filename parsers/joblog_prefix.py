"""Prefixes that launchers and loggers put in front of a training job's output lines.

``split_prefix`` peels them off, outermost first, and returns the line's own timestamp (if
any), the rank (if a prefix names one) and the remaining message. Layers recognised (each
verified against the program that writes it):

* RFC 3339 / ISO stamps at the start of the line: ``kubectl logs --timestamps``
  (``2024-05-01T12:00:00.123456789Z msg``, RFC3339Nano), the kubelet's CRI log files
  (``2024-05-01T12:00:00.123456789Z stdout F msg``), ``ts -s``-style ISO stamps, and
  Python logging's default ``asctime`` (``2024-05-01 12:00:00,123``), optionally followed by
  the common `` - LEVEL - `` separator of ``"%(asctime)s - %(levelname)s - ..."`` formats.
* ``srun --label``: ``%*d: `` (the task id right-aligned, then ``": "``).
* ``kubectl logs --prefix``: ``[pod/NAME/CONTAINER] ``.
* torchrun ``--tee`` / ``--log-line-prefix-template`` prefixes ``[default3]:`` (role + *local*
  rank, torch.distributed.elastic) and ``[rank3]:`` (global rank).
* DeepSpeed's logger (deepspeed/utils/logging.py):
  ``[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] %(message)s``.
* HF Trainer examples' format: ``[%(levelname)s|%(filename)s:%(lineno)s] %(asctime)s >> msg``.
* A bracketed stamp ``[2024-05-01 12:00:00]`` / ``[2024-05-01 12:00:00.123456]`` (Megatron-LM
  training_log and checkpointing.py, NCCL_DEBUG_TIMESTAMP_FORMAT's default ``[%F %T]``).
* Python's ``logging.basicConfig`` default ``LEVEL:logger.name:`` (BASIC_FORMAT).

Decisions: the first (outermost) stamp is the line's timestamp -- a collector's stamp
(kubectl, ts) is written when the line is produced and usually carries a zone, inner stamps
are later layers of the same moment. ``[defaultN]`` is torchrun's *local* rank; it is reported
as ``rank`` as given (the only rank the line names), see joblog.py.
"""

from __future__ import annotations

import re
from datetime import tzinfo

from parsers.timeutil import MONTHS, TimeError, iso_match_to_us, local_to_us

#: after the stamp: `` - LEVEL - `` (``%(asctime)s - %(levelname)s - ...``), HF's `` >> ``
#: (``[%(levelname)s|%(filename)s:%(lineno)s] %(asctime)s >> %(message)s``, its head cut off in
#: a paste: huggingface/transformers#36076), a space, or
#: Composer / llm-foundry's ``: rank0[11406][MainThread]: INFO: composer.trainer.trainer: ``
#: (``%(asctime)s: rank{r}[%(process)d][%(threadName)s]: %(levelname)s: %(name)s: ``)
_ISO = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d(?::?\d\d)?)?"
    r"(?: - (?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) - )?"
    r"|: (?:rank\d+\[\d+\]\[[^\]]*\]: (?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL): (?:[\w.]+: )?)?)?"
    r"| >> | |$)"
)
_SRUN_LABEL = re.compile(r" *(\d{1,7}): ")
#: the kubelet's CRI log line after its stamp (/var/log/pods/NS_POD_UID/CONTAINER/N.log,
#: k8s.io/cri-api ... kuberuntime logs: ``<RFC3339Nano> <stdout|stderr> <F|P> <msg>``)
_CRI = re.compile(r"(?:stdout|stderr) [FP] ")
_TORCHRUN = re.compile(r"\[(?:default|rank)(\d{1,7})\]: ?")
#: ``kubectl logs --prefix`` (kubectl/pkg/cmd/logs/logs.go ``"[pod/%s/%s] "``: pod, container),
#: before ``--timestamps``' stamp when both are asked for
KUBECTL_PREFIX = re.compile(r"\[pod/[^/\s\]]+/[^\s\]]*\] ")
#: Open MPI ``mpirun --tag-output``: ``[jobid,rank]<stdout>:`` (orte/mca/iof)
MPIRUN_TAG = re.compile(r"\[\d+,(\d+)\]<std(?:out|err)>: ?")
#: ``mpirun --timestamp-output --tag-output``: ctime(3) glued to the tag (Open MPI's iof:
#: ``Fri Aug 11 12:31:45 2023[1,0]<stdout>:``, pasted in NVIDIA/nccl#957), local time
MPIRUN_CTIME = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
    r"([ \d]\d) (\d\d):(\d\d):(\d\d) (\d{4})(?=\[\d+,\d+\]<std(?:out|err)>:)")


def ctime_stamp(m: re.Match[str], tz: tzinfo) -> tuple[int, str] | None:
    """Epoch us and flag of an ``MPIRUN_CTIME`` match."""
    try:
        return local_to_us(int(m.group(6)), MONTHS[m.group(1).lower()], int(m.group(2)),
                           int(m.group(3)), int(m.group(4)), int(m.group(5)), 0, tz), "assumed_tz"
    except (ValueError, OverflowError):
        return None


#: torchtitan's logger (torchtitan/tools/logging.py init_logger): ``[titan] %(asctime)s -
#: %(name)s - %(levelname)s - %(message)s``; the stamp behind it is read as any ISO stamp
_TITAN = re.compile(r"\[titan\] (?=\d{4}-\d\d-\d\d )")
#: Ray's worker prefix (ray/_private/log_monitor.py): ``(RayWorker pid=1234) ``,
#: ``(pid=1234, ip=10.0.0.1) ``, ``(TrainTrainable pid=None) ``
RAY = re.compile(r"\((?:[A-Za-z_][\w.]*(?: pid=(?:\d+|None))?|pid=\d+)"
                 r"(?:, ip=[\d.:a-fA-F]+)?\) ")
#: pdsh / DeepSpeed's multi-node runner: ``worker-0: `` (the host name, ending in a digit);
#: not a kernel device name the driver puts first (IPoIB ``ib0: transmit timeout``, ``eth0:``,
#: ``enp8s0f1:``, ``bond0:``, ``nvme0n1:``, ``sda1:``, ``md0:``): those are the message
PDSH = re.compile(r"(?!(?:slurmstepd|srun|sbatch|salloc|slurmd|slurmctld)\b)"
                  r"(?!(?:ib\d+(?:\.\w+)?|eth\d+|en[ops]\w*\d|bond\d+|nvme\d+(?:n\d+(?:p\d+)?)?"
                  r"|sd[a-z]+\d+|md\d+): )[a-z][a-z0-9.\-]*\d: ")
_DEEPSPEED = re.compile(
    r"\[((\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d),(\d{3}))\] \[([A-Z]+)\] \[[^\]\s]+\] ")
_HF = re.compile(
    r"\[([A-Z]+)\|[^\]\s]+\] (\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d),(\d{3}) >> ")
_BRACKET = re.compile(r" *\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?\] ?")
_PYLOG = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:")
#: Megatron's print_datetime: ``[after dataloaders are built] datetime: 2024-05-01 12:00:00``
MEGATRON_DATETIME = re.compile(
    r"^\[[^\]]+\] datetime[:=] ?(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?")


class Prefix:
    """Result of ``split_prefix`` (a tiny mutable record, reused to avoid allocations)."""

    __slots__ = ("flag", "level", "msg", "rank", "ts")

    def __init__(self) -> None:
        self.level: str | None = None  #: level of a DeepSpeed / HF logger envelope
        self.ts: int | None = None
        self.flag: str | None = None
        self.rank: int | None = None
        self.msg: str = ""


def _stamp(m: re.Match[str], tz: tzinfo, first: int) -> tuple[int, str] | None:
    """Epoch us and flag from groups first..first+6 (y, mo, d, h, mi, s, frac) of ``m``."""
    try:
        y, mo, d, h, mi, s = (int(m.group(first + i)) for i in range(6))
        frac = m.group(first + 6)
        us = int((frac + "000000")[:6]) if frac else 0
        return local_to_us(y, mo, d, h, mi, s, us, tz), "assumed_tz"
    except (ValueError, OverflowError):
        return None


def split_prefix(text: str, tz: tzinfo, out: Prefix) -> Prefix:
    """Peel known prefixes off ``text`` into ``out`` (see module docstring)."""
    out.ts = out.flag = out.rank = out.level = None
    pos = 0
    if text[:1] == "`" and len(text) > 2 and text.rstrip().endswith("`"):
        # an inline-code paste of a line (`` `srun: error: ...` ``): its backticks go. A
        # quote's ``> `` stays: Megatron's own messages begin with it
        text, pos = text.rstrip()[:-1], 1
    n = len(text)
    for _ in range(8):
        if pos >= n:
            break
        c = text[pos]
        m: re.Match[str] | None = None
        if c.isdigit():
            m = _ISO.match(text, pos)
            if m is not None:
                if out.ts is None:
                    try:
                        out.ts, out.flag = iso_match_to_us(m, tz)
                    except (TimeError, ValueError, OverflowError):
                        m = None
                if m is not None:
                    pos = m.end()
                    cri = _CRI.match(text, pos)  # a kubelet's CRI log file: stream and tag
                    if cri is not None:
                        pos = cri.end()
                    continue
        if c.isdigit() or c == " ":
            m = _SRUN_LABEL.match(text, pos)
            if m is not None:
                if out.rank is None:
                    out.rank = int(m.group(1))
                pos = m.end()
                continue
            if c != " ":
                break
            m = _BRACKET.match(text, pos)
            if m is not None:
                _keep_first(out, _stamp(m, tz, 1))
                pos = m.end()
                continue
            break
        if c == "[":
            m = _TORCHRUN.match(text, pos) or MPIRUN_TAG.match(text, pos)
            if m is not None:
                if out.rank is None:
                    out.rank = int(m.group(1))
                pos = m.end()
                continue
            m = _TITAN.match(text, pos) or KUBECTL_PREFIX.match(text, pos)
            if m is not None:  # the stamp after it is read next
                pos = m.end()
                continue
            m = _DEEPSPEED.match(text, pos)
            if m is not None:
                out.level = m.group(9)
                _keep_first(out, _stamp(m, tz, 2))
                pos = m.end()
                continue
            m = _HF.match(text, pos)
            if m is not None:
                out.level = m.group(1)
                _keep_first(out, _stamp(m, tz, 2))
                pos = m.end()
                continue
            m = _BRACKET.match(text, pos)
            if m is not None:
                _keep_first(out, _stamp(m, tz, 1))
                pos = m.end()
                continue
            break
        if c.isupper():
            m = _PYLOG.match(text, pos) or MPIRUN_CTIME.match(text, pos)
            if m is not None:
                if m.re is MPIRUN_CTIME:
                    _keep_first(out, ctime_stamp(m, tz))
                pos = m.end()
                continue
        if c == "(":
            m = RAY.match(text, pos)
            if m is not None:
                pos = m.end()
                continue
        if c.islower() and pos == 0:
            m = PDSH.match(text, pos)
            if m is not None:
                pos = m.end()
                continue
        break
    out.msg = text[pos:] if pos else text
    if out.ts is None and out.msg.startswith("[") and "] datetime" in out.msg:
        m2 = MEGATRON_DATETIME.match(out.msg)
        if m2 is not None:
            st = _stamp(m2, tz, 1)
            if st is not None:
                out.ts, out.flag = st
    return out


def _keep_first(out: Prefix, st: tuple[int, str] | None) -> None:
    """The outermost stamp on a line wins: later (inner) stamps do not replace it."""
    if st is not None and out.ts is None:
        out.ts, out.flag = st
