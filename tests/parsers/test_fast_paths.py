"""Vectorised fast paths (parsers/fastrows.py and its users) against the per-line path.

Each test parses the same real-format text twice: with the prefilter on (the fast path takes the
regular lines of a chunk, the rest go through ``parse_line``) and with ``TORMORTEM_PREFILTER=0``
(every line through ``parse_line``, as before the fast paths). Rows must be identical, in the
same order, with the same accounting; and the fast path must have taken most lines (so the test
fails if it silently stops running).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import polars as pl
import pytest

from parsers.base import Parser
from parsers.driver import parse_text


def both_paths(cls: type[Parser], text: str, path: str, monkeypatch: pytest.MonkeyPatch,
               ordered: bool = True, **kw: Any) -> list[dict[str, Any]]:
    """The rows of both paths, which must be equal (``ordered``: in the same order; else
    the same rows per line and kind, in order -- a fast path whose bulk rows go out as a
    compact batch of their own, after the chunk's other rows)."""
    monkeypatch.setenv("TORMORTEM_PREFILTER", "1")
    fast, _, fa = parse_text(cls, text, path, **kw)
    monkeypatch.setenv("TORMORTEM_PREFILTER", "0")
    slow, _, sa = parse_text(cls, text, path, **kw)
    monkeypatch.delenv("TORMORTEM_PREFILTER")
    assert (fa.read, fa.events, fa.irrelevant, fa.unparsed) == \
        (sa.read, sa.events, sa.irrelevant, sa.unparsed)
    assert fa.read == fa.events + fa.irrelevant + fa.unparsed
    assert fa.samples == sa.samples
    rows_fast, rows_slow = fast.to_pylist(), slow.to_pylist()
    if not ordered:
        def by_line(r: dict[str, Any]) -> tuple[int, str]:
            return r["line_no"], r["kind"]

        rows_fast, rows_slow = sorted(rows_fast, key=by_line), sorted(rows_slow, key=by_line)
    assert len(rows_fast) == len(rows_slow)
    for a, b in zip(rows_fast, rows_slow, strict=True):
        assert a == b
    return rows_fast


# slurmctld 22.05-23.11 at LogTimeFormat=iso8601_ms (the default). Wordings: sched: Allocate
# (src/slurmctld/job_scheduler.c, "sched: Allocate %pJ NodeList=%s #CPUs=%u Partition=%s"),
# backfill (src/plugins/sched/backfill/backfill.c _start_job, "Started %pJ in %s on %s" under
# the "sched/backfill: _start_job: " log prefix), _job_complete (src/slurmctld/job_mgr.c,
# "%s: %pJ WEXITSTATUS %d" / "WTERMSIG %d" / "done" / "OOM failure" / "cancelled by
# interactive user"), time limit (job_mgr.c job_time_limit, "Time limit exhausted for %pJ"),
# proc_req.c "_slurm_rpc_kill_job: REQUEST_KILL_JOB %pJ uid %u" and
# "_slurm_rpc_submit_batch_job: %pJ InitPrio=%u usec=%ld"; a real Slurm 22.05.8 printed the same
# (sample_logs/real_formats/slurm, tests/data/formats/slurm.jsonl).
CTLD = """\
[2024-05-01T00:00:04.292] _slurm_rpc_submit_batch_job: JobId=4000001 InitPrio=13830 usec=4150
[2024-05-01T00:00:48.263] sched: Allocate JobId=4000001 NodeList=node[1932-1947] #CPUs=1024 \
Partition=gpu
[2024-05-01T00:01:00.336] sched/backfill: _start_job: Started JobId=4000005 in debug on \
node[0868-0871]
[2024-05-01T00:01:00.435] sched: Allocate JobId=4000004 NodeList=node1534 #CPUs=64 \
Partition=lowprio
[2024-05-01T01:00:00.001] _job_complete: JobId=4000001 WEXITSTATUS 0
[2024-05-01T01:00:00.001] _job_complete: JobId=4000001 done
[2024-05-01T01:00:02.5] _job_complete: JobId=4000004 WTERMSIG 9
[2024-05-01T01:00:03.123456789] _job_complete: JobId=4000005 OOM failure
[2024-05-01T01:00:04] _job_complete: JobId=4000006 cancelled by interactive user
[2024-05-01T01:00:05.000] Time limit exhausted for JobId=4000007
[2024-05-01T01:00:06.000] _slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=4000008 uid 1000
[2024-05-01T01:00:07.000] error: Nodes node0042 not responding, setting DOWN
[2024-05-01T01:00:07.000] requeue JobId=4000009 due to failure of node node0042
[2024-05-01T01:00:08.000] Node node0042 now responding
[2024-05-01T01:00:09.000] update_node: node node0043 reason set to: bad gpu
[2024-05-01T01:00:09.500] update_node: node node0043 state set to DRAINING
[2024-05-01T01:00:10.000+02:00] sched: Allocate JobId=4000010 NodeList=n1 #CPUs=8 Partition=gpu
[2024-05-01T01:00:10,250] _job_complete: JobId=4000010 done
[2024-05-01T01:00:11.000] sched: Allocate JobId=4000011_3(4000012) NodeList=n2 #CPUs=8 \
Partition=gpu
[2024-05-01T01:00:12.000] _job_complete: JobId=4000011_3(4000012) WEXITSTATUS 2
[2024-05-01T01:00:13.000] _job_complete: requeue JobId=4000013 due to node failure
[2024-05-01T01:00:14.000] slurmctld: sched: Allocate JobId=4000014 NodeList=n3 #CPUs=8 \
Partition=gpu
[2024-02-30T01:00:15.000] sched: Allocate JobId=4000015 NodeList=n4 #CPUs=8 Partition=gpu
[2024-05-01T01:00:60.000] sched: Allocate JobId=4000016 NodeList=n5 #CPUs=8 Partition=gpu
[2024-05-01T01:00:16.000] _job_complete: JobId=4000017 WEXITSTATUS 12345678901234567890
[2024-05-01T01:00:17.000] _job_complete: JobId=4000018 WEXITSTATUS 1 [2024-05-01T01:00:17.001] x
[2024-05-01T01:00:18.000] sched: Allocate JobId=4000019 NodeList=nöde1 #CPUs=8 Partition=gpu
[2024-05-01T01:00:19.000] _slurm_rpc_submit_batch_job: JobId=4000020 InitPrio=1 usec=2
[2024-05-01T01:00:20.000] _job_complete: JobId=4000021 done   \n\
not a slurm line at all
Dec 31 23:59:58 slurmctl01 slurmctld[2140]: error: Nodes node0044 not responding, setting DOWN
Jan  1 00:00:02 slurmctl01 slurmctld[2140]: requeue JobId=4000022 due to failure of node node0044
"""


@pytest.mark.parametrize("shaped", [False, True])
@pytest.mark.parametrize("tz", ["UTC", "+02:00", "Europe/Berlin"])
def test_slurmctld_fast_path_equals_per_line(tz: str, shaped: bool,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """``shaped``: the chunk read per line shape (parsers/slurm_shapes.py), as a busy
    controller's 100,000-line chunks are; else its patterns on every line."""
    from parsers import slurm_shapes
    from parsers.slurm_fast import ctld_fast
    from parsers.slurm_logs import SlurmctldParser
    from parsers.timeutil import get_tz

    monkeypatch.setattr(slurm_shapes, "MIN_LINES", 0 if shaped else 10**9)
    text = CTLD * 12  # > SMALL_CHUNK lines: the chunk is planned
    rows = both_paths(SlurmctldParser, text, "slurmctld.log", monkeypatch, tz=get_tz(tz))
    kinds = {r["kind"] for r in rows}
    assert {"job_start", "job_end", "job_time_limit", "job_cancel", "node_drain"} <= kinds
    fast = ctld_fast(pl.Series(text.splitlines()), get_tz(tz), "slurmctld", "x")
    if tz == "Europe/Berlin":  # daylight saving: every stamp converted per line
        assert fast is None
    else:
        assert fast is not None
        status = fast[0]
        assert (status >= 0).sum() == 13 * 12  # the regular lines above, and no other
        lines = pl.Series(text.splitlines())
        got = slurm_shapes.ctld_shaped(lines, np.ones(len(lines), bool), 0)
        assert (got is not None) == shaped


def _bars(a: int, b: int, total: int = 100000) -> str:
    """tqdm's redraws (tqdm/std.py format_meter, status_printer writes ``\\r`` + the bar)."""
    return "".join(f"\r{int(100 * n / total):3d}%|{'█' * (10 * n // total):10s}| {n}/{total} "
                   f"[00:{n % 60:02d}<22:55:58,  1.21it/s]" for n in range(a, b))


# transformers trainer_callback.py ProgressCallback.on_log: tqdm.write(str(logs)) clears the bar
# (a line of spaces) and prints the dict; Trainer's logger lines use the examples' format
# "[%(levelname)s|%(filename)s:%(lineno)s] %(asctime)s >> %(message)s"; Python's logging
# "%(asctime)s - %(levelname)s - %(name)s - %(message)s"; slurmstepd's cancel banner
# (src/slurmd/slurmstepd/req.c); a torch elastic traceback (Python's traceback module).
def _tqdm_log(blocks: int) -> str:
    out = ["[INFO|trainer.py:2078] 2024-05-01 12:00:00,123 >> ***** Running training *****",
           "[INFO|trainer.py:2079] 2024-05-01 12:00:00,123 >>   Num examples = 6,400,000"]
    for b in range(blocks):
        n = 10 * b + 1
        out.append(_bars(n, n + 10) + "\r" + " " * 54
                   + "\r{'loss': 2.5376, 'grad_norm': 1.0381, 'learning_rate': 1.9e-05, "
                   "'epoch': 0.00}")
        if b % 7 == 3:
            out.append(f"2024-05-01 12:{b % 60:02d}:01,500 - INFO - __main__ - step {n}")
        if b % 11 == 5:
            out.append(f"[INFO|trainer.py:3478] 2024-05-01 13:{b % 60:02d}:00,001 >> Saving "
                       f"model checkpoint to out/checkpoint-{n}")
        if b % 13 == 6:
            out += ["Traceback (most recent call last):",
                    '  File "train.py", line 12, in <module>']
        if b % 13 == 7:
            out.append("RuntimeError: CUDA error: an illegal memory access was encountered")
        if b == 17:
            out.append("slurmstepd: error: *** JOB 555 ON node0001 CANCELLED AT "
                       "2024-05-01T14:00:00 DUE TO TIME LIMIT ***")
        if b % 9 == 8:
            out.append(_bars(n, n + 3, 1000000000000000000))  # 19 digits: per line
            out.append("Epoch 3: " + _bars(n, n + 2).lstrip("\r"))  # a description
            out.append("{'loss': 1e-05, 'epoch': 0.1}")
            out.append("  5%|▌         | 100/2000 [01:23<26:15,  1.21it/s]")
            out.append(_bars(n, n + 2) + "\rsomething else")
        if b % 10 == 4:  # PaddleNLP's dict with its step (test_pasted_round5_progress.py)
            out.append(_bars(n, n + 2) + "\r" + " " * 54 + "\r{'loss': 0.1856, "
                       f"'learning_rate': 4.5e-05, 'global_step': {n + 2}, 'epoch': 2.0}}")
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("blocks", [300, 700])
def test_tqdm_fast_path_equals_per_line(blocks: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from parsers.joblog import JobLogParser
    from parsers.tqdm_parts import tqdm_lines

    text = _tqdm_log(blocks)
    rows = both_paths(JobLogParser, text, "slurm-555.out", monkeypatch, ordered=False)
    assert {"progress_bar", "hf_log", "ckpt_save_start"} <= {r["kind"] for r in rows}
    # the step a fork's dict carries is read whichever path took the line
    steps = [r["iteration"] for r in rows if r["kind"] == "hf_log" and r["iteration"]]
    assert len(steps) == len(range(4, blocks, 10))
    # a bar's row, like an iteration row, keeps no copy of the text (file/line_no locate it)
    assert all(r["message"] is None for r in rows if r["kind"] == "progress_bar")
    assert {r["ts_flag"] for r in rows} >= {"inherited", "missing", "assumed_tz"}
    t = tqdm_lines(pl.Series(text.splitlines()))
    assert t is not None and len(t.lines) >= blocks  # the bar lines above went the fast way


# ``kubectl logs --timestamps`` puts the container runtime's RFC3339Nano UTC stamp before every
# line (trailing zeros of the fraction dropped: Go's time.RFC3339Nano); the lines are Megatron-LM
# core_r0.9 megatron/training/training.py training_log and checkpointing.py output, NCCL's
# debug envelope and a Python warning (benchmarks/logmix/joblog.py cites them).
_ITER = (" [2024-05-01 00:{m:02d}:{s:02d}] iteration {it:>8d}/ 1000000 | consumed samples: "
         "{cs:>12d} | elapsed time per iteration (ms): {ms:.1f} | learning rate: 1.499999E-04 | "
         "global batch size:  1024 | lm loss: 2.510000E+00 | loss scale: 1.0 | grad norm: 0.001 "
         "| number of skipped iterations:   0 | number of nan iterations:   0 |")


def _kubectl_log(n: int) -> str:
    out = []
    for it in range(1, n + 1):
        stamp = f"2024-05-01T01:{it // 60 % 60:02d}:{it % 60:02d}.{it * 7919 % 10**9:09d}"
        stamp = stamp.rstrip("0").rstrip(".") + "Z"
        if it == 17:
            stamp = "2024-02-30T01:00:00.5Z"  # no such day: per line
        if it == 23:
            stamp = "2024-05-01T03:00:00.123+02:00"  # an offset, not kubectl's Z: per line
        out.append(stamp + " " + _ITER.format(m=it // 60 % 60, s=it % 60, it=it,
                                              cs=1024 * it, ms=2000 + it % 10 / 10))
        if it % 500 == 3:
            out.append(stamp + " node001:199811:199811 [0] NCCL INFO comm 0x5581 rank 0 nranks "
                       "16 cudaDev 0 nvmlDev 0 busId 18000 commId 0x93c1 - Init COMPLETE")
            out.append(stamp + " saving checkpoint at iteration " + f"{it:>7d} to /ckpt/x")
        if it % 700 == 5:
            out.append(stamp + " /usr/local/lib/python3.10/dist-packages/torch/utils/"
                       "checkpoint.py:429: UserWarning: torch.utils.checkpoint: please pass in "
                       "use_reentrant=True or use_reentrant=False explicitly.")
            out.append(stamp + "   warnings.warn(")
        if it % 900 == 7:  # a block left open: the next iteration line is read per line
            out += [stamp + " Traceback (most recent call last):",
                    stamp + '   File "train.py", line 12, in <module>']
        if it % 1000 == 999:  # torchrun's --tee prefix inside the stamp: per line
            out.append(stamp + " [default0]:" + _ITER.format(m=0, s=0, it=it, cs=1, ms=1.0))
    return "\n".join(out) + "\n"


def test_kubectl_stamped_iterations_equal_per_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from parsers import joblog_preset
    from parsers.joblog import JobLogParser

    calls: list[int] = []
    orig = joblog_preset.kube_chunk

    def spy(*a: Any) -> None:
        calls.append(1)
        orig(*a)

    monkeypatch.setattr(joblog_preset, "kube_chunk", spy)
    text = _kubectl_log(4500)  # > 4096 distinct prefixes in the chunk: the kubectl path
    rows = both_paths(JobLogParser, text, "pod-0.log", monkeypatch, ordered=False)
    assert calls  # the fast path ran (with the prefilter on)
    it = [r for r in rows if r["kind"] == "iteration"]
    # 4500 + 4 behind [default0]:, less the 30 February one (split_prefix leaves the stamp in
    # the message, which Megatron's matcher does not read): no iteration row
    assert len(it) == 4503 and {r["ts_flag"] for r in it} == {"exact"}
    assert {r["rank"] for r in it} == {None, 0}
    assert len([r for r in rows if r["kind"] == "ckpt_save_start"]) == 9


def test_k8s_events_fast_path_equals_per_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real-format tables of sample_logs/real_formats/k8s (``kubectl get events -A``,
    ``-o wide``, ``kubectl events`` with ``(x7 over 18m)``, ``<unknown>`` and a multi-line
    FailedMount message; NOTES.md there cites printers.go and event_printer.go), one listing
    after another, with kubectl's notices, blank lines and a row that is not ASCII."""
    from pathlib import Path

    import parsers.k8s_events as ke

    taken: list[int] = []
    orig = ke.table_rows

    def spy(*a: Any) -> Any:
        mask, rows = orig(*a)
        taken.append(rows.height)
        return mask, rows

    monkeypatch.setattr(ke, "table_rows", spy)
    root = Path(__file__).resolve().parents[2] / "sample_logs" / "real_formats" / "k8s"
    parts = [(root / f).read_text(encoding="utf-8") for f in
             ("events-all-namespaces.txt", "events-wide.txt", "kubectl-events.txt")]
    big = parts[0].splitlines()
    rows = big[1:] * 25  # one long listing: > SMALL_CHUNK lines
    rows[7] = rows[7].replace("Started container", "Started contäiner")
    # what the fast path reads apart from the rest (k8s_events_fast: the ASCII test from the
    # chunk's bytes, the Scheduled / Preempted nodes on their rows only, OBJECT's kind in any
    # case): messages the assigned-node pattern must refuse or read, a tab or \r after a row
    # (printable once stripped), an upper-case kind
    sched = big[1]
    assert " Scheduled " in sched and sched.endswith(" to node017")
    head = sched[:sched.index("Successfully")]
    odd = [head + m for m in (
        "Successfully assigned to/x to node9", "Successfully assigned a/b to n1 to n2",
        "Successfully assigned ab to n3", "Successfully assigned a/b to  n4",
        "Successfully assigned /b to n5", "Successfully assigned a/ to n6",
        "Successfully assigned a/b/c to n7", "Successfully assigned a/b ton8")]
    oom = next(r for r in big if "  node/node017  " in r)
    odd += [sched + "\t", sched + "\r", sched.replace("to node017", "to nöde017"),
             *(oom.replace("node/node017", o) for o in ("NODE/node017", "Node/       ",
                                                          "nodes/node01")),
             oom.replace("OOMKilling             ", "OOMKilling" * 2 + "OOM")]  # a word cut
    # each before a plain row (the last of a run of fast rows is read per line: the next
    # line may continue it), at the start (so is a listing's small last chunk)
    rows = [*(r for o in odd for r in (o, big[1])), *rows]
    text = "\n".join([big[0], *rows, "", "No resources found in default namespace.",
                      *parts[1].splitlines(), *parts[2].splitlines(), *parts[0].splitlines()])
    out = both_paths(ke.K8sEventsParser, text + "\n", "node017/events.txt", monkeypatch,
                     mtime=datetime(2024, 5, 1, 12, 0, tzinfo=UTC))
    assert len(out) > 350 and sum(taken) > 300  # most rows were read the fast way
    assert {r["format"] for r in out} == {"k8s_events-table", "k8s_events-wide"}
    assert any("\n" in (r["message"] or "") for r in out)  # the continued FailedMount row


def test_slurmd_fast_path_equals_per_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The unedited slurmd logs of a real Slurm 22.05.8 (sample_logs/real_formats/slurm, its
    NOTES.md), with the bulk lines a busy node adds (src/slurmd/slurmd/req.c ``launch task
    StepId=%ps request from UID:%u GID:%u HOST:%s PORT:%hu``, ``Launching batch job %u for UID
    %u``; slurmstepd ``[%ps] done with job``) and variants the fast path must leave alone."""
    from pathlib import Path

    from parsers.slurm_fast import slurmd_fast
    from parsers.slurm_logs import SlurmdParser

    root = Path(__file__).resolve().parents[2] / "sample_logs" / "real_formats" / "slurm"
    real = []
    for f in sorted(root.glob("run*/slurmd-*.log")):
        real += f.read_text(encoding="utf-8").splitlines()
    bulk = []
    for j in range(60):
        t = f"[2024-05-01T03:{j:02d}:54.836]"
        bulk += [f"{t} Launching batch job {4000 + j} for UID 1000",
                 f"{t} launch task StepId={4000 + j}.0 request from UID:1000 GID:1000 "
                 f"HOST:10.1.0.{j % 200} PORT:{40000 + j}",
                 f"{t} [{4000 + j}.0] task/cgroup: _memcg_initialize: job: alloc=64000MB "
                 "mem.limit=64000MB memsw.limit=unlimited",
                 f"{t} [{4000 + j}.0] done with job", f"{t} [{4000 + j}.batch] done with job"]
    bulk += ["[2024-05-01T04:00:00.000] [4000_3.0] done with job",  # array task: per line
             "[2024-05-01T04:00:00.000] launch task StepId=4001.0 request from UID:1000 "
             "GID:1000 HOST:10.1.0.1 PORT:1 execve(): x: No such file",
             "[2024-05-01T04:00:00.000+02:00] [4002.0] done with job"]
    rows = both_paths(SlurmdParser, "\n".join(real + bulk) + "\n", "slurmd-n7.log", monkeypatch)
    assert {r["kind"] for r in rows} >= {"step_start", "step_end"}
    assert "n7" in {r["host"] for r in rows}  # the path's node (banners name their own)
    fast = slurmd_fast(pl.Series(real + bulk), UTC, "slurmd", "x", "n7", "path")
    assert fast is not None and (fast[0] >= 0).sum() >= 4 * 60


def test_k8s_ascii_lines_equal_the_regex() -> None:
    """``ascii_lines`` (printable ASCII from the chunk's bytes, the regex only for the lines
    that are not) against the regex on every right-stripped line, on a chunk as the reader
    builds it (string views over one buffer) with tabs, ``\\r``, NBSP, non-ASCII and short
    lines (kept inside their views) among printable ones."""
    from parsers.k8s_events_fast import ascii_lines
    from parsers.reader import lines_series

    rng = np.random.default_rng(7)
    pool = ["default  52m  Normal  Scheduled  pod/x  Successfully assigned a/b to n1",
            "x\t", "ok line   ", "tab\tinside", "nbsp\u00a0end", "\u00e4", "", "   ",
            "short", "a\r", "trailing tab\t\t", "fine " * 9, "\x7f", "~ok~"]
    text = "\n".join(pool[i] for i in rng.integers(0, len(pool), 3000)) + "\n"
    lines = lines_series(text.encode())
    stripped = lines.str.strip_chars_end()
    want = stripped.str.contains(r"^[ -~]*$").to_numpy()
    got = ascii_lines(lines, stripped)
    assert got.dtype == bool and (got == want).all()
    assert 0 < got.sum() < len(got)


def _tqdm_by_patterns(lines: pl.Series) -> tuple[list[int], list[int], list[dict]]:
    """What ``tqdm_lines`` gave before it read by shape: every line split into its ``\\r``
    parts and the patterns, with captures, run on each part."""
    from parsers import prefilter
    from parsers.tqdm_parts import BAR, LOSS
    from parsers.tqdm_parts import others_prefilter as _others_prefilter

    has = lines.str.contains("%|", literal=True) | lines.str.starts_with("{'loss': ")
    idx = np.flatnonzero(has.fill_null(False).to_numpy())
    sub = lines.gather(idx)
    other = prefilter.masks(sub, {"m": _others_prefilter()})["m"]
    idx, sub = idx[~other], sub.filter(pl.Series(~other))
    parts = (pl.DataFrame({"i": idx, "l": sub}).with_columns(pl.col("l").str.split("\r"))
             .explode("l").with_columns(pl.col("l").str.contains(r"^ *$").alias("blank"),
                                        pl.col("l").str.extract_groups(BAR).alias("bar"),
                                        pl.col("l").str.extract(LOSS, 1).alias("loss"))
             .unnest("bar").rename({"1": "n", "2": "total"}))
    ok = pl.col("blank") | pl.col("n").is_not_null() | pl.col("loss").is_not_null()
    taken = (parts.group_by("i", maintain_order=True)
             .agg(ok.all().alias("ok"), (~pl.col("blank")).any().alias("any"))
             .filter(pl.col("ok") & pl.col("any")).get_column("i"))
    rows = (parts.filter(pl.col("i").is_in(taken.implode()) & ~pl.col("blank"))
            .select("i", pl.when(pl.col("n").is_null()).then(pl.col("l")).alias("message"),
                    pl.when(pl.col("n").is_not_null()).then(pl.lit("progress_bar"))
                    .otherwise(pl.lit("hf_log")).alias("kind"),
                    pl.col("n").cast(pl.Int64).alias("iteration"),
                    pl.coalesce(pl.col("total"), pl.col("loss")).cast(pl.Float64)
                    .alias("value"),
                    pl.when(pl.col("n").is_not_null()).then(pl.lit("tqdm"))
                    .otherwise(pl.lit("hf_trainer")).alias("format"),
                    pl.lit(None, pl.String).alias("code")))  # no description here
    return taken.to_list(), rows.get_column("i").to_list(), rows.drop("i").to_dicts()


@pytest.mark.parametrize("repeat", [1, 300])
def test_tqdm_lines_read_by_shape_equal_the_patterns(repeat: int) -> None:
    from parsers import dedupe
    from parsers.tqdm_parts import BAR, LOSS, tqdm_lines

    assert all(dedupe.digit_blind(p) for p in (BAR, LOSS, r"^ *$"))
    # tqdm/std.py format_meter bars (unicode and ascii="123456789#" fills) redrawn with \r,
    # HF Trainer's str(logs) dicts after tqdm.write's blank clear; and near misses: 16 digits,
    # a part that is neither, an exponent loss, a line of blanks only, another recogniser's
    # anchor
    lines = ["\r  5%|▌         | 100/2000 [01:23<26:15,  1.21it/s]\r  5%|▌   | 101/2000 [01:24",
             "\r   \r{'loss': -0.25, 'epoch': 1.0}", " 45%|####5     | 45/100 [00:01<00:01]",
             "\r100%|1234567890| 7/7 [00:00<00:00]\r", "  3%|3/4 café | 12/400 [x]\r\r",
             " 12%|██| 1234567890123456/2 [0", "{'loss': 1e-05, 'epoch': 0.1}", "{'loss': 12}",
             "\r50%| | 1/2 [é\rnot a bar", "\r   \r   ", "7%|| 0/0 [", "plain text",
             "\r 1%|| 1/9 [00:00] NCCL WARN Call to ibv_reg_mr failed"] * repeat
    series = pl.Series(lines)
    got = tqdm_lines(series)
    taken, row_line, rows = _tqdm_by_patterns(series)
    assert got is not None and len(taken) == 6 * repeat
    assert got.lines.tolist() == taken and got.row_line.tolist() == row_line
    assert got.frame.to_dicts() == rows


def test_iterations_with_no_stamp_anywhere_equal_per_line(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """A Megatron log without any stamp (older Megatron's ``training_log`` printed none, and
    a log cut before ``print_datetime``'s line has none either): the fast rows have nothing to
    inherit -- this crashed with an IndexError (an empty timeline indexed) -- and get no time,
    flagged missing, as on the per-line path."""
    from parsers.joblog import JobLogParser

    # Megatron-LM v2.0 megatron/training.py training_log (no stamp) and checkpointing.py's
    # save lines, as tests/data/formats/progress.jsonl and checkpoint.jsonl hold them
    line = (" iteration {it:8d}/  100000 | consumed samples: {cs:12d} | elapsed time per "
            "iteration (ms): 10131.9 | learning rate: 3.000E-04 | global batch size:  2048 | "
            "lm loss: 8.264104E+00 | loss scale: 1.0 |")
    out = []
    for it in range(1, 301):
        out.append(line.format(it=it, cs=it * 2048))
        if it % 100 == 0:
            out += [f"saving checkpoint at iteration {it:7d} to /ckpt",
                    f"  successfully saved checkpoint at iteration {it:7d} to /ckpt"]
    rows = both_paths(JobLogParser, "\n".join(out) + "\n", "slurm-9.out", monkeypatch,
                      ordered=False)
    it_rows = [r for r in rows if r["kind"] == "iteration"]
    assert len(it_rows) == 300
    assert {(r["ts"], r["ts_flag"]) for r in rows} == {(None, "missing")}
