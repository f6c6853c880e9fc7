"""Shared pieces of the kernel-log parser: the per-line envelope and the emit callback.

The envelope (``Env``) is what the line's wrapper (dmesg, journalctl, syslog) says: when,
on which host, in which format. Signal recognisers (``kernel_nvidia``, ``kernel_pci``,
``kernel_host``) see only the kernel message text and call ``Emit`` to produce a row; a
recogniser that holds a multi-line block (AER header, OOM report) keeps the ``Env`` of the
line that should own the row and passes it back as ``env=`` when it finally emits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from parsers.joblog_prefix import PDSH

#: PCI address in a message: ``0000:3b:00.0`` (function optional).
BDF = re.compile(r"([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.([0-7]))?")


@dataclass(frozen=True, slots=True)
class Env:
    """Envelope of one line: timestamp, host, format variant and line number."""

    ts: int | None
    ts_flag: str
    uptime_s: float | None
    host: str | None
    fmt: str
    line_no: int


def split_label(text: str) -> tuple[str | None, str]:
    """(host, rest) of a line a parallel shell labelled with its host: ``pdsh -w nodes
    dmesg`` (and clush) print each remote line as ``node0025: <line>`` (pdsh src/pdsh/dsh.c
    ``out("%S: %s", a->host, buf)``, unless ``-N``); (None, text) for any other line. Only
    host names ending in a digit (``PDSH``, as the prefix layer peels them)."""
    if text[:1].islower():
        m = PDSH.match(text)
        if m is not None:
            return text[:m.end() - 2], text[m.end():]
    return None, text


class Emit(Protocol):
    """Produce one event row (``env`` None: the current line's envelope)."""

    def __call__(self, kind: str, message: str, *, code: str | None = None,
                 device: str | None = None, value: float | None = None,
                 job_id: str | None = None, env: Env | None = None) -> None: ...


def gpu_bus_id(text: str) -> str | None:
    """First PCI address in ``text`` as NVIDIA's Xid prints it (``0000:3b:00``, lower case,
    no function), so gpu_lost rows join with xid rows of the same GPU."""
    m = BDF.search(text)
    if not m:
        return None
    return f"{m.group(1)}:{m.group(2)}:{m.group(3)}".lower()


def full_bdf(text: str) -> str | None:
    """First PCI address in ``text`` as the kernel's PCI core prints it (``0000:3b:00.0``)."""
    m = BDF.search(text)
    if not m:
        return None
    return f"{m.group(1)}:{m.group(2)}:{m.group(3)}.{m.group(4) or '0'}".lower()
