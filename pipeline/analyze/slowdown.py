"""Fail-slow episodes: sustained stretches of steps well above the healthy step time t*.

The rule (every constant is a keyword argument of ``find_episodes``):

* **Intervals.** Each interval (the iterations between two progress lines, per-iteration time
  ``step_s``) except an attempt's first (warm-up) is *high* when ``step_s > threshold * t*``
  (default 1.2) and *elevated* when ``step_s > stay * t*`` (default 1.1).
* **Fragments (hysteresis).** A fragment starts at a high interval and goes on while the
  intervals stay elevated: a step time hovering around the entry threshold does not cut an
  episode into pieces (a Schmitt trigger).
* **Short gaps.** Two fragments of one attempt separated by at most ``max_gap`` intervals
  (default 2) that are not elevated are one episode: a single fast step, such as one that
  happened to get a whole collective's slack, is not the end of a slowdown.
* **Across a restart.** A slowdown in progress when an attempt stopped making progress (at
  most ``max_gap`` healthy intervals after it) that is present again when the next attempt of
  the run starts (within its first ``max_gap`` + 1 steady intervals) at the same level
  (throughput ratios within ``ratio_tol``, default 0.05) is the same episode: its duration
  includes the hang, repair and startup between them, as a slowdown that goes on in wall time
  does.
* **Minimum.** An episode needs ``min_intervals`` (default 3) elevated intervals in all: one or
  two slow intervals are jitter, not a fail-slow.

An episode's ``ratio`` rho = t* / (mean step time over its elevated intervals); its ``cost`` is
the surviving time above t* of every interval inside its span (the short gaps included, so
that the split of ``slow`` into episodes and jitter does not depend on where a gap fell);
``slow`` minus the episodes' cost is jitter (it may be slightly negative).

``started_inside`` says whether the episode's start was seen: False when it is already under
way at an attempt's first steady interval and does not continue a slowdown of the previous
attempt (it began during a repair gap, a hang or a startup, when nothing was watching). The
fail-slow rate counts only the episodes whose start was seen, over the time in which a start
could be seen (``observed_seconds``: each attempt's steady iterating time outside episodes), so
that episodes arriving in wall time are counted over the time that was watched
(``pipeline.model.fit``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.analyze.decompose import Interval

DEFAULT_THRESHOLD = 1.2  #: enter: an interval this much above t* starts a fragment
DEFAULT_STAY = 1.1  #: stay: a fragment goes on while intervals are this much above t*
DEFAULT_MIN_INTERVALS = 3
DEFAULT_MAX_GAP = 2  #: healthy intervals that do not end an episode
DEFAULT_RATIO_TOL = 0.05  #: same level across a restart: |rho_a - rho_b| <= this


@dataclass
class Episode:
    attempt: int  #: index into the run's attempts (where the episode was first seen)
    start: float
    end: float
    first_iteration: int
    last_iteration: int
    ratio: float  #: throughput ratio rho = t* / mean step time in the episode (< 1)
    cost: float  #: seconds above t* (surviving iterations only)
    attempts: list[int] = field(default_factory=list)  #: every attempt it spans
    intervals: int = 0  #: elevated intervals in it
    started_inside: bool = True  #: its start was seen (not already under way at a restart)


@dataclass
class _Frag:
    first: int  #: index into the interval list
    last: int
    elevated: list[int]


def _cost(iv: Interval, t_star: float) -> float:
    if iv.compute <= 0 or iv.b <= iv.a:
        return 0.0
    n_surv = (iv.b - iv.a) * iv.surviving / iv.compute
    return iv.surviving - n_surv * t_star


def _ratio(ivs: list[Interval], idx: list[int], t_star: float) -> float:
    iters = sum(ivs[j].b - ivs[j].a for j in idx)
    mean_step = sum(ivs[j].step_s * (ivs[j].b - ivs[j].a) for j in idx) / iters if iters else 0
    return t_star / mean_step if mean_step > 0 else 1.0


def _fragments(ivs: list[Interval], t_star: float, enter: float, stay: float,
               max_gap: int) -> list[_Frag]:
    """Hysteresis and short-gap merging within each attempt."""
    out: list[_Frag] = []
    cur: _Frag | None = None
    gap = 0
    for j, iv in enumerate(ivs):
        s = iv.step_s
        finite = s == s
        if cur is not None and not iv.first and finite and s > stay * t_star:
            cur.last = j  # still elevated (possibly after a short gap): the same episode
            cur.elevated.append(j)
            gap = 0
            continue
        if cur is not None and not iv.first and gap < max_gap:
            gap += 1  # a healthy interval: the episode may go on after it
            continue
        if cur is not None:
            out.append(cur)
            cur = None
        if not iv.first and finite and s > enter * t_star:
            cur, gap = _Frag(j, j, [j]), 0
    if cur is not None:
        out.append(cur)
    return out


def _bounds(ivs: list[Interval]) -> dict[int, tuple[int, int]]:
    """Per attempt: index of its first steady interval and of its last interval."""
    b: dict[int, tuple[int, int]] = {}
    for j, iv in enumerate(ivs):
        lo, _hi = b.get(iv.attempt, (-1, j))
        if lo < 0 and not iv.first:
            lo = j
        b[iv.attempt] = (lo, j)
    return b


def find_episodes(intervals: list[Interval], t_star: float,
                  threshold: float = DEFAULT_THRESHOLD, stay: float = DEFAULT_STAY,
                  min_intervals: int = DEFAULT_MIN_INTERVALS, max_gap: int = DEFAULT_MAX_GAP,
                  ratio_tol: float = DEFAULT_RATIO_TOL) -> list[Episode]:
    """Fail-slow episodes of one run (intervals in attempt, then time order)."""
    if not t_star or t_star != t_star:  # no healthy step time: nothing to compare with
        return []
    ivs = intervals
    bounds = _bounds(ivs)
    groups: list[list[_Frag]] = []
    for f in _fragments(ivs, t_star, threshold, stay, max_gap):
        if groups and _continues(ivs, bounds, groups[-1][-1], f, t_star, max_gap, ratio_tol):
            groups[-1].append(f)
        else:
            groups.append([f])
    episodes: list[Episode] = []
    for g in groups:
        elevated = [j for f in g for j in f.elevated]
        if len(elevated) < min_intervals:
            continue
        first, last = g[0].first, g[-1].last
        span = range(first, last + 1)
        a0 = ivs[first].attempt
        episodes.append(Episode(
            a0, ivs[first].t0, ivs[last].t1, ivs[first].a + 1, ivs[last].b,
            _ratio(ivs, elevated, t_star), sum(_cost(ivs[j], t_star) for j in span),
            sorted({ivs[j].attempt for j in span}), len(elevated),
            started_inside=first > bounds[a0][0]))
    return episodes


def _continues(ivs: list[Interval], bounds: dict[int, tuple[int, int]], prev: _Frag,
               nxt: _Frag, t_star: float, max_gap: int, ratio_tol: float) -> bool:
    """``nxt`` (first fragment of a later attempt) goes on with ``prev`` across a restart."""
    a_prev, a_now = ivs[prev.last].attempt, ivs[nxt.first].attempt
    if a_now <= a_prev or any(bounds.get(a, (-1, 0))[0] >= 0 for a in range(a_prev + 1, a_now)):
        return False  # same attempt (a long gap), or an attempt with progress in between
    return (bounds[a_prev][1] - prev.last <= max_gap
            and 0 <= nxt.first - bounds[a_now][0] <= max_gap
            and abs(_ratio(ivs, prev.elevated, t_star) - _ratio(ivs, nxt.elevated, t_star))
            <= ratio_tol)


def observed_seconds(intervals: list[Interval], episodes: list[Episode]) -> dict[int, float]:
    """Per attempt: the seconds in which an episode's start could be seen -- its steady
    iterating time (first steady interval's start to last progress) outside the episodes.
    A slowdown that begins while another is under way does not show as a new episode, so the
    time inside episodes is not watched time (as hang and repair are not at risk for
    fail-stop rates); with it the rate estimates the arrival rate, not the rate of visible
    starts, which is lower by the share of time slowed."""
    span: dict[int, list[float]] = {}
    for iv in intervals:
        if iv.first:
            continue
        s = span.setdefault(iv.attempt, [iv.t0, iv.t1])
        s[1] = max(s[1], iv.t1)
    out = {}
    for k, (a, b) in span.items():
        inside = sum(max(0.0, min(b, e.end) - max(a, e.start)) for e in episodes)
        out[k] = max(0.0, b - a - inside)
    return out
