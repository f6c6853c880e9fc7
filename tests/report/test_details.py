"""Report details: approximate values marked, an undefined TOR said as such, key factors
ranked by cause without counting fail-slow twice, timeline colours that differ."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from pipeline.model.predicted import report_model
from pipeline.report.html import render_html
from pipeline.report.model_text import key_factor_lines
from pipeline.report.plots import ATTEMPT_COLOR, CHECKPOINT_COLOR
from tests.report.conftest import Page


def _hex(c: str) -> tuple[float, float, float]:
    return tuple(int(c[i:i + 2], 16) / 255 for i in (1, 3, 5))  # type: ignore[return-value]


def test_timeline_attempts_and_checkpoints_differ() -> None:
    import colorsys

    (r1, g1, b1), (r2, g2, b2) = _hex(ATTEMPT_COLOR), _hex(CHECKPOINT_COLOR)
    l1, l2 = colorsys.rgb_to_hls(r1, g1, b1)[1], colorsys.rgb_to_hls(r2, g2, b2)[1]
    assert abs(l1 - l2) > 0.4  # light bars, dark ticks: apart even in grey print


def test_approximate_values_and_undefined_tor_in_the_report(
        demo_dir: Path, analysis: dict[str, Any]) -> None:
    a = copy.deepcopy(analysis)
    run = a["runs"][0]
    run["approx"] = {"repair": "start and end inferred (test)"}
    run["interruptions"][0]["approx"] = {"node": "the batch host (test)"}
    run["tor"], run["tor_undefined"] = None, "no progress lines: add the job output (test)"
    page = Page(render_html(a, db=demo_dir / "tormortem.duckdb"))
    summary = page.section("summary")
    assert "realized TOR undefined no progress lines: add the job output (test)" in summary
    assert "Approximate values (~)" in summary and "repair gap: start and end inferred" in summary
    assert f"node of {run['interruptions'][0]['attempt']}: the batch host (test)" in summary
    where = page.section("where")
    assert f"~{run['components']['repair']:,.1f}" in where
    assert f"~{run['components']['hang']:,.1f}" not in where
    ints = page.section("interruptions")
    assert "~" + run["interruptions"][0]["node"] in ints


def test_key_factors_by_cause_without_double_counting() -> None:
    factors = [
        {"name": "lost", "kind": "stage", "mode": None, "gain_without": 0.047,
         "gain_halved": 0.023},
        {"name": "node_failure", "kind": "category", "mode": "fail-stop",
         "gain_without": 0.037, "gain_halved": 0.018},
        {"name": "unknown", "kind": "category", "mode": "fail-slow", "gain_without": 0.028,
         "gain_halved": 0.014},
        {"name": "slow", "kind": "stage", "mode": None, "gain_without": 0.028,
         "gain_halved": 0.014},
    ]
    lines = key_factor_lines(factors)
    assert lines[0] == ("  Key causes (TOR gained if removed / halved): node_failure +3.70 / "
                        "+1.80 pp; fail-slow (cause unknown) +2.80 / +1.40 pp")
    assert lines[1] == "  Same time by stage: lost work +4.70 / +2.30 pp"  # "slow" once only
    analysis = {"runs": [{"run": "r", "attempts": [{"gpus": 8}], "model": {
        "predicted": {"tor": 0.8, "low": 0.7, "high": 0.9}, "vs_gpus": [], "vs_tau": [],
        "tau_s": 1800.0, "tau_opt_s": 1200.0, "key_factors": factors}}]}
    doc = report_model(analysis)
    assert doc is not None
    assert doc["key_factors"] == [["node_failure", 0.037], ["fail-slow (cause unknown)", 0.028]]
