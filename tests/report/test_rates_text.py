"""``tormortem fit`` of a run with no interruption: an empty table said nothing (fault probe);
now 0 events and the exact (Garwood) 95% upper bound of the total rate, 3.689 / exposure."""

from __future__ import annotations

from typing import Any

from pipeline.report.rates_text import render_rates


def _doc(categories: list[dict[str, Any]]) -> dict[str, Any]:
    return {"provenance": {"run": "r"}, "scale": {"gpus": 128, "gpus_per_node": 8},
            "categories": categories,
            "fit": {"exposure_gpu_hours": 104.0, "exposure_node_days": 0.54,
                    "time_to_interruption": {"shape": None}, "fail_slow": {}},
            "checkpoint": {"tau_s": 2473.0, "delta": {"mean_s": 46.0}, "load_s": 0.0}}


def test_no_interruption_says_zero_and_the_upper_bound() -> None:
    text = render_rates(_doc([]))
    assert "No interruption in this run: 0 events in 104 GPU-hours" in text
    assert "95% upper bound on the total: 0.0355 /GPU-h" in text
    assert "category  mode" not in text
