"""The kernel log's envelopes as regexes (``KernelLogParser._envelope`` reads them) and the
per-line test its ``sniff`` counts."""

from __future__ import annotations

import re

from parsers.kernel_common import split_label

RAW = re.compile(r"\[\s*(\d+\.\d+)\](?:\[\s*[TC]\d+\])? ?(.*)")
CTIME = re.compile(r"\[((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d "
                   r"\d\d:\d\d:\d\d \d{4})\] ?(.*)")
ISO = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)([.,]\d{1,9})?(Z|[+-]\d\d:?\d\d) (.*)")
SHORT = re.compile(r"([A-Z][a-z]{2}) ( \d|\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))? (.*)")
TAG = re.compile(r"(?:([^\s:\[\]]+) )?([^\s:\[\]]+)(?:\[\d+\])?: ?(.*)")
PRI = re.compile(r"<(\d{1,3})>")
R5424 = re.compile(r"1 (\S+) (\S+) (\S+) (\S+) (\S+) (-|(?:\[.*?\])+) ?(.*)")
UPTIME = re.compile(r"\[\s*(\d+\.\d+)\] ?(.*)")
NO_HOST = {"localhost", "(none)", "-"}
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def host_of(h: str | None) -> str | None:
    return None if h is None or h in NO_HOST else h


def sniff_line(line: str) -> int:
    """0: no envelope; 1: envelope of a non-kernel program; 2: a kernel line."""
    text = split_label(line)[1].lstrip()
    c = text[:1]
    if c == "[":
        return 2 if (RAW.match(text) or CTIME.match(text)) else 0
    if c == "<":
        p = PRI.match(text)
        if not p:
            return 0
        text = text[p.end():]
        if text.startswith("1 "):
            r = R5424.match(text)
            return 0 if not r else (2 if r.group(3) == "kernel" else 1)
        c = text[:1]
    if c.isdigit():
        i = ISO.match(text)
        if not i:
            return 0
        if (i.group(2) or "").startswith(","):
            return 2
        t = TAG.match(i.group(4))
        return 0 if not t else (2 if t.group(2) == "kernel" else 1)
    if text[:3] in MONTHS:
        s = SHORT.match(text)
        if not s:
            return 0
        t = TAG.match(s.group(5))
        return 0 if not t else (2 if t.group(2) == "kernel" else 1)
    return 0
