"""The report page parsed with html.parser: sections, headline numbers, optional inputs,
escaping of log text, and no external references."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import duckdb
from click.testing import CliRunner

from pipeline.cli.report import report
from pipeline.report.html import render_html, write_report
from pipeline.units import human
from tests.report.conftest import MODEL, PAYLOAD, Page

SECTIONS = ("summary", "where", "timeline", "categories", "interruptions", "model", "quality")


def test_sections_and_headline_numbers(demo_dir: Path, analysis: dict[str, Any]) -> None:
    page = Page(render_html(analysis, db=demo_dir / "tormortem.duckdb"))
    assert set(SECTIONS) <= set(page.sections)
    run = analysis["runs"][0]
    summary = page.section("summary")
    assert f"{run['tor']:.4f}" in summary
    assert human(run["t_obs_s"]) in summary and f"{run['t_obs_s']:,.0f} s" in summary
    assert human(run["t_opt_s"]) in summary
    assert "interruptions " + str(len(run["interruptions"])) in summary
    # the top causes of lost time: interruption categories and fail-slow, by cost
    costs = {c: v["cost_s"] for c, v in run["by_category"].items()}
    costs["fail-slow (cause unknown)"] = run["slow_split"]["fail_slow_episodes"]
    top = sorted(costs, key=lambda c: -costs[c])[:3]
    assert "fail-slow (cause unknown)" in top  # 2h 24m in the demo, above nccl_timeout
    top_list = summary.split("Top causes of lost time")[1].split("Data-quality")[0]
    for cat in top:
        assert cat in top_list
    assert [c for c in costs if c in top_list and c not in top] == []
    assert "predicted TOR not available" in summary
    where = page.section("where")
    for v in run["components"].values():
        assert f"{v:,.1f}" in where
    assert f"{run['t_obs_s']:,.1f}" in where  # the total row
    ints = page.section("interruptions")
    for i in run["interruptions"]:
        assert i["end"][:10] in ints and i["attempt"] in ints
    assert "CAUSE" in ints.upper() and "SYMPTOM" in ints.upper()
    cats = page.section("categories")
    assert "per 1,000 node-days" in cats and "95% interval" in cats
    assert "Fitted rates: not available" in cats
    assert "Model predictions: not available" in page.section("model")
    quality = page.section("quality")
    assert "Line accounting per source" in quality and "joblog" in quality


def test_self_contained(demo_dir: Path, analysis: dict[str, Any],
                        rates_doc: dict[str, Any]) -> None:
    page = Page(render_html(analysis, rates_doc, MODEL, demo_dir / "tormortem.duckdb"))
    imgs = [a for t, a in page.tags if t == "img"]
    assert len(imgs) >= 7
    assert all((a.get("src") or "").startswith("data:image/png;base64,") for a in imgs)
    assert all(a.get("alt") for a in imgs)
    assert not [t for t, _ in page.tags if t in ("script", "link", "iframe", "object")]
    for _, a in page.tags:
        for k in ("src", "href"):
            v = a.get(k) or ""
            assert v.startswith(("data:", "#")) or not v, (k, v)


def test_optional_inputs_render(demo_dir: Path, analysis: dict[str, Any],
                                rates_doc: dict[str, Any]) -> None:
    page = Page(render_html(analysis, rates_doc, MODEL, demo_dir / "tormortem.duckdb"))
    summary = page.section("summary")
    assert "0.8123" in summary and "[0.7901, 0.8345] 90%" in summary
    model = page.section("model")
    assert "fixture model" in model and "repair gap halved" in model and "+0.0231" in model
    assert "optimum" in model.lower() and "25m 00s" in model
    assert "not available" not in model
    alts = {a.get("alt") for t, a in page.tags if t == "img"}
    assert {"TOR vs scale", "TOR vs checkpoint interval", "Key factors"} <= alts
    cats = page.section("categories")
    assert "Fitted rates: not available" not in cats and "preset:demo" in cats


def test_partial_model_and_no_database(analysis: dict[str, Any]) -> None:
    page = Page(render_html(analysis, None, {"predicted": {"tor": 0.8}}, None))
    model = page.section("model")
    assert "TOR vs scale: not available" in model
    assert "Key-factor ranking: not available" in model
    assert "Step time over time: not available" in page.section("timeline")
    assert "not found beside analysis.json" in page.section("quality")
    assert "0.8000" in page.section("summary")


def _poisoned(demo_dir: Path, analysis: dict[str, Any], tmp: Path
              ) -> tuple[dict[str, Any], Path]:
    bad = copy.deepcopy(analysis)
    i = bad["runs"][0]["interruptions"][0]
    i["cause"]["message"] = PAYLOAD
    i["node"] = "<b>node</b>"
    i["output_tail"] = [PAYLOAD]
    bad["runs"][0]["slow_episodes"] = bad["runs"][0]["slow_episodes"][:1]
    db = tmp / "tormortem.duckdb"
    shutil.copy(demo_dir / "tormortem.duckdb", db)
    shutil.copy(demo_dir / "events.parquet", tmp / "events.parquet")  # the view events reads it
    con = duckdb.connect(str(db))
    con.execute("UPDATE evidence SET message = ? WHERE attempt = ?", [PAYLOAD, i["attempt"]])
    con.execute("INSERT INTO unparsed_samples (file, source, line_no, text) "
                "VALUES ('x.log', 'joblog', 7, ?)", [PAYLOAD])
    con.close()
    return bad, db


def test_log_text_is_escaped(demo_dir: Path, analysis: dict[str, Any], tmp_path: Path) -> None:
    bad, db = _poisoned(demo_dir, analysis, tmp_path)
    html = render_html(bad, None, None, db)
    assert "<script" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in html
    page = Page(html)
    assert not [t for t, _ in page.tags if t == "script"]
    assert not [a for t, a in page.tags if t == "img" and a.get("src") == "x"]
    assert PAYLOAD in page.section("interruptions")  # shown as text, verbatim
    assert "<b>node</b>" in page.section("interruptions")
    assert PAYLOAD in page.section("quality")


def test_write_report_and_cli(demo_dir: Path, analysis: dict[str, Any], tmp_path: Path) -> None:
    html, pdf = write_report(tmp_path / "a", analysis, pdf=False,
                             db=demo_dir / "tormortem.duckdb")
    assert pdf is None and html.name == "report.html" and html.stat().st_size > 50_000
    r = CliRunner().invoke(report, [str(demo_dir), "--out", str(tmp_path / "b"), "--no-pdf"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "b" / "report.html").exists() and "wrote" in r.output
    r = CliRunner().invoke(report, [str(tmp_path / "nothing-here"), "--no-pdf"])
    assert r.exit_code == 2 and "does not exist" in r.output  # a usage error
    (tmp_path / "empty").mkdir()
    r = CliRunner().invoke(report, [str(tmp_path / "empty"), "--no-pdf"])
    assert r.exit_code == 1 and "tormortem analyze" in r.output
    bad_model = tmp_path / "m.json"
    bad_model.write_text("{not json")
    r = CliRunner().invoke(report, [str(demo_dir), "--out", str(tmp_path / "c"), "--no-pdf",
                                    "--model", str(bad_model)])
    assert r.exit_code == 1 and "not valid JSON" in r.output
