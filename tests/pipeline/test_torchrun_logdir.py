"""torchrun's ``--log-dir`` writes each restart of its workers to its own folder
(torch.distributed.elastic.multiprocessing: ``<log_dir>/<run_id>_<rand>/attempt_<n>/
<local_rank>/stdout.log``). The restart inside one Slurm job was missed when its checkpoint
load was the first line of its file: 0 interruptions and TOR 0.856, where the same output in
one file gave 1 and 0.881 (fault probe H4)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import analysis

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"


def _job(logs: Path) -> None:
    """The demo's jobs 1002 and 1003 as one job 2002 whose workers torchrun restarted."""
    head, _r1, r2, r3 = (DEMO / "slurm" / "sacct.txt").read_text().splitlines()[:4]
    cols = head.split("|")
    a, b = r2.split("|"), r3.split("|")
    a[cols.index("JobID")] = a[cols.index("JobIDRaw")] = "2002"
    for k in ("State", "ExitCode", "End"):
        a[cols.index(k)] = b[cols.index(k)]
    a[cols.index("Elapsed")] = "20:03:47"
    logs.mkdir(parents=True)
    (logs / "sacct.txt").write_text(head + "\n" + "|".join(a) + "\n")


def test_restart_folders_are_one_stream(tmp_path: Path) -> None:
    outs = [(DEMO / "jobs" / f"slurm-{j}.out").read_text() for j in ("1002", "1003")]
    one = tmp_path / "one"
    _job(one)
    (one / "jobs").mkdir()
    (one / "jobs" / "slurm-2002.out").write_text("".join(outs))
    split = tmp_path / "split"
    _job(split)
    for n, text in enumerate(outs):
        d = split / "logs" / "llama-pretrain" / "none_abc" / f"attempt_{n}" / "0"
        d.mkdir(parents=True)
        (d / "stdout.log").write_text(text)
    want = analysis(one, tmp_path / "o1")["runs"][0]
    got = analysis(split, tmp_path / "o2")["runs"][0]
    assert len(want["interruptions"]) == len(got["interruptions"]) == 1
    assert got["tor"] == want["tor"] and got["components"] == want["components"]
