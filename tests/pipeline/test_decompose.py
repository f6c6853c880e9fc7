"""The decomposition on hand-built timelines whose every component is known."""

from __future__ import annotations

import math
import random

import pytest

from pipeline.analyze.decompose import AttemptInput, Save, decompose


def _attempt(name: str, start: float, startup: float, first_iter: int, n_lines: int,
             every: int, step: float, save_every: int, save_s: float, end_pad: float,
             resumed: int | None, slow: dict[int, float] | None = None
             ) -> tuple[AttemptInput, dict[str, float]]:
    """An attempt that logs every ``every`` iterations at ``step`` s/iteration, saving after
    iterations divisible by ``save_every`` (save_s seconds, excluded from the reported ms)."""
    t = start + startup
    it = first_iter
    prog, saves = [], []
    truth = {"compute": 0.0, "save": 0.0}
    for _ in range(n_lines):
        per = step * (slow or {}).get(it + every, 1.0)
        t += every * per
        truth["compute"] += every * per
        it += every
        prog.append((t, it, per * 1000))
        if it % save_every == 0:
            t += save_s
            truth["save"] += save_s
            saves.append(Save(it))
    # the save after the last line (if any) is not followed by progress: it falls in hang/tail
    end = t + end_pad
    return AttemptInput(name, start, end, prog, saves, resumed), truth


def test_single_attempt_no_failures() -> None:
    a, _ = _attempt("1", 0.0, 100.0, 0, 50, 10, 2.0, 100, 30.0, 5.0, 0)
    d = decompose([a])
    assert d.ideal_step_s == pytest.approx(2.0)
    assert d.iterations_net == 500
    c = d.components
    assert c["t_opt"] == pytest.approx(1000.0)
    assert c["startup"] == pytest.approx(100.0)
    # saves after iterations 100..400 are followed by progress; the one at 500 is in the tail
    assert c["ckpt_save"] == pytest.approx(4 * 30.0)
    assert c["tail"] == pytest.approx(30.0 + 5.0)
    assert c["lost"] == c["hang"] == c["repair"] == 0.0
    assert c["slow"] == pytest.approx(0.0, abs=1e-9)
    assert abs(d.check()) < 1e-9


def test_failure_rolls_back_to_last_checkpoint() -> None:
    a1, _ = _attempt("1", 0.0, 100.0, 0, 37, 10, 2.0, 100, 30.0, 600.0, 0)
    # a1 reaches iteration 370; last save at 300; next attempt loads 300
    a2, _ = _attempt("2", a1.end + 900.0, 200.0, 300, 30, 10, 2.0, 100, 30.0, 5.0, 300)
    d = decompose([a1, a2], unseen=False)
    c = d.components
    assert d.iterations_net == 600
    assert c["t_opt"] == pytest.approx(1200.0)
    assert c["lost"] == pytest.approx(70 * 2.0)
    assert c["hang"] == pytest.approx(600.0)
    assert c["repair"] == pytest.approx(900.0)
    assert c["startup"] == pytest.approx(300.0)
    assert c["ckpt_save"] == pytest.approx(3 * 30.0 + 2 * 30.0)
    assert d.attempts[0].lost_charged == pytest.approx(140.0)
    assert abs(d.check()) < 1e-9 * d.t_obs


def test_attempt_without_save_loses_everything_and_older_work() -> None:
    a1, _ = _attempt("1", 0.0, 10.0, 0, 25, 10, 1.0, 100, 5.0, 50.0, 0)  # saves at 100, 200
    a2, _ = _attempt("2", a1.end + 10, 10.0, 200, 5, 10, 1.0, 100, 5.0, 50.0, 200)  # to 250
    # a3 loads 100 (say 200 was corrupt): a1's work 200..250 is also lost, charged to a2
    a3, _ = _attempt("3", a2.end + 10, 10.0, 100, 20, 10, 1.0, 100, 5.0, 1.0, 100)
    d = decompose([a1, a2, a3], unseen=False)
    assert d.attempts[0].lost_charged == pytest.approx(50.0)
    assert d.attempts[1].lost_charged == pytest.approx(50.0 + 100.0)
    assert d.iterations_net == 300
    assert abs(d.check()) < 1e-9 * d.t_obs


def test_fail_slow_is_slow_not_opt() -> None:
    slow = {it: 2.0 for it in range(110, 160, 10)}  # five intervals at half speed
    a, _ = _attempt("1", 0.0, 10.0, 0, 30, 10, 1.0, 1000, 0.0, 1.0, 0, slow)
    d = decompose([a])
    assert d.ideal_step_s == pytest.approx(1.0)
    assert d.components["slow"] == pytest.approx(50.0)
    assert abs(d.check()) < 1e-9 * d.t_obs


def test_no_progress_attempt_is_startup() -> None:
    a1, _ = _attempt("1", 0.0, 10.0, 0, 10, 10, 1.0, 50, 2.0, 20.0, 0)
    a2 = AttemptInput("2", a1.end + 30, a1.end + 130, [], [], None)  # died during init
    a3, _ = _attempt("3", a2.end + 30, 10.0, 100, 10, 10, 1.0, 50, 2.0, 1.0, 100)
    d = decompose([a1, a2, a3])
    assert d.attempts[1].startup == pytest.approx(100.0)
    assert d.attempts[1].hang == 0.0
    assert abs(d.check()) < 1e-9 * d.t_obs


def test_overlapping_attempts_count_once() -> None:
    a1, _ = _attempt("1", 0.0, 10.0, 0, 10, 10, 1.0, 50, 2.0, 100.0, 0)
    a2, _ = _attempt("2", a1.end - 50.0, 10.0, 100, 10, 10, 1.0, 50, 2.0, 1.0, 100)
    d = decompose([a1, a2], unseen=False)
    assert d.components["repair"] == 0.0
    assert d.attempts[0].hang == pytest.approx(2.0 + 50.0)  # trailing save + overlap cut
    assert abs(d.check()) < 1e-9 * d.t_obs


def test_sum_is_exact_on_random_timelines() -> None:
    rng = random.Random(3)
    for _ in range(200):
        atts, t, it = [], 0.0, 0
        for k in range(rng.randint(1, 6)):
            n = rng.randint(0, 40)
            if n == 0:
                a = AttemptInput(str(k), t, t + rng.uniform(1, 100), [], [], None)
            else:
                a, _ = _attempt(str(k), t, rng.uniform(1, 300), it, n, 10,
                                rng.uniform(0.5, 3), rng.choice([20, 50, 100]),
                                rng.uniform(0, 60), rng.uniform(0, 900), it)
                last_saves = [s.iteration for s in a.saves]
                it = max(last_saves) if last_saves else it
            atts.append(a)
            t = a.end + rng.uniform(-20, 2000)
        d = decompose(atts)
        assert math.isfinite(d.t_obs)
        assert abs(d.check()) <= 1e-9 * max(d.t_obs, 1.0)
        assert all(v >= -1e-9 for k, v in d.components.items() if k != "slow")


def test_unseen_iterations_after_the_last_line_are_estimated_lost() -> None:
    """Lines every 10 iterations: after the last one (370) the attempt ran on for 600 s, past
    the time line 380 would have been printed, so 0..9 more iterations finished unseen:
    (10 - 1) / 2 = 4.5 expected, at the last step time, moved from hang to lost."""
    a1, _ = _attempt("1", 0.0, 100.0, 0, 37, 10, 2.0, 100, 30.0, 600.0, 0)
    a2, _ = _attempt("2", a1.end + 900.0, 200.0, 300, 30, 10, 2.0, 100, 30.0, 5.0, 300)
    exact = decompose([a1, a2], unseen=False)
    d = decompose([a1, a2])
    assert d.log_interval == 10
    assert d.attempts[0].estimated_lost == pytest.approx(4.5 * 2.0)
    assert d.components["lost"] == pytest.approx(exact.components["lost"] + 9.0)
    assert d.components["hang"] == pytest.approx(exact.components["hang"] - 9.0)
    assert d.estimated == {"lost": pytest.approx(9.0)}
    for k in ("t_opt", "slow", "ckpt_save", "startup", "repair", "tail"):
        assert d.components[k] == pytest.approx(exact.components[k])
    assert abs(d.check()) < 1e-9 * d.t_obs


def test_unseen_estimate_is_bounded_by_the_time_left() -> None:
    """The attempt ended 5 s (2.5 steps) after its last line: at most that window holds
    unseen iterations, (2.5 - 1) / 2 = 0.75 expected."""
    a1, _ = _attempt("1", 0.0, 100.0, 0, 37, 10, 2.0, 100, 0.0, 5.0, 0)
    a2, _ = _attempt("2", a1.end + 100.0, 50.0, 300, 30, 10, 2.0, 100, 0.0, 5.0, 300)
    d = decompose([a1, a2])
    assert d.attempts[0].estimated_lost == pytest.approx(0.75 * 2.0)
    assert d.attempts[0].hang == pytest.approx(5.0 - 1.5)


def test_every_iteration_logged_estimates_nothing() -> None:
    a1, _ = _attempt("1", 0.0, 100.0, 0, 370, 1, 2.0, 100, 0.0, 600.0, 0)
    a2, _ = _attempt("2", a1.end + 900.0, 200.0, 300, 300, 1, 2.0, 100, 0.0, 5.0, 300)
    d = decompose([a1, a2])
    assert d.log_interval == 1 and d.estimated == {}
    assert d.components["hang"] == pytest.approx(600.0)


def test_a_load_above_the_last_line_is_work_that_survived() -> None:
    """Saved every 25 iterations, logged every 10: the next attempt loads 375, above the last
    line (370), so iterations 371..375 ran unseen and survived (not slow < 0)."""
    a1, _ = _attempt("1", 0.0, 100.0, 0, 37, 10, 2.0, 25, 0.0, 600.0, 0)
    a2, _ = _attempt("2", a1.end + 900.0, 200.0, 375, 30, 10, 2.0, 25, 0.0, 5.0, 375)
    d = decompose([a1, a2])
    assert d.attempts[0].estimated_compute == pytest.approx(5 * 2.0)
    assert d.iterations_net == 675
    assert d.components["slow"] == pytest.approx(0.0, abs=1e-6)
    assert abs(d.check()) < 1e-9 * d.t_obs


def test_attempt_without_lines_that_saved_a_checkpoint() -> None:
    """--open-mode=truncate: a requeue erased attempt 1's output; attempt 2 loads iteration
    200, which only attempt 1 can have saved. Its 200 steps are estimated compute."""
    a1 = AttemptInput("1", 0.0, 1000.0, [], [], None)
    a2, _ = _attempt("2", 1100.0, 50.0, 200, 30, 10, 2.0, 100, 0.0, 5.0, 200)
    d = decompose([a1, a2])
    assert d.attempts[0].estimated_compute == pytest.approx(200 * 2.0)
    assert d.attempts[0].startup == pytest.approx(1000.0 - 400.0)
    assert d.iterations_net == 500 and d.start_iteration == 0
    assert d.components["slow"] == pytest.approx(0.0, abs=1e-6)
    assert d.estimated == {"compute": pytest.approx(400.0)}


def _messy_run(rng: random.Random) -> list[AttemptInput]:
    """Attempts with missing and unparseable ms, stalls, repeated and backward iterations,
    saves with and without timers, and attempts with zero or one progress line."""
    atts, t, it = [], 1000.0, rng.choice([0, 100])
    for k in range(rng.randint(1, 5)):
        start, prog = t, []
        tt = t + rng.uniform(0, 100)
        for _ in range(rng.choice([0, 1, 2, 3, 5, 30])):
            it = max(0, it + (rng.choice([1, 10, 0, -5]) if rng.random() < 0.2 else 10))
            tt += rng.uniform(0, 50) * (4 if rng.random() < 0.1 else 1)
            ms = rng.choice([math.nan, math.inf, rng.uniform(500, 3000)]) \
                if rng.random() < 0.3 else 1000 * rng.uniform(0.9, 1.5)
            prog.append((round(tt, 3), it, ms))
        saves = [Save(s, rng.choice([None, rng.uniform(1, 30)]), rng.random() < 0.9)
                 for s in sorted(rng.sample(range(it + 1), min(rng.choice([1, 3, 8]), it + 1)))
                 ] if rng.random() < 0.6 else []
        end = tt + rng.uniform(0, 200)
        atts.append(AttemptInput(f"a{k}", start, end, prog, saves,
                                 rng.choice([None, max(0, it - rng.randint(0, 30))])))
        t, it = end + rng.uniform(-5, 300), max(0, it - rng.randint(0, 20))
    return atts


def test_ideal_step_from_arrays_matches_the_intervals() -> None:
    """t* is measured from the steady intervals with numpy (tstar.py) before the intervals are
    built: it must be what ideal_step measures on the intervals the decomposition returns."""
    from pipeline.analyze.decompose import ideal_step

    rng = random.Random(11)
    fallback = 0
    for _ in range(1500):
        d = decompose(_messy_run(rng))
        want = ideal_step(d.intervals)
        assert d.ideal_step_s == want or (math.isnan(want) and math.isnan(d.ideal_step_s))
        fallback += not any(not iv.first and not iv.after_save and iv.b > iv.a
                            and math.isfinite(iv.step_s) for iv in d.intervals)
    assert 0 < fallback < 1500  # both ways of measuring t* were exercised


def test_a_scheduler_start_equal_to_the_first_line_keeps_the_interval_below() -> None:
    """sacct's Start is whole seconds, so a trainer's first line can carry the same stamp.
    That attempt still began one logging interval below its first line (as with no stamp
    match); only an attempt whose start *is* its first output line (inferred from output)
    resumes at that line's iteration (the work it reports was done before it is seen)."""
    prog = [(100.0 + 10.0 * k, 2 * (k + 1), 5000.0) for k in range(5)]
    sched = decompose([AttemptInput("1", 100.0, 150.0, prog)])
    assert (sched.start_iteration, sched.iterations_net) == (0, 10)
    inferred = decompose([AttemptInput("1", 100.0, 150.0, prog, start_from_output=True)])
    assert (inferred.start_iteration, inferred.iterations_net) == (2, 8)
    # a start before the first line, inferred or not, is one interval below it
    early = decompose([AttemptInput("1", 90.0, 150.0, prog, start_from_output=True)])
    assert early.start_iteration == 0
