"""``tormortem plan``: what-ifs, sweeps and the click command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli.plan import plan as plan_cmd
from pipeline.model import plan
from pipeline.model import predict as model
from pipeline.model.rates import dump, to_json
from pipeline.simulate import presets
from tests.model.helpers import fixed, rates

NET = {"category": "network", "mode": "fail-stop", "scales_with": "node",
       "rate_per_node_hour": 1e-3, "hang": fixed(60), "repair": fixed(600),
       "rate_ci95": [5e-4, 2e-3]}


def test_what_ifs_change_one_category() -> None:
    r = rates(gpus=1024, extra=[NET])
    w = [plan.parse_what_if(t, r) for t in ("network.rate=x0.5", "gpu_hardware.hang=2m",
                                             "network.repair=x0.5")]
    out = plan.apply_what_ifs(r, w, [])
    net = next(c for c in out.categories if c.category == "network")
    gpu = next(c for c in out.categories if c.category == "gpu_hardware")
    assert net.rate == pytest.approx(5e-4) and net.rate_ci95 == pytest.approx((2.5e-4, 1e-3))
    assert net.repair is not None and net.repair.mean_s == 300.0
    assert gpu.hang is not None and gpu.hang.mean_s == 120.0
    dropped = plan.apply_what_ifs(r, [], ["network"])
    assert [c.category for c in dropped.categories] == ["gpu_hardware"]
    assert model.predict(dropped).tor > model.predict(r).tor


@pytest.mark.parametrize(("text", "msg"), [
    ("nvlink.rate=x0.5", "it has: gpu_hardware, network"),
    ("network.speed=2", "unknown field"),
    ("network.hang=soon", "cannot read value"),
    ("network", "CATEGORY.FIELD=VALUE"),
    ("network.rho=0.5", "no fail-slow entry"),
    # a rate that is not a number: the prediction would be TOR 0.000 and 'nan/day'
    ("network.rate=nan", "cannot read value"),
    ("network.rate=inf", "cannot read value"),
    ("network.rate=1e400", "cannot read value"),
])
def test_what_if_errors_say_what_to_do(text: str, msg: str) -> None:
    with pytest.raises(plan.PlanError, match=msg):
        plan.parse_what_if(text, rates(gpus=1024, extra=[NET]))


def test_setup_and_sweep() -> None:
    r = rates(gpus=1024, tau=600)
    with pytest.raises(plan.PlanError, match="multiple of gpus_per_node"):
        plan.with_setup(r, gpus=1001)
    with pytest.raises(plan.PlanError, match="--drop nvlink"):
        plan.plan(r, drops=["nvlink"])
    assert plan.parse_sweep("tau=5m,1h") == ("tau", [300.0, 3600.0])
    with pytest.raises(plan.PlanError, match="gpus=1024"):
        plan.parse_sweep("speed=1,2")
    res = plan.plan(r, sweep="gpus=1024,8192", iterations=100_000)
    assert [row.value for row in res.sweep] == [1024, 8192]
    assert res.sweep[0].prediction.tor == pytest.approx(res.scenario.tor)
    assert res.sweep[1].prediction.tor < res.sweep[0].prediction.tor
    assert res.wall is not None and res.wall[0] > 100_000 * 6.0
    res = plan.plan(r, tau_s=1800.0, delta_s=60.0, work_s=86400.0)
    assert res.scenario.tau_s == 1800.0 and res.scenario.delta_s == 60.0
    assert res.changes == ["--tau 1800s", "--delta 60s"]


@pytest.fixture
def rates_file(tmp_path: Path) -> Path:
    p = tmp_path / "rates.json"
    dump(presets.get("llama3-54d"), p)
    return p


def test_cli_text(rates_file: Path) -> None:
    res = CliRunner().invoke(plan_cmd, ["--rates", str(rates_file), "--work", "30d",
                                        "--what-if", "nccl_timeout.hang=2m", "--drop", "storage",
                                        "--sweep", "tau=5m,10m,30m"])
    assert res.exit_code == 0, res.output
    for text in ("Predicted TOR", "expected wall", "optimal (exact)", "Young", "Daly",
                 "Key factors by category", "Key factors by stage", "Sweep over tau",
                 "gpu_hardware"):
        assert text in res.output
    assert "storage  " not in res.output


def test_cli_json(rates_file: Path) -> None:
    res = CliRunner().invoke(plan_cmd, ["--rates", str(rates_file), "--gpus", "4096",
                                        "--iterations", "100000", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["scenario"]["gpus"] == 4096 and doc["baseline"]["gpus"] == 16384
    assert doc["scenario"]["tor"] > doc["baseline"]["tor"]
    assert doc["work"]["iterations"] == pytest.approx(100000)


@pytest.mark.parametrize(("args", "msg"), [
    (["--what-if", "nvlink.rate=x2"], "it has:"),
    (["--tau", "soon"], "Invalid value for '--tau': cannot read duration 'soon'"),
    (["--gpus", "100"], "multiple of gpus_per_node"),
    (["--work", "1d", "--iterations", "5"], "either --work or --iterations"),
])
def test_cli_errors(rates_file: Path, args: list[str], msg: str) -> None:
    # the request cannot be acted on as written: a usage error (exit 2), one Error: line
    res = CliRunner().invoke(plan_cmd, ["--rates", str(rates_file), *args])
    assert res.exit_code == 2 and "Traceback" not in res.output
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("Error: ") and msg in last


def test_cli_help_and_missing_file(tmp_path: Path) -> None:
    res = CliRunner().invoke(plan_cmd, ["--help"])
    assert res.exit_code == 0 and "tormortem plan --rates" in res.output
    res = CliRunner().invoke(plan_cmd, ["--rates", str(tmp_path / "nope.json")])
    assert res.exit_code == 2 and "does not exist" in res.output


def test_rates_without_failures_say_so(tmp_path: Path) -> None:
    """Rates fitted from a run that saw no interruption (a 20-minute run) have no category:
    plan printed 'Predicted TOR 1.000' and 'TOR stays >= 0.5 up to 10,000,000 GPUs'."""
    doc = to_json(rates(gpus=128, delta=0.0))
    doc["categories"] = []
    f = tmp_path / "none.json"
    f.write_text(json.dumps(doc))
    res = CliRunner().invoke(plan_cmd, ["--rates", str(f)])
    assert res.exit_code == 0, res.output
    assert "unknown, not zero" in res.output and "Breaking point" not in res.output
    assert "No other interval" in res.output and "optimal (exact)" not in res.output
