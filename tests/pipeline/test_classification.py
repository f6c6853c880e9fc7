"""The rule table on real-format lines: what category each signal line gets (via `explain`).

Line sources: NVIDIA driver (nverror.h Xid texts as printed in kern.log), the Linux kernel
(mlx5, OOM killer), PyTorch ProcessGroupNCCL.cpp and torch.cuda, Slurm sacct/slurmstepd
(captured from a real Slurm 22.05 run, see sample_logs/real_formats/slurm/NOTES.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from parsers.reader import expand_inputs
from parsers.timeutil import get_tz
from pipeline.ingest.explain import explain_files

ROOT = Path(__file__).resolve().parents[2]

KERNEL = "2024-05-01T10:02:11.123456+00:00 node017 kernel: [123456.789012] "
CASES = [
    ("kern.log", KERNEL + "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, "
     "GPU has fallen off the bus.", "xid", "gpu_hardware"),
    ("kern.log", KERNEL + "NVRM: Xid (PCI:0000:b7:00): 48, pid=2210, name=python, An "
     "uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at "
     "partition 0, subpartition 0.", "xid", "gpu_memory"),
    ("kern.log", KERNEL + "NVRM: Xid (PCI:0000:ca:00): 119, pid=2210, name=python, Timeout "
     "after 6s of waiting for RPC response from GPU0 GSP! Expected function 76 "
     "(GSP_RM_CONTROL) (0x20800a4c 0x4).", "xid", "gpu_driver"),
    ("kern.log", KERNEL + "NVRM: Xid (PCI:0000:3b:00): 13, pid=2210, name=python, Graphics "
     "SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address", "xid", "user_code"),
    ("kern.log", KERNEL + "mlx5_core 0000:17:00.0 ibp23s0: Link down", "ib_link_down",
     "network"),
    ("kern.log", KERNEL + "Out of memory: Killed process 4242 (python) total-vm:1048576kB, "
     "anon-rss:524288kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:2048kB "
     "oom_score_adj:0", "oom_kill", "oom_host"),
    ("slurm-77.out", "[rank5]:[E ProcessGroupNCCL.cpp:563] [Rank 5] Watchdog caught "
     "collective operation timeout: WorkNCCL(SeqNum=123456, OpType=ALLREDUCE, NumelIn=1, "
     "NumelOut=1, Timeout(ms)=600000) ran for 600046 milliseconds before timing out.",
     "nccl_timeout", "nccl_timeout"),
    ("slurm-77.out", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
     "GPU 0 has a total capacity of 79.11 GiB of which 1.12 GiB is free.", "cuda_oom",
     "oom_gpu"),
    ("slurm-77.out", "slurmstepd: error: *** JOB 77 ON node001 CANCELLED AT "
     "2024-05-01T10:12:40 DUE TO TIME LIMIT ***", "slurm_job_cancelled", "scheduler"),
]


@pytest.mark.parametrize(("name", "line", "kind", "category"), CASES)
def test_real_line_category(tmp_path: Path, name: str, line: str, kind: str,
                            category: str) -> None:
    f = tmp_path / name
    f.write_text(line + "\n")
    rows = explain_files(expand_inputs([str(f)]), tz=get_tz("UTC"))
    assert [(r["kind"], r["category"]) for r in rows] == [(kind, category)]


def test_real_slurm_states_classified() -> None:
    """sacct rows captured from a real Slurm 22.05 (run1): each end state's category."""
    rows = explain_files(expand_inputs(
        [str(ROOT / "sample_logs/real_formats/slurm/run1/sacct_allocations_duplicates.psv")]),
        tz=get_tz("UTC"))
    got = {(r["code"], r["category"]) for r in rows if r["kind"] == "job_state"}
    assert {("NODE_FAIL", "node_failure"), ("TIMEOUT", "scheduler"),
            ("OUT_OF_MEMORY", "oom_host"), ("CANCELLED", "scheduler"),
            ("FAILED", "user_code"), ("COMPLETED", "none")} <= got


def test_every_kind_in_the_samples_has_a_rule() -> None:
    rows = explain_files(expand_inputs([str(ROOT / "sample_logs")]), tz=get_tz("UTC"))
    assert rows
    assert [r for r in rows if r["category"] == "unclassified"] == []


def test_peermem_invalid_context_is_a_weak_hint(tmp_path: Path) -> None:
    """nvidia-peermem's invalid-context lines come by the hundred while registered GPU memory
    is torn down, on healthy nodes too (Mellanox/nv_peer_memory#53, #120, the line as pasted
    there): the GPU-driver category, but not a fail-stop cause that would outrank the NCCL
    timeout or exception that actually ended a job."""
    from pipeline.ingest.ruletable import load_rules

    f = tmp_path / "kern.log"
    f.write_text(KERNEL + "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected "
                 "invalid context, skipping further processing\n")
    rows = explain_files(expand_inputs([str(f)]), tz=get_tz("UTC"))
    assert [(r["kind"], r["code"], r["category"], r["rule"]) for r in rows] == [
        ("nvrm_error", "peermem", "gpu_driver", "nvrm-peermem")]
    rules = {r["id"]: r for r in load_rules().to_pylist()}
    assert rules["nvrm-peermem"]["mode"] == "none"
    assert rules["nvrm-peermem"]["specificity"] < rules["nccl-timeout"]["specificity"]
