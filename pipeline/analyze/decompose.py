"""The exact decomposition of a run's wall time (TOR_MODEL.md section 2).

Input: the run's attempts in start order, each with its progress lines (timestamp, iteration,
reported ms per iteration), its checkpoint saves and the iteration it resumed from. Output:
T_obs split, with no remainder, into

    t_opt + slow + lost + ckpt_save + startup + hang + repair + tail == t_obs

How each piece is measured (the choices, written down):

* An attempt's progress is a chain of *intervals* between consecutive progress lines. The first
  interval of an attempt runs from its first iteration start ``f`` -- the first progress line's
  time minus the iterations it covers times the reported ms per iteration (t* when the log has
  no ms) -- so ``startup = f - start``.
* An interval that follows a checkpoint save (Megatron logs an iteration, then saves; its
  interval timer excludes the save) holds ``save + compute``: the save is the save timer when
  the log has it, else ``duration - iterations * reported ms`` (never negative); everything else
  in an interval is compute, so the pieces telescope exactly to the progress span.
* Compute is kept as *work chunks* (iteration range, seconds). When an attempt loads iteration
  ``r``, every chunk above ``r`` -- from any earlier attempt -- becomes ``lost`` and is charged
  to the interruption that caused the reload (the previous attempt's). Chunks that survive hold
  exactly ``N_net`` iterations: their seconds are ``t_opt + slow`` with ``t_opt = N_net * t*``.
* ``hang`` = last progress line of an interrupted attempt to its end (detection, watchdog
  timeouts, teardown; iterations finished after the last logged line are invisible to the logs
  and fall here); ``tail`` = the same for the final attempt; ``repair`` = end of an attempt to
  start of the next. Attempts that overlap in time (a new pod before the old one was reaped)
  count the overlap once: the earlier attempt is taken to end when the next one starts.
* An attempt with no progress line is all ``startup`` (if it is not the first attempt, that
  startup is part of the previous interruption's cost) and its ``hang`` is zero.
* Work no line shows (``unseen.py``): iterations the next attempt loads above an attempt's
  last line certainly ran (compute, taken from hang or startup); with progress logged every
  k > 1 iterations, the expected unseen iterations after the last line are lost work taken
  from hang. Both are *estimates*, kept apart in ``estimated`` (per attempt and per run).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass, field

from pipeline.analyze.tstar import robust_median, steady_steps
from pipeline.analyze.unseen import charge, log_interval


@dataclass
class Save:
    iteration: int
    seconds: float | None = None  #: save duration from a timer line, if logged
    completed: bool = True  #: False: only its start was logged (cut off by the failure)


@dataclass
class AttemptInput:
    attempt: str
    start: float  #: epoch seconds
    end: float
    #: progress lines: (epoch seconds, iteration, ms per iteration or nan)
    progress: list[tuple[float, int, float]] = field(default_factory=list)
    saves: list[Save] = field(default_factory=list)
    resumed_from: int | None = None  #: iteration loaded at start (None: inferred)
    #: its start is its first output line (bounds inferred from output, no container start)
    start_from_output: bool = False


@dataclass
class AttemptParts:
    attempt: str
    start: float
    end: float  #: end used for the decomposition (clipped at the next start)
    startup: float = 0.0
    ckpt_save: float = 0.0
    compute: float = 0.0  #: all iteration time in this attempt (surviving + lost)
    hang: float = 0.0  #: for interrupted attempts
    tail: float = 0.0  #: for the final attempt
    repair_after: float = 0.0  #: gap to the next attempt
    lost_charged: float = 0.0  #: work lost because of this attempt's interruption
    first_iteration: int | None = None
    last_iteration: int | None = None
    last_progress: float | None = None
    resumed_from: int | None = None
    estimated_compute: float = 0.0  #: unseen iterations that survived (estimated seconds)
    estimated_lost: float = 0.0  #: unseen iterations rolled back (estimated, in lost_charged)
    unseen_iterations: float = 0.0  #: expected unseen iterations rolled back


@dataclass
class Interval:
    """One stretch of iterations (a, b] of an attempt, as seen between two progress lines."""

    attempt: int
    a: int
    b: int
    t0: float
    t1: float
    compute: float  #: seconds of iteration time in (a, b]
    step_s: float  #: best per-iteration duration estimate (reported ms, else compute / n)
    first: bool  #: first interval of the attempt (warm-up; excluded from t*)
    after_save: bool
    surviving: float = 0.0  #: seconds of this interval's compute that survived


@dataclass
class Decomposition:
    t_obs: float
    t_opt: float
    ideal_step_s: float
    iterations_net: int
    start_iteration: int
    final_iteration: int
    components: dict[str, float]
    attempts: list[AttemptParts]
    intervals: list[Interval]
    log_interval: int = 1  #: iterations between progress lines (most common gap)
    estimated: dict[str, float] = field(default_factory=dict)  #: component -> estimated s

    def check(self) -> float:
        """Remainder t_obs - sum(components): zero up to float rounding."""
        return self.t_obs - sum(self.components.values())


def ideal_step(intervals: list[Interval], band: float = 1.2) -> float:
    """Robust healthy step time: the median per-iteration duration over steady intervals (not
    an attempt's first interval, not one holding a checkpoint save), taken twice: the second
    median only over intervals within ``band`` of the first, so that fail-slow stretches
    (one-sided, well above t*) do not pull it up."""
    steady = [iv.step_s for iv in intervals if not iv.first and not iv.after_save
              and iv.b > iv.a and math.isfinite(iv.step_s)]
    if not steady:
        steady = [iv.step_s for iv in intervals if iv.b > iv.a and math.isfinite(iv.step_s)]
    return robust_median(steady, band)


def _intervals(k: int, att: AttemptInput, start_iter: int, t_star_guess: float,
               saved: list[int], save_secs: dict[int, float]) -> list[Interval]:
    """Intervals of one attempt. ``saved``: sorted iterations after which a save ran; an
    interval (a, b] holds the saves at iterations a <= s < b."""
    out: list[Interval] = []
    prev_t: float | None = None
    prev_i = start_iter
    for ts, it, ms in att.progress:
        n = it - prev_i
        per = ms / 1000.0 if math.isfinite(ms) else float("nan")
        if prev_t is None:
            step = per if math.isfinite(per) else t_star_guess
            comp = max(0.0, n * step) if math.isfinite(step) else 0.0
            comp = min(comp, ts - att.start)
            out.append(Interval(k, prev_i, it, ts - comp, ts, comp, per, True, False))
        else:
            dur = ts - prev_t
            lo, hi = bisect_left(saved, prev_i), bisect_left(saved, it)
            after_save = hi > lo
            save = 0.0
            if after_save:
                inside = saved[lo:hi]
                if all(s in save_secs for s in inside):
                    save = sum(save_secs[s] for s in inside)
                else:
                    step = per if math.isfinite(per) else t_star_guess
                    save = dur - n * step if math.isfinite(step) else 0.0
                save = min(max(save, 0.0), dur)
            comp = dur - save
            step_s = per if math.isfinite(per) else (comp / n if n > 0 else float("nan"))
            out.append(Interval(k, prev_i, it, prev_t, ts, comp, step_s, False, after_save))
        prev_t, prev_i = ts, it
    return out


def _all_intervals(atts: list[AttemptInput], resumes: list[int], t_star_guess: float
                   ) -> list[Interval]:
    ivs: list[Interval] = []
    for k, a in enumerate(atts):
        saved = sorted({s.iteration for s in a.saves})
        secs = {s.iteration: s.seconds for s in a.saves if s.seconds is not None}
        ivs.extend(_intervals(k, a, resumes[k], t_star_guess, saved, secs))
    return ivs


def decompose(attempts: list[AttemptInput], ideal_step_s: float | None = None,
              start_iteration: int | None = None, unseen: bool = True) -> Decomposition:
    """Split the run's wall time exactly (see module docstring)."""
    if not attempts:
        raise ValueError("a run needs at least one attempt")
    atts = sorted(attempts, key=lambda a: (a.start, a.end))
    ends = [min(a.end, atts[i + 1].start) if i + 1 < len(atts) else a.end
            for i, a in enumerate(atts)]
    ends = [max(e, a.start) for e, a in zip(ends, atts, strict=True)]
    # resume points: logged load, else the latest save before this attempt, else the run start
    first_seen = next((a.progress[0][1] for a in atts if a.progress), 0)
    run_start = start_iteration if start_iteration is not None else (
        atts[0].resumed_from if atts[0].resumed_from is not None else None)
    resumes: list[int] = []
    last_save: int | None = None
    for a in atts:
        if a.resumed_from is not None:
            r = a.resumed_from
        elif not resumes:
            r = run_start if run_start is not None else _guess_start(a, first_seen)
        else:
            r = last_save if last_save is not None else resumes[0]
        resumes.append(r)
        top = a.progress[-1][1] if a.progress else None
        for s in a.saves:
            # a save whose end was not logged still completed if training went on after it
            if s.completed or (top is not None and top > s.iteration):
                last_save = s.iteration if last_save is None else max(last_save, s.iteration)
    # t* from the steady intervals, which need no provisional t* (tstar.py), then the
    # intervals with it; with no steady interval, two passes: t* from all intervals measured
    # without one, the intervals with that, and t* again from those
    if ideal_step_s is not None:
        t_star = ideal_step_s
        ivs = _all_intervals(atts, resumes, t_star)
    else:
        steady = steady_steps([a.progress for a in atts],
                              [sorted({s.iteration for s in a.saves}) for a in atts])
        if steady.size:
            t_star = robust_median(steady)
            ivs = _all_intervals(atts, resumes, t_star)
        else:
            ivs = _all_intervals(atts, resumes,
                                 ideal_step(_all_intervals(atts, resumes, float("nan"))))
            t_star = ideal_step(ivs)
    k_log = log_interval(atts)  # type: ignore[arg-type]
    parts = [AttemptParts(a.attempt, a.start, ends[k], resumed_from=resumes[k])
             for k, a in enumerate(atts)]
    # work chunks: [attempt, a, b, seconds, interval index]
    chunks: list[list[float]] = []
    by_attempt: list[list[int]] = [[] for _ in atts]
    for j, iv in enumerate(ivs):
        by_attempt[iv.attempt].append(j)
    for k, a in enumerate(atts):
        p = parts[k]
        mine_idx = by_attempt[k]
        mine = [ivs[j] for j in mine_idx]
        if k > 0:  # a reload rolls back every chunk above the resumed iteration
            # surviving chunks are ordered by iteration, so only the top of the stack moves
            r = resumes[k]
            while chunks and chunks[-1][2] > r:
                c = chunks.pop()
                ca, cb, cs = c[1], c[2], c[3]
                frac_lost = (cb - max(ca, r)) / (cb - ca) if cb > ca else 1.0
                lost = cs * frac_lost
                parts[k - 1].lost_charged += lost
                if ca < r:
                    chunks.append([c[0], ca, r, cs - lost, c[4]])
                    break
        if mine:
            p.startup = mine[0].t0 - a.start
            p.first_iteration, p.last_iteration = mine[0].b, mine[-1].b
            p.last_progress = mine[-1].t1
            p.ckpt_save = sum((iv.t1 - iv.t0) - iv.compute for iv in mine)
            p.compute = sum(iv.compute for iv in mine)
            rest = ends[k] - mine[-1].t1
            for j in mine_idx:
                iv = ivs[j]
                chunks.append([k, iv.a, iv.b, iv.compute, j])
        else:
            p.startup = ends[k] - a.start
            rest = 0.0
        over = 0.0
        if k + 1 < len(atts) and unseen:
            last = (mine[-1].b, mine[-1].step_s) if mine else None
            rest, over = charge(p, last, rest, resumes, chunks, k, t_star, k_log)
        if k + 1 < len(atts):
            p.hang = rest
            p.repair_after = atts[k + 1].start - ends[k]
            if over > 0:  # proven work no attempt had time for: a missing attempt, in the gap
                moved = min(over, max(p.repair_after, 0.0))
                p.repair_after -= moved
                chunks[-1][3] += moved
                p.compute += moved
                p.estimated_compute += moved
        else:
            p.tail = rest
    for c in chunks:
        if c[4] >= 0:
            ivs[int(c[4])].surviving += c[3]
    surviving = sum(c[3] for c in chunks)
    final_iter = max((int(c[2]) for c in chunks), default=resumes[0])
    start_it = resumes[0]
    n_net = final_iter - start_it
    t_opt = n_net * t_star if math.isfinite(t_star) else 0.0
    # a save time that is float noise below zero ((t1 - t0) - compute of equal values:
    # -1.2e-08 s in analysis.json, fault probe L8) is 0, its noise kept in slow (the sum holds)
    noise = 0.0
    for p in parts:
        if -1e-6 < p.ckpt_save < 0.0:
            noise += p.ckpt_save
            p.ckpt_save = 0.0
    comp = {
        "t_opt": t_opt,
        "slow": surviving - t_opt + noise,
        "lost": sum(p.lost_charged for p in parts),
        "ckpt_save": sum(p.ckpt_save for p in parts),
        "startup": sum(p.startup for p in parts),
        "hang": sum(p.hang for p in parts),
        "repair": sum(p.repair_after for p in parts),
        "tail": sum(p.tail for p in parts),
    }
    est = {"lost": sum(p.estimated_lost for p in parts),
           "compute": sum(p.estimated_compute for p in parts)}
    return Decomposition(ends[-1] - atts[0].start, t_opt, t_star, n_net, start_it, final_iter,
                         comp, parts, ivs, k_log, {k: v for k, v in est.items() if v})


def _guess_start(a: AttemptInput, first_seen: int) -> int:
    """Iteration a run started from when nothing says: 0 if its first line is an early
    iteration, else the first logged iteration minus one logging interval. But when the
    attempt's start is its first progress line (inferred from output with nothing before
    it; not a scheduler's whole-second start that happens to equal it), that line's
    iteration: the work it reports was done before the run is observed (counting it put
    T_opt one interval above T_obs in a run without overhead)."""
    if a.start_from_output and a.progress and a.start >= a.progress[0][0]:
        return first_seen
    if len(a.progress) >= 2:
        step = a.progress[1][1] - a.progress[0][1]
        return max(0, first_seen - step)
    return 0


def split_no_progress(d: Decomposition, k: int, fault: float) -> None:
    """An interrupted attempt that never made progress: its time until the fault (the root
    cause's timestamp) is startup, the rest until its end is hang. Totals are unchanged."""
    p = d.attempts[k]
    if p.last_progress is not None or k + 1 >= len(d.attempts):
        return
    fault = min(max(fault, p.start), p.end)
    moved = min(p.end - fault, max(p.startup, 0.0))
    p.startup -= moved
    p.hang += moved
    d.components["startup"] -= moved
    d.components["hang"] += moved
