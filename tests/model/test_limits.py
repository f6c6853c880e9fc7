"""plan refuses to recommend nonsense, and says where its answers stop holding."""

from __future__ import annotations

import math

import pytest

from pipeline.model import plan
from pipeline.model.core import process
from pipeline.model.limits import TOR_FLOOR, breaking_point, refusal
from pipeline.model.predict import predict
from tests.model.helpers import rates

# one GPU category: 1e-4 per GPU-hour, restart R = 60 + 180 + 120 s = 6 min
R = 360.0


def test_mtbf_below_the_restart_is_refused() -> None:
    # MTBF = 1 / (1e-4 x gpus) hours: 5.5 min at 109,000 GPUs, 6.1 min at 98,304
    ok = predict(rates(gpus=1024))
    assert refusal(ok) == []
    bad = predict(rates(gpus=131072))
    assert bad.mtbf_s < R
    why = refusal(bad)
    assert any("sooner than the mean restart of 6m 00s" in w for w in why)


def test_tor_about_zero_is_refused_only_at_every_interval() -> None:
    # MTBF 10 min, restart 1 min, but a checkpoint only every 10 h of compute: ~0 at that
    # interval, not at the best one (0.75), which is the answer (fault probe I8/I9)
    p = predict(rates(gpus=1024, rate_per_gpu_hour=6 / 1024, hang=10.0, repair=20.0,
                      startup=30.0, tau=36000.0))
    assert p.tor < TOR_FLOOR and p.mtbf_s > p.mean_restart_s
    assert refusal(p) == [] and max(t.tor for t in p.taus) > 0.7
    # ... and an hour to save each checkpoint: ~0 whatever the interval
    p = predict(rates(gpus=1024, rate_per_gpu_hour=6 / 1024, hang=10.0, repair=20.0,
                      startup=30.0, tau=36000.0, delta=3600.0))
    assert max(t.tor for t in p.taus) < TOR_FLOOR
    why = refusal(p)
    assert len(why) == 1 and "about 0" in why[0]


def test_breaking_point_matches_the_closed_form() -> None:
    r = rates(gpus=1024)
    bp = breaking_point(r)
    # MTBF = R where L R = 1: gpus = 1 / (1e-4 / 3600 x 360) = 100,000 -> next multiple of 8
    assert bp.mtbf_below_restart_gpus == math.ceil(1 / (1e-4 / 3600 * R) / 8) * 8
    half = bp.tor_half_gpus
    assert half is not None and not bp.tor_half_capped

    def best(g: int) -> float:
        from pipeline.model.core import optimal_tau, tor_value

        p = process(r.with_scale(g))
        return float(tor_value(p, optimal_tau(p)))

    assert best(half) >= 0.5 > best(int(half * 1.02) // 8 * 8 + 8)


def test_plan_result_withholds_the_optimum() -> None:
    res = plan.plan(rates(gpus=1024), gpus=131072, sweep="gpus=1024,131072")
    assert res.refused
    doc = plan.to_json(res)
    assert doc["no_recommendation"] == res.refused
    assert [c["name"] for c in doc["scenario"]["checkpoint_interval"]] == ["current"]
    rows = doc["sweep"]["rows"]
    assert rows[0]["tau_opt_s"] is not None and rows[0]["no_recommendation"] == []
    assert rows[1]["tau_opt_s"] is None and rows[1]["no_recommendation"]
    assert doc["breaking_point"]["mtbf_below_restart_gpus"] == 100_000


@pytest.mark.parametrize("gpus", [1024, 8192])
def test_sane_plans_still_recommend(gpus: int) -> None:
    doc = plan.to_json(plan.plan(rates(gpus=gpus)))
    assert doc["no_recommendation"] == []
    assert [c["name"] for c in doc["scenario"]["checkpoint_interval"]] == [
        "current", "optimal (exact)", "Young", "Daly"]


def test_no_save_time_chooses_no_interval() -> None:
    """A run that saved no checkpoint fits delta 0: every interval down to one step looked
    free (plan: 'optimal 24.0 s, +34.6 pts'). No interval is chosen then, and the breaking
    point keeps today's interval; --delta gives them back."""
    from pipeline.model.limits import describe
    from pipeline.model.predict import tau_choices

    none = rates(gpus=1024, delta=0.0)
    assert [t.name for t in tau_choices(process(none))] == ["current"]
    assert "today's checkpoint interval" in describe(breaking_point(none))
    back = plan.plan(none, delta_s=40.0)
    assert [t.name for t in back.scenario.taus] == ["current", "optimal (exact)", "Young", "Daly"]
    assert "the best checkpoint interval" in describe(breaking_point(rates(gpus=1024)))
