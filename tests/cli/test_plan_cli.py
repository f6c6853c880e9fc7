"""``tormortem plan`` on the demo's fitted rates: the README's examples, refusals, --rates DIR."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import invoke


def test_the_old_readme_example_is_refused_with_reasons(demo_out: Path) -> None:
    r = invoke("plan", "--rates", str(demo_out / "rates.json"), "--gpus", "65536",
               "--what-if", "gpu_memory.rate=x0.5")
    assert r.exit_code == 0
    out = r.stdout
    assert "No recommendation (no optimum checkpoint interval, no key factors):" in out
    assert "sooner than the mean restart" in out and "about 0" in out
    assert "optimal (exact)" not in out and "Key factors" not in out
    assert out.count("Breaking point: ") == 1


def test_the_readme_sweep_shows_the_breaking_point(demo_out: Path) -> None:
    r = invoke("plan", "--rates", str(demo_out), "--sweep", "gpus=128,256,512,1024,2048")
    assert r.exit_code == 0
    rows = {line.split()[0]: line.split() for line in r.stdout.split("Sweep over gpus:")[1]
            .splitlines()[2:] if line.strip() and not line.strip().startswith("*")}
    assert rows["128"][-2:] != ["*", "*"] and rows["2,048"][-2:] == ["*", "*"]
    assert "* no optimum: failures come every" in r.stdout
    doc = json.loads(invoke("plan", "--rates", str(demo_out), "--sweep",
                            "gpus=128,2048", "--json").stdout)
    bp = doc["breaking_point"]
    assert 128 < bp["tor_half_gpus"] < bp["mtbf_below_restart_gpus"] <= 2048
    assert [bool(row["no_recommendation"]) for row in doc["sweep"]["rows"]] == [False, True]


def test_rates_from_a_directory_or_named_as_an_analysis(demo_out: Path) -> None:
    a = invoke("plan", "--rates", str(demo_out), "--json")
    b = invoke("plan", "--rates", str(demo_out / "rates.json"), "--json")
    assert a.exit_code == b.exit_code == 0
    assert json.loads(a.stdout)["baseline"]["tor"] == json.loads(b.stdout)["baseline"]["tor"]
    r = invoke("plan", "--rates", str(demo_out / "analysis.json"))
    assert r.exit_code == 1
    assert "is an analysis (schema tormortem.analysis/1), not a rates file" in r.stderr
    assert f"tormortem plan --rates {demo_out}" in r.stderr


def test_an_absurd_interval_still_gets_the_optimum(demo_out: Path) -> None:
    """--tau 1ms (or 100000d) makes the TOR at that interval ~0, which is the interval's
    fault, not the failures': the optimum was withheld with advice about failures coming
    faster than a restart, though the MTBF (4h 36m) is far above R (fault probe I8/I9)."""
    for tau in ("1ms", "100000d"):
        r = invoke("plan", "--rates", str(demo_out), "--tau", tau)
        assert r.exit_code == 0, r.output
        assert "No recommendation" not in r.stdout and "rarer than a restart" not in r.stdout
        best = next(ln for ln in r.stdout.splitlines() if ln.startswith("optimal (exact)"))
        assert best.split()[2:4] == ["19m", "44s"], best
