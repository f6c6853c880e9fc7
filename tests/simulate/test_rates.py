"""The rates JSON: round trip, validation messages, and agreement with the JSON Schema file."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.model import rates
from pipeline.simulate import presets


@pytest.mark.parametrize("name", sorted(presets.PRESETS))
def test_round_trip(name: str, tmp_path: Path) -> None:
    r = presets.get(name)
    p = tmp_path / "rates.json"
    rates.dump(r, p)
    back = rates.load(p)
    assert back == r
    assert rates.dumps(back) == p.read_text()
    assert json.loads(p.read_text())["schema"] == "tormortem.rates/1"


def _doc() -> dict[str, Any]:
    return copy.deepcopy(presets.demo())


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d.update(schema="tormortem.rates/2"), "schema: expected 'tormortem.rates/1'"),
    (lambda d: d["scale"].update(gpus=100), "must be a multiple of gpus_per_node"),
    (lambda d: d["categories"][0].update(category="gpu"), "is not a failure category"),
    (lambda d: d["categories"][0].pop("hang"), "a fail-stop category needs 'hang'"),
    (lambda d: d["categories"][0].update(rate_per_node_hour=1.0),
     "needs 'rate_per_gpu_hour' (and not 'rate_per_node_hour')"),
    (lambda d: d["categories"][-1].update(rho=1.5), "rho: the throughput ratio must be < 1"),
    (lambda d: d["checkpoint"]["delta"].update(dist="weibull"), "is not one of"),
    (lambda d: d["checkpoint"]["delta"].pop("sigma"), "a lognormal distribution needs 'sigma'"),
    (lambda d: d.update(colour="blue"), "unknown field(s) ['colour']"),
    (lambda d: d["categories"].append(dict(d["categories"][0])), "appears twice"),
])
def test_validation_messages(mutate: Any, message: str) -> None:
    d = _doc()
    mutate(d)
    with pytest.raises(rates.RatesError, match=None) as e:
        rates.from_json(d)
    assert message in str(e.value)


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(rates.RatesError, match="not found"):
        rates.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(rates.RatesError, match="not valid JSON"):
        rates.load(bad)


def test_schema_file_matches_validator() -> None:
    s = rates.schema_document()
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert s["properties"]["schema"]["const"] == rates.SCHEMA_ID
    assert set(s["properties"]) == rates._TOP
    assert set(s["$defs"]["category"]["properties"]) == rates._CAT
    assert s["$defs"]["category"]["properties"]["category"]["enum"] == list(
        rates.FAILURE_CATEGORIES)
    assert s["$defs"]["dist"]["properties"]["dist"]["enum"] == list(rates.DISTRIBUTIONS)
