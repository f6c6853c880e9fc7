"""Source name -> parser class, and per-file format sniffing.

Each source module exports ``PARSERS``; their order here is the tie-break order when two
parsers are equally confident about a file. A file whose best score is below ``MIN_SCORE`` is
reported as source ``unknown`` and all its lines are counted as unparsed (never dropped).
"""

from __future__ import annotations

from parsers import joblog, k8s, kernel, klog, own, sacct, scontrol, slurm_logs, text
from parsers.base import Parser

MIN_SCORE = 30

ALL: list[type[Parser]] = [
    *sacct.PARSERS,
    *scontrol.PARSERS,
    *slurm_logs.PARSERS,
    *k8s.PARSERS,
    *kernel.PARSERS,
    *joblog.PARSERS,
    *own.PARSERS,
    *klog.PARSERS,
    *text.PARSERS,
]
BY_NAME: dict[str, type[Parser]] = {p.name: p for p in ALL}


class UnknownSourceError(ValueError):
    pass


def get(name: str) -> type[Parser]:
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownSourceError(
            f"unknown source {name!r}; choose one of: {', '.join(sorted(BY_NAME))}"
        ) from None


def detect(head: str, path: str) -> tuple[type[Parser] | None, int]:
    """The most confident parser for a file, from its first bytes and its path."""
    best: type[Parser] | None = None
    best_score = 0
    for p in ALL:
        if best_score >= p.MAX_SCORE:  # ties go to the earlier parser: it cannot win
            continue
        score = p.sniff(head, path)
        if score > best_score:
            best, best_score = p, score
    if best_score < MIN_SCORE:
        return None, best_score
    return best, best_score
