"""Work no progress line shows: iterations finished after an attempt's last logged line.

With a progress line every ``k`` iterations (Megatron ``--log-interval k``), a failed
attempt goes on after its last line ``L`` for up to ``k - 1`` iterations that nobody
prints. Two things are known about them, and used here:

* **They certainly ran** up to the iteration the next attempt loads, when that is above
  ``L`` (a checkpoint saved after an unprinted iteration, or an attempt whose output was
  overwritten by ``--open-mode=truncate`` and shows no line at all). That work *survived*: it
  is charged as compute of the attempt at the step time, taken out of the attempt's hang (or,
  for an attempt without any line, its startup), and flagged as estimated.
* **Beyond that they are unseen and rolled back.** The fault falls at a uniformly random
  moment of the attempt's time after ``L``, before the line ``L + k`` would have been printed
  (it was not), and before the attempt ended; the expected number of completed iterations in
  that stretch of ``W`` seconds at ``s`` seconds per step is ``(min(W, k s) / s - 1) / 2``
  (``(k - 1) / 2`` when the attempt outlived the next line's time). Their time is lost work,
  charged to the interruption, taken out of its hang, and flagged as *estimated* (the
  decomposition still sums to T_obs exactly: only the split between hang and lost is an
  estimate). The step time ``s`` is the attempt's last measured one (t* when none).

The log interval is the most common gap between consecutive logged iterations of the run; at
``k = 1`` nothing is estimated.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Protocol


class _Progress(Protocol):
    progress: list[tuple[float, int, float]]


class _Parts(Protocol):
    startup: float
    compute: float
    lost_charged: float
    estimated_compute: float
    estimated_lost: float
    unseen_iterations: float


@dataclass
class Unseen:
    """What the logs do not show of one attempt's end (see module docstring)."""

    survived_from: int = 0  #: iterations (survived_from, survived_to] ran, unseen
    survived_to: int = 0
    survived_s: float = 0.0  #: their seconds (estimated)
    lost_iterations: float = 0.0  #: expected unseen iterations rolled back
    lost_s: float = 0.0  #: their seconds (estimated)

    @property
    def seconds(self) -> float:
        return self.survived_s + self.lost_s


def log_interval(attempts: list[_Progress]) -> int:
    """Most common gap between consecutive logged iterations (1 when nothing says)."""
    gaps: Counter[int] = Counter()
    for a in attempts:
        for (_, i0, _), (_, i1, _) in zip(a.progress, a.progress[1:], strict=False):
            if i1 > i0:
                gaps[i1 - i0] += 1
    return gaps.most_common(1)[0][0] if gaps else 1


def estimate(top: int, rest_s: float, step_s: float, next_resume: int, k: int,
             has_lines: bool) -> Unseen:
    """Unseen work of an interrupted attempt whose highest known iteration is ``top`` (its
    last logged line, or for an attempt without lines the highest iteration reached before
    it), with ``rest_s`` seconds from that line (or its start) to its end, ``step_s`` seconds
    per step, and the next attempt resuming from ``next_resume``."""
    u = Unseen()
    if not (step_s > 0 and math.isfinite(step_s)) or rest_s <= 0:
        return u
    if next_resume > top:
        n = next_resume - top
        u.survived_from, u.survived_to = top, next_resume
        u.survived_s = min(n * step_s, rest_s)
    if not has_lines or k <= 1:
        return u
    w = rest_s - u.survived_s
    # the unseen stretch ends before the next logged iteration after the resume point
    base = max(top, next_resume)
    room = (top + k) - base - 1  # iterations that could still run unprinted
    if w <= 0 or room <= 0:
        return u
    window = min(w, (room + 1) * step_s)
    n_exp = max(0.0, (window / step_s - 1.0) / 2.0)
    u.lost_iterations = n_exp
    u.lost_s = min(n_exp * step_s, w)
    return u


def charge(p: _Parts, last: tuple[int, float] | None, rest: float, resumes: list[int],
           chunks: list[list[float]], k: int, t_star: float, k_log: int
           ) -> tuple[float, float]:
    """Charge the estimated unseen work at the end of interrupted attempt ``k`` of a
    decomposition (decompose.py): ``last`` is its last progress interval's (iteration, step
    seconds), None when it has none; ``chunks`` the surviving work chunks so far. Returns
    what is left of its hang, and the seconds of proven work the attempt had no time for
    (the next attempt loads a checkpoint further than this one could have got: an attempt
    the logs miss trained in the gap; the caller takes that time from the repair gap, and a
    ``record_gap`` warning says so)."""
    if last is not None:
        top = last[0]
        step = last[1] if math.isfinite(last[1]) else t_star
        avail = rest
    else:
        top = max(int(max((c[2] for c in chunks), default=resumes[k])), resumes[k])
        step, avail = t_star, p.startup
    u = estimate(top, avail, step, resumes[k + 1], k_log, last is not None)
    over = max(0.0, (u.survived_to - u.survived_from) * step - u.survived_s) \
        if u.survived_to > u.survived_from else 0.0
    if u.survived_to > u.survived_from and u.survived_s <= 0:
        chunks.append([k, u.survived_from, u.survived_to, 0.0, -1])
    if u.survived_s > 0:
        chunks.append([k, u.survived_from, u.survived_to, u.survived_s, -1])
        p.compute += u.survived_s
        p.estimated_compute = u.survived_s
        if last is not None:
            rest -= u.survived_s
        else:
            p.startup -= u.survived_s
    if u.lost_s > 0:
        p.compute += u.lost_s
        p.lost_charged += u.lost_s
        p.estimated_lost = u.lost_s
        p.unseen_iterations = u.lost_iterations
        rest -= u.lost_s
    return rest, over
