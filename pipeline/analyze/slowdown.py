"""Fail-slow episodes: sustained stretches of steps well above the healthy step time t*.

An interval (the iterations between two progress lines) is *slow* when its per-iteration time
is above ``threshold * t*`` (default 1.2). An episode is a run of consecutive slow intervals of
one attempt lasting at least ``min_intervals`` intervals (default 3) -- one slow interval is
jitter, not a fail-slow. An episode's cost is the surviving time of its intervals above t*;
``slow`` minus the episodes' cost is jitter (it may be slightly negative).
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.analyze.decompose import Interval

DEFAULT_THRESHOLD = 1.2
DEFAULT_MIN_INTERVALS = 3


@dataclass
class Episode:
    attempt: int  #: index into the run's attempts
    start: float
    end: float
    first_iteration: int
    last_iteration: int
    ratio: float  #: throughput ratio rho = t* / mean step time in the episode (< 1)
    cost: float  #: seconds above t* (surviving iterations only)


def _cost(iv: Interval, t_star: float) -> float:
    if iv.compute <= 0 or iv.b <= iv.a:
        return 0.0
    n_surv = (iv.b - iv.a) * iv.surviving / iv.compute
    return iv.surviving - n_surv * t_star


def find_episodes(intervals: list[Interval], t_star: float,
                  threshold: float = DEFAULT_THRESHOLD,
                  min_intervals: int = DEFAULT_MIN_INTERVALS) -> list[Episode]:
    episodes: list[Episode] = []
    cur: list[Interval] = []

    def close() -> None:
        if len(cur) >= min_intervals:
            iters = sum(iv.b - iv.a for iv in cur)
            mean_step = sum(iv.step_s * (iv.b - iv.a) for iv in cur) / iters if iters else t_star
            episodes.append(Episode(cur[0].attempt, cur[0].t0, cur[-1].t1, cur[0].a + 1,
                                    cur[-1].b, t_star / mean_step if mean_step > 0 else 1.0,
                                    sum(_cost(iv, t_star) for iv in cur)))
        cur.clear()

    if not t_star or t_star != t_star:  # no healthy step time: nothing to compare with
        return []
    for iv in intervals:
        slow = iv.step_s == iv.step_s and iv.step_s > threshold * t_star and not iv.first
        if slow and (not cur or cur[-1].attempt == iv.attempt):
            cur.append(iv)
        else:
            close()
            if slow:
                cur.append(iv)
    close()
    return episodes
