"""Exit codes, consistently: 0 ok, 1 the command ran and failed, 2 usage error; every error is
one ``Error: ...`` line (plus click's usage hint for usage errors), never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import DEMO, invoke

NOPE = "/nonexistent/x"


@pytest.mark.parametrize("args", [
    ["ingest", NOPE, "--out", "/tmp/tm-nope"],
    ["explain", NOPE],
    ["analyze", NOPE, "--out", "/tmp/tm-nope"],
    ["fit", NOPE],
    ["report", NOPE],
    ["plan", "--rates", NOPE],
    ["sql", NOPE, "select 1"],
    ["sources", "--bogus"],
    ["nosuchcommand"],
    ["analyze", str(DEMO), "--out", "/tmp/tm-nope", "--window-before", "5 fortnights"],
    ["analyze", str(DEMO), "--out", "/tmp/tm-nope", "--ideal-step-time", "x"],
    ["analyze", str(DEMO), "--out", "/tmp/tm-nope", "--ideal-step-time", "0"],
    ["analyze", str(DEMO), "--out", "/tmp/tm-nope", "--tz", "Mars/Olympus"],
    ["ingest", str(DEMO), "--out", "/tmp/tm-nope", "--source", "nope"],
    ["sources", "--json", "--csv"],
    ["sources", "--format", "xml"],
    ["simulate", "--out", "/tmp/tm-nope"],
    ["simulate", "--preset", "demo", "--no-logs", "--replicas", "0"],
    # numpy's 'expected non-negative integer' with exit 1 before; a malformed Dask address was
    # an internal error
    ["simulate", "--preset", "demo", "--no-logs", "--seed", "-1"],
    ["ingest", str(DEMO), "--out", "/tmp/tm-nope", "--scheduler", "banana://::nope"],
    ["analyze", str(DEMO), "--out", "/tmp/tm-nope", "--scheduler", "notaurl"],
    # a path option that names nothing: 2 like --run-map's (``--rules`` and ``--rates`` were 1)
    ["analyze", str(DEMO), "--out", "/tmp/tm-nope", "--rules", NOPE],
    ["analyze", str(DEMO), "--out", "/tmp/tm-nope", "--run-map", NOPE],
    ["explain", str(DEMO), "--rules", NOPE],
    ["ingest", str(DEMO), "--out", "/tmp/tm-nope", "--rules", NOPE],
    ["simulate", "--rates", NOPE, "--no-logs"],
    ["report", str(DEMO), "--rates", NOPE],
    ["report", str(DEMO), "--model", NOPE],
    # a --job-output that is no file-name pattern (it was ignored without a word)
    ["analyze", str(DEMO), "--out", "/tmp/tm-nope", "--job-output", ""],
    ["analyze", str(DEMO), "--out", "/tmp/tm-nope", "--job-output", "%q%z"],
    ["analyze", str(DEMO), "--out", "/tmp/tm-nope", "--job-output", "logs/%j.out%"],
    ["analyze", str(DEMO), "--out", "/tmp/tm-nope", "--job-output", "logs/"],
])
def test_usage_errors_exit_2(args: list[str]) -> None:
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    assert r.stderr.rstrip().splitlines()[-1].startswith("Error: ")
    assert "Traceback" not in r.output


def test_an_output_folder_as_the_input_is_named(demo_out: Path) -> None:
    """It has files, so 'no files found under' misled: say what it is."""
    r = invoke("analyze", str(demo_out), "--out", "/tmp/tm-nope")
    assert r.exit_code == 2
    assert r.stderr.splitlines()[-1] == (f"Error: {demo_out}: a tormortem output folder, not logs; "
                                    "give the logs it was made from (its manifest.json lists "
                                    "them), or query it with tormortem sql / report")


def test_plan_usage_errors_exit_2(demo_out: Path) -> None:
    for extra in (["--what-if", "gpu_memory.rate"], ["--what-if", "nosuch.rate=x2"],
                  ["--tau", "soon"], ["--gpus", "100"], ["--sweep", "gpus=a,b"],
                  ["--work", "1d", "--iterations", "5"]):
        r = invoke("plan", "--rates", str(demo_out), *extra)
        assert r.exit_code == 2, (extra, r.output)
        assert r.stderr.rstrip().splitlines()[-1].startswith("Error: "), extra


def test_failures_exit_1(tmp_path: Path, demo_out: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    noise = tmp_path / "noise.log"
    noise.write_text("nothing to see\n")
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json")
    bad_rules = tmp_path / "r.csv"
    bad_rules.write_text("id,source,kind,code,pattern,category,mode,specificity,scales_with,"
                         "note\nmy-1,kernel,xid,79,,gpu_broken,fail-stop,90,gpu,\n")
    cases = [
        (["analyze", str(noise), "--out", str(tmp_path / "o1")], "no attempts found"),
        (["ingest", str(noise), "--out", str(tmp_path / "o2"), "--rules", str(bad_rules)],
         "unknown category 'gpu_broken'"),
        (["fit", str(empty)], "is not a complete tormortem output"),
        (["report", str(empty)], "is not a complete tormortem output"),
        (["plan", "--rates", str(bad_json)], "not valid JSON"),
        (["plan", "--rates", str(demo_out / "analysis.json")], "is an analysis"),
        (["plan", "--rates", str(empty)], "is not a complete tormortem output"),
        (["sql", str(empty), "select 1"], "no tormortem.duckdb in"),
        (["sql", str(demo_out), "select nonsense from nowhere"], "nowhere"),
    ]
    for args, message in cases:
        r = invoke(*args)
        assert r.exit_code == 1, (args, r.output)
        lines = r.stderr.rstrip().splitlines()
        assert lines[-1].startswith("Error: ") and message in lines[-1], (args, r.output)
        assert "Usage:" not in r.stderr and "Traceback" not in r.output


def test_ok_exit_0_and_data_on_stdout_only(demo_out: Path) -> None:
    r = invoke("fit", str(demo_out), "--json")
    assert r.exit_code == 0
    assert json.loads(r.stdout)["schema"] == "tormortem.rates/1"
    assert r.stderr.startswith("-> ")


def test_internal_errors_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import parsers.registry

    monkeypatch.setattr(parsers.registry, "ALL", None)  # a bug: iterating None
    r = invoke("sources")
    assert r.exit_code == 1
    assert r.stderr.startswith("Error: internal error (TypeError: ")
    assert "-vv" in r.stderr and "Traceback" not in r.output


def test_an_internal_error_of_several_lines_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """As DuckDB's nanobind TypeError ("extract_statements(): incompatible function
    arguments. The following argument types are supported: ...") spans five."""
    import parsers.registry

    class Bad:
        def __iter__(self) -> None:
            raise TypeError("f(): incompatible function arguments.\n    1. f(self, q: str)\n")

    monkeypatch.setattr(parsers.registry, "ALL", Bad())
    r = invoke("sources")
    assert r.exit_code == 1
    assert r.stderr == ("Error: internal error (TypeError: f(): incompatible function arguments. "
                        "1. f(self, q: str)); please report it with the command you ran (run it "
                        "again with -vv for the traceback)\n")
