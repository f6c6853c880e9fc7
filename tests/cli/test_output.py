"""One output convention: --format table|json|csv (and the --json/--jsonl/--csv aliases)
wherever a command prints data; progress and status on stderr only; -q and -v."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from pipeline.cli.progress import ingest_progress, read_position
from tests.cli.conftest import DEMO, invoke


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_sources_in_every_format() -> None:
    table = invoke("sources").stdout
    rows = json.loads(invoke("sources", "--format", "json").stdout)
    assert rows == json.loads(invoke("sources", "--json").stdout)
    assert [r["name"] for r in rows] == [line.split()[0] for line in table.splitlines()]
    assert [r["name"] for r in _csv(invoke("sources", "--csv").stdout)] == \
        [r["name"] for r in rows]


def test_explain_formats_agree() -> None:
    f = str(DEMO / "nodes" / "node008" / "kern.log")
    rows = json.loads(invoke("explain", f, "--format", "json").stdout)
    jl = [json.loads(x) for x in invoke("explain", f, "--jsonl").stdout.splitlines()]
    assert rows == jl and rows and {"file", "line_no", "kind", "category", "message"} <= set(
        rows[0])
    c = _csv(invoke("explain", f, "--format", "csv").stdout)
    assert [(r["line_no"], r["kind"]) for r in c] == [(str(r["line_no"]), r["kind"])
                                                      for r in rows]


def test_ingest_json_and_csv_are_the_line_accounting(tmp_path: Path) -> None:
    r = invoke("ingest", str(DEMO / "slurm"), "--out", str(tmp_path / "o"), "--json")
    assert r.exit_code == 0
    rows = json.loads(r.stdout)
    assert {x["file"].split("/")[-1] for x in rows} == {"slurmctld.log", "sacct.txt"}
    assert all(x["read"] == x["events"] + x["irrelevant"] + x["unparsed"] for x in rows)
    assert r.stderr.startswith("Wrote ")
    c = _csv(invoke("ingest", str(DEMO / "slurm"), "--out", str(tmp_path / "p"),
                    "--format", "csv").stdout)
    assert [int(x["read"]) for x in c] == [x["read"] for x in rows]


def test_analyze_stdout_is_data_stderr_is_one_line_per_phase(tmp_path: Path) -> None:
    r = invoke("analyze", str(DEMO), "--out", str(tmp_path / "o"), "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)  # nothing else on stdout
    assert doc["schema"] == "tormortem.analysis/1"
    phases = [line.split(":")[0] for line in r.stderr.splitlines()]
    assert phases[:3] == ["ingest", "analyze", "fit"]
    assert r.stderr.splitlines()[0].startswith("ingest: 36 files, 3.")  # human size (MB)
    c = invoke("analyze", str(DEMO), "--out", str(tmp_path / "o"), "--format", "csv", "-q")
    assert c.stderr == ""  # -q: no status
    rows = _csv(c.stdout)
    assert [x["component"] for x in rows] == list(doc["runs"][0]["components"])
    assert sum(float(x["seconds"]) for x in rows) == \
        __import__("pytest").approx(doc["runs"][0]["t_obs_s"])


def test_quiet_and_verbose_before_or_after_the_command(tmp_path: Path) -> None:
    a = invoke("-q", "ingest", str(DEMO / "slurm"), "--out", str(tmp_path / "a"), "--json")
    b = invoke("ingest", str(DEMO / "slurm"), "--out", str(tmp_path / "b"), "--json", "-q")
    assert a.stderr == b.stderr == "" and json.loads(a.stdout) and json.loads(b.stdout)
    v = invoke("-v", "analyze", str(DEMO / "slurm"), "--out", str(tmp_path / "c"))
    assert "analyze: done in " in v.stderr


def test_fit_plan_simulate_formats(demo_out: Path) -> None:
    rows = _csv(invoke("fit", str(demo_out), "--csv").stdout)
    assert {r["category"] for r in rows} >= {"gpu_hardware", "node_failure"}
    p = json.loads(invoke("plan", "--rates", str(demo_out), "--format", "json").stdout)
    assert p["schema"] == "tormortem.plan/1"
    s = _csv(invoke("plan", "--rates", str(demo_out), "--sweep", "gpus=128,256",
                    "--csv").stdout)
    assert [r["value"] for r in s] == ["128.0", "256.0"]
    m = invoke("simulate", "--preset", "demo", "--no-logs", "--replicas", "20", "--csv")
    assert m.exit_code == 0 and "tor_mean" in _csv(m.stdout)[0]


def test_simulate_prints_its_summary_and_status_apart(tmp_path: Path) -> None:
    r = invoke("simulate", "--preset", "demo", "--seed", "7", "--out", str(tmp_path / "s"))
    assert r.exit_code == 0
    assert r.stdout.startswith(f"{tmp_path / 's'}: 19 attempts, 18 interruptions")
    assert r.stderr.startswith(f"wrote {tmp_path / 's'} in ")


def test_progress_bar_goes_to_the_given_stream_not_stdout(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from parsers.reader import expand_inputs
    from pipeline.ingest.run import ingest

    files = expand_inputs([str(DEMO / "jobs")])
    bar = io.StringIO()
    with ingest_progress(files, file=bar) as advance:
        ingest(files, tmp_path / "o", progress=advance)
    assert capsys.readouterr().out == ""
    assert "ingest" in bar.getvalue()


def test_read_position_follows_an_open_file(tmp_path: Path) -> None:
    f = tmp_path / "big.log"
    f.write_bytes(b"x" * 100_000)
    assert read_position(f) is None
    with open(f, "rb") as fh:
        fh.read(4096)
        pos = read_position(f)
    assert pos is not None and 4096 <= pos <= 100_000
