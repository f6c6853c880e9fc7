"""Time and hostlist formatting shared by the writers. Campaign times are float seconds since
``Settings.epoch`` (UTC); they are rounded to microseconds once, here."""

from __future__ import annotations

import re
from datetime import datetime, timedelta


class Clock:
    def __init__(self, epoch: datetime) -> None:
        self.epoch = epoch

    def dt(self, t: float) -> datetime:
        return self.epoch + timedelta(microseconds=round(t * 1e6))

    def iso(self, t: float) -> str:
        """``2024-05-01T10:02:11.123456Z`` (truth.json)."""
        return self.dt(t).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def slurm(self, t: float) -> str:
        """sacct / slurmstepd local time without zone, whole seconds: ``2024-05-01T10:02:11``."""
        return self.dt(t).strftime("%Y-%m-%dT%H:%M:%S")

    def slurmctld(self, t: float) -> str:
        """slurmctld log prefix stamp, milliseconds: ``2024-05-01T10:02:11.123``."""
        d = self.dt(t)
        return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}"

    def megatron(self, t: float) -> str:
        """``datetime.now().strftime('%Y-%m-%d %H:%M:%S')``."""
        return self.dt(t).strftime("%Y-%m-%d %H:%M:%S")

    def rsyslog(self, t: float) -> str:
        """rsyslog RSYSLOG_FileFormat (Debian 12 default): ``2024-05-01T10:02:11.123456+00:00``."""
        return self.dt(t).strftime("%Y-%m-%dT%H:%M:%S.%f") + "+00:00"

    def rfc3339nano(self, t: float) -> str:
        """kubectl logs --timestamps: ``2024-05-01T10:02:11.123456000Z``."""
        return self.dt(t).strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z"

    def k8s(self, t: float) -> str:
        """Kubernetes object timestamps (RFC 3339, seconds): ``2024-05-01T10:02:11Z``."""
        return self.dt(t).strftime("%Y-%m-%dT%H:%M:%SZ")


def elapsed(seconds: float) -> str:
    """sacct Elapsed: ``[D-]HH:MM:SS`` of whole seconds."""
    s = int(seconds)
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return (f"{d}-" if d else "") + f"{h:02d}:{m:02d}:{s:02d}"


_NUM = re.compile(r"^(.*?)(\d+)$")


def compress(hosts: list[str]) -> str:
    """Slurm ranged hostlist: ``node[001-004,006]`` (inverse of parsers.hostlist.expand)."""
    groups: dict[tuple[str, int], list[int]] = {}
    order: list[tuple[str, int]] = []
    plain: list[str] = []
    for h in hosts:
        m = _NUM.match(h)
        if not m:
            plain.append(h)
            continue
        key = (m.group(1), len(m.group(2)))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(m.group(2)))
    parts = []
    for prefix, width in order:
        nums = sorted(set(groups[(prefix, width)]))
        if len(nums) == 1:
            parts.append(f"{prefix}{nums[0]:0{width}d}")
            continue
        ranges = []
        lo = prev = nums[0]
        for x in [*nums[1:], None]:
            if x is not None and x == prev + 1:
                prev = x
                continue
            ranges.append(f"{lo:0{width}d}" if lo == prev else f"{lo:0{width}d}-{prev:0{width}d}")
            if x is not None:
                lo = prev = x
        parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(parts + plain)
