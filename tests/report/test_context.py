"""Numbers behind the tables: per-category sums and rates, Poisson intervals, model shapes."""

from __future__ import annotations

from typing import Any

import pytest
from scipy.stats import poisson

from pipeline.report.context import categories, exposure, poisson_ci
from pipeline.report.model_ctx import model_context, predicted_for


def test_poisson_interval_is_exact() -> None:
    assert poisson_ci(0)[0] == 0.0
    for k in (1, 5, 40):
        lo, hi = poisson_ci(k)
        assert poisson.sf(k - 1, lo) == pytest.approx(0.025, rel=1e-6)
        assert poisson.cdf(k, hi) == pytest.approx(0.025, rel=1e-6)


def test_categories_agree_with_the_analysis(analysis: dict[str, Any]) -> None:
    run = analysis["runs"][0]
    rows = categories(run)
    assert [r["category"] for r in rows] == list(run["by_category"])
    gpu_h, node_d = exposure(run)
    assert gpu_h > 0 and node_d > 0
    for r in rows:
        agg = run["by_category"][r["category"]]
        assert r["count"] == agg["count"]
        assert r["sum_cost_s"] == pytest.approx(agg["cost_s"])
        assert r["per_gpu_h"]["v"] == pytest.approx(r["count"] / gpu_h)
        assert r["per_knd"]["v"] == pytest.approx(1000 * r["count"] / node_d)
        assert r["per_gpu_h"]["lo"] < r["per_gpu_h"]["v"] < r["per_gpu_h"]["hi"]
        parts = sum(r["sum_" + k] for k in ("lost_s", "hang_s", "repair_s", "startup_s"))
        assert parts == pytest.approx(r["sum_cost_s"])
    assert sum(r["share"] for r in rows) == pytest.approx(100.0)


def test_model_shapes_are_optional_and_per_run() -> None:
    assert predicted_for(None, "a") is None
    m: dict[str, Any] = {"predicted": {"tor": 0.9}, "runs": {"b": {"tor": 0.7, "low": 0.6,
                                                                    "high": 0.8}}}
    assert predicted_for(m, "a") == {"tor": 0.9, "low": None, "high": None, "level": None}
    assert predicted_for(m, "b")["tor"] == 0.7  # type: ignore[index]
    ctx = model_context(m, {"a": 0.95, "b": 0.75})
    assert ctx is not None
    assert [c["inside"] for c in ctx["compare"]] == [None, True]
    assert ctx["fig_gpus"] is None and ctx["fig_tau"] is None and ctx["factors"] == []
    assert model_context({}, {"a": 0.9}) is None
    bad = model_context({"vs_gpus": [["x", 1]], "key_factors": [["f", "y"]]}, {})
    assert bad is not None and bad["fig_gpus"] is None and bad["factors"] == []
