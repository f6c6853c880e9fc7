"""A fleet syslog made of *public* messages we did not write: an input for ``bench_ingest``-like
timing of lines whose content nobody here chose.

The messages come from logpai/loghub (https://github.com/logpai/loghub, real logs collected
for log-analysis research; not shipped here: clone it and give its folder):
``Linux/Linux_2k.log`` (a public server's syslog: sshd, su, ftpd, kernel),
``OpenSSH/OpenSSH_2k.log`` (an internet-facing sshd: ``Failed password for root from ...``)
and ``Thunderbird/Thunderbird_2k.log`` (the Sandia Thunderbird supercomputer's syslog, its
``- <epoch> <date> <host>`` prefix removed). Each message is written again in order, round
robin, as rsyslog's traditional format writes it (``Mmm dd HH:MM:SS host tag[pid]: msg``),
with a monotonic stamp (0-40 ms apart), one of 2,048 hosts and a fresh pid, and one line in
20,000 an NVIDIA Xid 79 as the driver prints it (``NVRM: Xid (PCI:0000:3b:00): 79, pid=...,
GPU has fallen off the bus.``, open-gpu-kernel-modules ``nvErrorLog_va``).

    git clone --depth 1 https://github.com/logpai/loghub /tmp/loghub
    python benchmarks/public_syslog.py /tmp/loghub /tmp/public.log --size-mb 512
    wc -l /tmp/public.log; time tormortem ingest /tmp/public.log --out /tmp/out -q
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import re
from pathlib import Path

_SYSLOG = re.compile(r"^\w{3} +\d{1,2} \d\d:\d\d:\d\d \S+ (.*)$")
_TBIRD = re.compile(r"^- \d+ \S+ \S+ \w{3} +\d{1,2} \d\d:\d\d:\d\d \S+ (.*)$")
_PID = re.compile(r"\[(\d+)\]")
XID = "kernel: NVRM: Xid (PCI:0000:{:02x}:00): 79, pid={}, GPU has fallen off the bus."


def messages(loghub: Path) -> list[str]:
    out = []
    for name, rx in (("Linux/Linux_2k.log", _SYSLOG), ("OpenSSH/OpenSSH_2k.log", _SYSLOG),
                     ("Thunderbird/Thunderbird_2k.log", _TBIRD)):
        for line in (loghub / name).read_text(encoding="utf-8", errors="replace").splitlines():
            m = rx.match(line)
            if m:
                out.append(m.group(1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("loghub", type=Path, help="a checkout of logpai/loghub")
    ap.add_argument("out", type=Path)
    ap.add_argument("--size-mb", type=int, default=512)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    msgs = messages(a.loghub)
    t = dt.datetime(2024, 3, 1)
    size, n = a.size_mb << 20, 0
    with open(a.out, "w", encoding="utf-8") as out:
        written = 0
        while written < size:
            t += dt.timedelta(microseconds=rng.randint(0, 40_000))
            host = f"node{rng.randrange(2048):04d}"
            if n % 20_000:
                msg = _PID.sub(lambda _: f"[{rng.randint(100, 99_999)}]", msgs[n % len(msgs)],
                               count=1)
            else:
                msg = XID.format(rng.randrange(256), rng.randint(100, 99_999))
            line = f"{t:%b} {t.day:2d} {t:%H:%M:%S} {host} {msg}\n"
            out.write(line)
            written += len(line)
            n += 1
    print(f"{a.out}: {n} lines, {written} bytes, {len(msgs)} distinct messages")


if __name__ == "__main__":
    main()
