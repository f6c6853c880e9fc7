"""Ground truth in the shape of TOR_MODEL.md section 7 (``tormortem.analysis/1``).

Definitions (they make the components sum to T_obs exactly):

* T_opt = N_net * t*, N_net = final iteration - start iteration (0).
* slow = sum over *surviving* iterations of (duration - t*); split in ``slow_split`` into
  fail-slow excess (duration - base duration, base = t* * exp(sigma Z)) and jitter (base - t*).
* lost = durations of the completed iterations that were rolled back (done after the checkpoint
  the next attempt loaded).
* ckpt_save = every *completed* periodic save (save start to save end), also when its checkpoint
  was never loaded later. A save cut by a fault counts as hang. The final save after the last
  iteration of the run belongs to the tail.
* startup = attempt start to its first iteration beginning (init, rendezvous, load); when a
  fault hits during startup, attempt start to the fault.
* hang = for a failed attempt, its last progress (a completed iteration or completed save) to
  its end: the partial iteration (or partial save) in flight at the fault + detection/teardown.
  Extra fields split it: ``partial_s`` (last progress -> fault) and ``detect_s`` (fault -> end).
* repair = end of an attempt to start of the next.
* tail = last iteration of the final attempt to its end (final save, shutdown).

An interruption's cost = its lost + hang + the repair gap after it + the next attempt's startup.
"""

from __future__ import annotations

from typing import Any

from pipeline.model.rates import Rates, save_interval, to_json
from pipeline.simulate.campaign import Campaign
from pipeline.simulate.timefmt import Clock

COMPONENTS = ("t_opt", "slow", "lost", "ckpt_save", "startup", "hang", "repair", "tail")


def build(c: Campaign, meta: dict[str, Any]) -> dict[str, Any]:
    clock = Clock(c.s.epoch)
    atts = c.attempts
    r: Rates = c.rates
    tstar = r.ideal_step_s
    first, last = atts[0], atts[-1]
    t_obs = last.end - first.start
    n_net = c.target - 0
    t_opt = n_net * tstar
    repair = [atts[i + 1].start - atts[i].end for i in range(len(atts) - 1)]
    comp = {
        "t_opt": t_opt,
        "slow": c.totals.survived_s - t_opt,
        "lost": sum(a.lost_s for a in atts),
        "ckpt_save": sum(a.ckpt_save_s for a in atts),
        "startup": sum(a.startup_s for a in atts),
        "hang": sum(a.hang_s for a in atts),
        "repair": sum(repair),
        "tail": last.tail_s,
    }
    attempts = []
    for a in atts:
        attempts.append({
            "attempt": a.job_id, "start": clock.iso(a.start), "end": clock.iso(a.end),
            "state": a.state, "nodes": list(a.nodes),
            "index": a.index, "job_id": a.job_id, "restart": a.restart,
            "submit": clock.iso(a.submit), "exit_code": a.exit_code,
            "start_iteration": a.start_iteration, "last_iteration": a.last_iteration,
            "train_begin": clock.iso(a.train_begin) if a.train_begin is not None else None,
            "last_progress": clock.iso(a.last_progress) if a.last_progress is not None else None,
            "startup_s": a.startup_s, "iterations_s": a.iter_s, "ckpt_save_s": a.ckpt_save_s,
            "saves": a.saves, "lost_s": a.lost_s, "hang_s": a.hang_s, "tail_s": a.tail_s,
        })
    interruptions = []
    by_cat: dict[str, dict[str, Any]] = {}
    for i, a in enumerate(atts[:-1]):
        f = a.fault
        assert f is not None
        nxt = atts[i + 1]
        cost = a.lost_s + a.hang_s + repair[i] + nxt.startup_s
        lp = a.last_progress if a.last_progress is not None else a.start + a.startup_s
        interruptions.append({
            "attempt": a.job_id, "end": clock.iso(a.end), "category": f.category,
            "node": f.node, "cost_s": cost, "lost_s": a.lost_s, "hang_s": a.hang_s,
            "repair_s": repair[i], "startup_s": nxt.startup_s,
            "mode": "fail-stop", "attempt_index": a.index, "fault": clock.iso(f.time),
            "last_progress": clock.iso(lp), "partial_s": max(0.0, f.time - lp),
            "detect_s": a.end - f.time, "fault_in_startup": f.in_startup,
            "gpu": f.gpu, "rank": f.rank, "state": f.state, "exit_code": f.exit_code,
            "requeued_same_job": f.requeue, "lost_iterations": a.lost_iterations,
            "last_iteration": a.last_iteration, "next_attempt": nxt.job_id,
            "next_start": clock.iso(nxt.start), "loaded_iteration": nxt.start_iteration,
        })
        b = by_cat.setdefault(f.category, {"count": 0, "cost_s": 0.0, "lost_s": 0.0,
                                           "hang_s": 0.0, "repair_s": 0.0, "startup_s": 0.0})
        b["count"] += 1
        b["cost_s"] += cost
        b["lost_s"] += a.lost_s
        b["hang_s"] += a.hang_s
        b["repair_s"] += repair[i]
        b["startup_s"] += nxt.startup_s
    tot = c.totals
    run = {
        "run": c.s.job_name,
        "start": clock.iso(first.start), "end": clock.iso(last.end),
        "t_obs_s": t_obs, "t_opt_s": t_opt, "tor": t_opt / t_obs,
        "ideal_step_s": tstar, "iterations_net": n_net,
        "components": comp,
        "attempts": attempts,
        "interruptions": interruptions,
        "by_category": dict(sorted(by_cat.items())),
        # --- extra truth fields ---
        "iteration_start": 0, "iteration_final": c.target,
        "first_startup_s": first.startup_s,
        "slow_split": {"fail_slow": tot.survived_slow_fs, "jitter": tot.survived_jitter},
        "save_interval_iterations": save_interval(r),
        "log_interval_iterations": c.s.log_interval,
        "exposure": {"gpu_hours": tot.exposure_gpu_s / 3600.0,
                     "node_hours": tot.exposure_node_s / 3600.0,
                     "note": "at-risk time: attempt start to fault, or to the end of training"},
        "fail_slow_episodes": [
            {"start": clock.iso(e.start), "end": clock.iso(e.end), "rho": e.rho,
             "category": e.category, "extra_s": e.extra_s} for e in tot.episodes],
    }
    return {"schema": "tormortem.analysis/1", "generator": meta, "parameters": to_json(r),
            "runs": [run]}


def component_sum(run: dict[str, Any]) -> float:
    return float(sum(run["components"][k] or 0.0 for k in COMPONENTS))
