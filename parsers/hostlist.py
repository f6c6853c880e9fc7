"""Slurm hostlist expressions: ``node[001-004,007],gpu05`` <-> a list of host names.

Follows Slurm's own rules (src/common/hostlist.c): ranges keep their zero padding, several
bracket groups in one name multiply (``r[1-2]n[1-2]``), and commas inside brackets do not
separate hosts.
"""

from __future__ import annotations

import itertools
import re

_GROUP = re.compile(r"\[([^\]]*)\]")


class HostlistError(ValueError):
    """A hostlist expression that cannot be expanded."""


def _split_top(expr: str) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise HostlistError(f"unbalanced brackets in hostlist {expr!r}")
    out.append("".join(cur))
    return [s.strip() for s in out if s.strip()]


def _range(spec: str) -> list[str]:
    out: list[str] = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-", 1)
            if not (lo.isdigit() and hi.isdigit()) or int(hi) < int(lo):
                raise HostlistError(f"bad range {part!r} in hostlist")
            width = len(lo)
            out.extend(str(i).zfill(width) for i in range(int(lo), int(hi) + 1))
        else:
            out.append(part)
    return out


def expand(expr: str | None) -> list[str]:
    """Expand a hostlist; ``None``, ``''``, ``None assigned`` and ``(null)`` give []."""
    if not expr or expr.strip() in ("None assigned", "(null)", "None", "Unknown"):
        return []
    hosts: list[str] = []
    for item in _split_top(expr.strip()):
        pieces = _GROUP.split(item)
        # pieces alternates literal, group, literal, group, ...
        options = [[p] if i % 2 == 0 else _range(p) for i, p in enumerate(pieces)]
        hosts.extend("".join(combo) for combo in itertools.product(*options))
    return hosts
