"""Written campaigns: byte determinism, the committed sample is fresh, every line is one of the
real formats, and the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli.simulate import simulate
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate as run_simulate

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs" / "demo"


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    r = presets.get("demo")
    run_simulate(r, 11, tmp_path / "a", Settings(log_interval=5))
    run_simulate(r, 11, tmp_path / "b", Settings(log_interval=5))
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a.keys() == b.keys() and a == b
    run_simulate(r, 12, tmp_path / "c", Settings(log_interval=5))
    assert _files(tmp_path / "c") != a


def test_log_interval_does_not_change_the_campaign(tmp_path: Path) -> None:
    r = presets.get("demo")
    t1 = run_simulate(r, 4, tmp_path / "a", Settings(log_interval=1))
    t7 = run_simulate(r, 4, tmp_path / "b", Settings(log_interval=7))
    assert t1["runs"][0]["components"] == t7["runs"][0]["components"]


def test_committed_sample_is_fresh(tmp_path: Path) -> None:
    """sample_logs/demo == `tormortem simulate --preset demo --seed 7 --out sample_logs/demo`."""
    res = CliRunner().invoke(simulate, ["--preset", "demo", "--seed", "7", "--out",
                                        str(tmp_path / "demo")])
    assert res.exit_code == 0, res.output
    fresh, committed = _files(tmp_path / "demo"), _files(SAMPLE)
    assert sorted(fresh) == sorted(committed), "regenerate sample_logs/demo (see README)"
    stale = [k for k in fresh if fresh[k] != committed[k]]
    assert not stale, f"stale files in sample_logs/demo: {stale[:5]}; regenerate it"


FLOAT = r"\d+\.\d+"
TS_MEG = r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\]"
JOB_LINE = [re.compile(p) for p in (
    rf"^ {TS_MEG} iteration +\d+/ +\d+ \| consumed samples: +\d+ \| elapsed time per iteration "
    rf"\(ms\): {FLOAT} \| learning rate: \d\.\d{{6}}E[-+]\d\d \| global batch size: +\d+ \| "
    r"lm loss: \d\.\d{6}E[-+]\d\d \| loss scale: 1\.0 \| grad norm: \d+\.\d{3} \| number of "
    r"skipped iterations: +0 \| number of nan iterations: +0 \|$",
    r"^saving checkpoint at iteration +\d+ to /ckpt/llama in torch_dist format$",
    r"^  successfully saved checkpoint from iteration +\d+ to /ckpt/llama$",
    r"^  successfully loaded checkpoint from /ckpt/llama \[ t 0, p 0 \] at iteration \d+$",
    r"^\(min, max\) time across ranks \(ms\):$",
    rf"^    (save|load)-checkpoint \.+: \({FLOAT}, {FLOAT}\)$",
    r"^WARNING: could not find the metadata file /ckpt/llama/latest_checkpointed_iteration.txt $",
    r"^    will not load any checkpoints and will start from random$",
    r"^\[(before the start of training step|after training is done)\] datetime: "
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d $",
    r"^\[rank\d+\]:\[E ProcessGroupNCCL\.cpp:(563|577|583)\] \[Rank \d+\] ",
    r"^node\d+:\d+:\d+ \[\d\] NCCL WARN NET/IB : Got completion from peer [\d.]+<\d+> with "
    r"error 12, opcode 0, len 0, vendor err 129 \(Recv\)$",
    r"^\[rank\d+\]: (Traceback \(most recent call last\):|  File \"|    |"
    r"(RuntimeError|ValueError|OSError): )",
    r"^Traceback \(most recent call last\):$|^  File \"|^    \S|^torch\.distributed\.elastic\."
    r"multiprocessing\.errors\.ChildFailedError: $",
    r"^(=+|-+|/workspace/Megatron-LM/pretrain_gpt\.py FAILED|Failures:|  <NO_OTHER_FAILURES>|"
    r"Root Cause \(first observed failure\):|\[0\]:)$",
    r"^  (time      : \d{4}-\d\d-\d\d_\d\d:\d\d:\d\d|host      : node\d+|rank      : \d+ "
    r"\(local_rank: \d\)|exitcode  : -?\d+ \(pid: \d+\)|error_file: <N/A>|traceback : .+)$",
    r"^srun: error: node\d+: task \d+: Exited with exit code 1$",
    r"^slurmstepd: error: \*\*\* JOB \d+ ON node\d+ CANCELLED AT \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"
    r"( DUE TO (TIME LIMIT|PREEMPTION|NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS))? \*\*\*$",
)]
CTLD = re.compile(
    r"^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\] (sched: Allocate JobId=\d+ NodeList=\S+ "
    r"#CPUs=\d+ Partition=gpu|_job_complete: JobId=\d+ (WEXITSTATUS \d+|done)|error: Nodes "
    r"node\d+ not responding|requeue JobId=\d+ due to failure of node node\d+|Killing JobId=\d+ "
    r"on failed node node\d+|Time limit exhausted for JobId=\d+|_slurm_rpc_kill_job: "
    r"REQUEST_KILL_JOB JobId=\d+ uid 1000)$")
KERN = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00 node\d+ (kernel: \[ *\d+\.\d{6}\] "
    r"(NVRM: Xid \(PCI:0000:[0-9a-f]{2}:00\): \d+, pid=|mlx5_core |blk_update_request: I/O "
    r"error|mce: \[Hardware Error\]|nvidia-uvm: Loaded)|systemd\[1\]: Started session-\d+\.scope"
    r" - Session \d+ of User root\.$)")
SACCT = re.compile(
    r"^\d+\|\d+\|llama-pretrain\|gpu\|(COMPLETED|FAILED|NODE_FAIL|TIMEOUT|CANCELLED by 1000|"
    r"PREEMPTED|REQUEUED|OUT_OF_MEMORY)\|\d+:\d+\|(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\|){3}"
    r"(\d+-)?\d\d:\d\d:\d\d\|\d+\|node\[[\d,-]+\]\|billing=\d+,cpu=\d+,gres/gpu=\d+,mem=\d+G,"
    r"node=\d+$")


def test_every_line_is_a_known_format() -> None:
    d = SAMPLE
    for p in sorted((d / "jobs").glob("*.out")):
        for n, line in enumerate(p.read_text().splitlines(), 1):
            assert any(rx.search(line) for rx in JOB_LINE), f"{p.name}:{n}: {line!r}"
    for line in (d / "slurm" / "slurmctld.log").read_text().splitlines():
        assert CTLD.match(line), line
    lines = (d / "slurm" / "sacct.txt").read_text().splitlines()
    assert lines[0].startswith("JobID|JobIDRaw|JobName|Partition|State|ExitCode|Submit|")
    for line in lines[1:]:
        assert SACCT.match(line), line
    for p in sorted((d / "nodes").glob("*/kern.log")):
        for line in p.read_text().splitlines():
            assert KERN.match(line), line


def test_sample_covers_the_demo_story() -> None:
    doc = json.loads((SAMPLE / "truth.json").read_text())
    run = doc["runs"][0]
    states = {i["state"] for i in run["interruptions"]}
    assert {"FAILED", "NODE_FAIL"} <= states and states & {"TIMEOUT", "CANCELLED"}
    assert any(i["requeued_same_job"] for i in run["interruptions"])
    assert any(not i["requeued_same_job"] for i in run["interruptions"])
    assert any(i["detect_s"] > 600 for i in run["interruptions"])  # NCCL watchdog hangs
    assert run["slow_split"]["fail_slow"] > 0
    assert 10 <= len(run["interruptions"]) <= 20
    assert doc["schema"] == "tormortem.analysis/1"


def test_cli_monte_carlo_json_and_errors(tmp_path: Path) -> None:
    r = CliRunner().invoke(simulate, ["--preset", "demo", "--no-logs", "--replicas", "50",
                                      "--json", "--seed", "2"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["replicas"] == 50 and 0 < out["tor_mean"] < 1
    r = CliRunner().invoke(simulate, ["--no-logs"])
    assert r.exit_code == 2 and "exactly one of --preset NAME or --rates FILE" in r.output
    r = CliRunner().invoke(simulate, ["--rates", str(tmp_path / "x.json"), "--no-logs"])
    assert r.exit_code == 2 and "does not exist" in r.output
    r = CliRunner().invoke(simulate, ["--preset", "demo"])
    assert r.exit_code == 2 and "--out DIR is required" in r.output
    assert "tormortem simulate --preset demo --seed 7 --out sample_logs/demo" in CliRunner(
    ).invoke(simulate, ["--help"]).output


@pytest.mark.parametrize("preset", ["demo"])
def test_rates_file_closes_the_loop(preset: str, tmp_path: Path) -> None:
    """params.json written by a run can be fed back with --rates and gives the same campaign."""
    res = CliRunner().invoke(simulate, ["--preset", preset, "--seed", "3", "--out",
                                        str(tmp_path / "a"), "--log-interval", "10"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(simulate, ["--rates", str(tmp_path / "a" / "params.json"),
                                        "--seed", "3", "--out", str(tmp_path / "b")])
    assert res.exit_code == 0, res.output
    ta = json.loads((tmp_path / "a" / "truth.json").read_text())["runs"][0]
    tb = json.loads((tmp_path / "b" / "truth.json").read_text())["runs"][0]
    assert ta["components"] == tb["components"]
