"""TorchDistMatcher: real PyTorch distributed / elastic / traceback lines beside their rows.

Sources are cited per case (pytorch/pytorch source files and GitHub issue threads quoting
real job output)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from parsers.base import EVENT, NOISE, FileContext
from parsers.torch_dist import TorchDistMatcher
from tests.parsers.util import run_matcher

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "real_formats" / "nccl_torch"
KEYS = ("kind", "code", "rank", "value", "device", "host", "ts", "ts_flag", "line_no")


def run(lines: list[str]) -> tuple[list[int | None], list[dict[str, Any]]]:
    ctx = FileContext(path="x.out", tz=UTC, mtime=datetime(2024, 12, 31, tzinfo=UTC))
    return run_matcher(TorchDistMatcher(ctx), lines)


def pick(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: r[k] for k in KEYS if k in r} for r in rows]


@pytest.mark.parametrize(("line", "row"), [
    # pytorch/pytorch#118369 (torch <= 2.1: "[E ProcessGroupNCCL.cpp:458] ", no NumelIn)
    ("[E ProcessGroupNCCL.cpp:458] [Rank 7] Watchdog caught collective operation timeout: "
     "WorkNCCL(SeqNum=64088, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25625251 "
     "milliseconds before timing out.",
     {"kind": "nccl_timeout", "code": "ALLREDUCE", "rank": 7, "value": 1800.0}),
    # same thread: the line glued after a progress bar (no newline before the c10 prefix)
    ("Epoch 0:   6%|██    | 32040/500150 [6:28:43<94:39:17,  1.37it/s, loss=2.6][E "
     "ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective operation timeout: "
     "WorkNCCL(SeqNum=96120, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25624887 "
     "milliseconds before timing out.",
     {"kind": "nccl_timeout", "code": "ALLREDUCE", "rank": 0, "value": 1800.0}),
    # dlrover/"test_low_latency" issue text (torch 2.2/2.3: "[rank1]:[E ProcessGroupNCCL.cpp:574] ")
    ("[rank1]:[E ProcessGroupNCCL.cpp:574] [Rank 1] Watchdog caught collective operation "
     "timeout: WorkNCCL(SeqNum=7, OpType=_ALLGATHER_BASE, NumelIn=1024, NumelOut=16384, "
     "Timeout(ms)=600000) ran for 600029 milliseconds before timing out.",
     {"kind": "nccl_timeout", "code": "_ALLGATHER_BASE", "rank": 1, "value": 600.0}),
    # hiyouga/LlamaFactory#6269 (torch 2.4+ c10 prefix with month-day stamp)
    ("[rank4]:[E1206 18:44:12.755262105 ProcessGroupNCCL.cpp:607] [Rank 4] Watchdog caught "
     "collective operation timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, "
     "NumelIn=544997376, NumelOut=68124672, Timeout(ms)=600000) ran for 600099 milliseconds "
     "before timing out.",
     {"kind": "nccl_timeout", "code": "_REDUCE_SCATTER_BASE", "rank": 4, "value": 600.0}),
    # pytorch ProcessGroupNCCL.cpp heartbeat monitor ("ProcessGroupNCCL's watchdog got stuck for")
    ("[rank1]:[E1111 17:10:53.120000000 ProcessGroupNCCL.cpp:1375] [PG ID 0 PG GUID 0(default_pg) "
     "Rank 1] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in "
     "monitoring enqueued collectives.",
     {"kind": "nccl_timeout", "code": "watchdog_hang", "rank": 1, "value": 480.0}),
    # pytorch ProcessGroupNCCL.cpp "Timeout at NCCL work: %d, last enqueued ..." (no watchdog line)
    ("[rank7]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 7] Timeout at NCCL work: 1, last enqueued "
     "NCCL work: 1, last completed NCCL work: 3452013982.",
     {"kind": "nccl_timeout", "rank": 7}),
    # NCCLUtils.hpp C10D_NCCL_CHECK, torch 2.x (DistBackendError), in a Python exception line
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
     "ProcessGroupNCCL.cpp:1275, unhandled system error (run with NCCL_DEBUG=INFO for details), "
     "NCCL version 2.18.1",
     {"kind": "nccl_error", "code": "ncclSystemError"}),
    # NCCLUtils.cpp getNcclComm ("NCCL communicator was aborted on rank %d. ")
    ("RuntimeError: NCCL communicator was aborted on rank 2.  Original reason for failure was: "
     "[Rank 2] Watchdog caught collective operation timeout",
     {"kind": "nccl_error", "code": "aborted", "rank": 2}),
    # c10/cuda/CUDAException.h "CUDA error: " + cudaGetErrorString
    ("RuntimeError: CUDA error: uncorrectable ECC error encountered",
     {"kind": "cuda_error", "code": "uncorrectable ECC error encountered"}),
    # CUDACachingAllocator.cpp (<= 2.0 wording) -- rshaojimmy/MADDoG#11
    ("RuntimeError: CUDA out of memory. Tried to allocate 2.87 GiB (GPU 0; 14.76 GiB total "
     "capacity; 8.77 GiB already allocated; 19.75 MiB free; 13.71 GiB reserved in total by "
     "PyTorch)",
     {"kind": "cuda_oom", "code": "CUDA out of memory", "device": "0"}),
    # torchrun agent, torch <= 2.0 (hiyouga/LlamaFactory#163)
    ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 4 "
     "(pid: 364592) of binary: /usr/bin/python",
     {"kind": "elastic_worker_failed", "code": "-9", "value": 9.0, "device": "local_rank=4"}),
    # torchrun agent, torch 2.4+ (NVIDIA/Megatron-LM#1880): glog-like stamp -> ts_fallback
    ("E1223 05:18:02.971000 3304089 site-packages/torch/distributed/elastic/multiprocessing/"
     "api.py:882] failed (exitcode: -11) local_rank: 0 (pid: 3304209) of binary: /usr/bin/python3",
     {"kind": "elastic_worker_failed", "code": "-11", "value": 11.0, "device": "local_rank=0"}),
    # pytorch/pytorch#150916 (agent/server/api.py "Received %s death signal, shutting down workers")
    ("W0409 07:28:49.530000 1359 torch/distributed/elastic/agent/server/api.py:719] Received 15 "
     "death signal, shutting down workers",
     {"kind": "elastic_signal", "code": "15"}),
    # mir-group/nequip#210 (socket.cpp, torch 2.2)
    ("[E socket.cpp:500] [c10d] The server socket has failed to listen on any local network "
     "address.",
     {"kind": "rendezvous_error", "code": "server_listen_failed"}),
    # meta-pytorch/torchtune#392
    ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
     "network address. The server socket has failed to bind to [::]:29500 (errno: 98 - Address "
     "already in use).",
     {"kind": "rendezvous_error", "code": "DistNetworkError"}),
])
def test_single_lines(line: str, row: dict[str, Any]) -> None:
    statuses, rows = run([line])
    assert statuses == [EVENT]
    got = pick(rows)
    for r in got:
        r.pop("line_no", None)
    assert got == [row]


def test_glog_stamp_is_a_fallback_with_inferred_year() -> None:
    _, rows = run(["E1223 05:18:02.971000 3304089 site-packages/torch/distributed/elastic/"
                   "multiprocessing/api.py:882] failed (exitcode: 1) local_rank: 0 (pid: 3304209) "
                   "of binary: /usr/bin/python3"])
    assert rows[0]["ts_fallback"] == 1734931082971000  # 2024-12-23T05:18:02.971Z (mtime 2024)
    assert rows[0]["ts_fallback_flag"] == "inferred_year"
    assert "ts" not in rows[0]


def test_nccl_error_with_continuation_and_what_echo() -> None:
    # slides quoting a real job (torch 2.2 + NCCL 2.19.3): LOG line, continuation, what() echo
    lines = [
        "[E ProcessGroupNCCL.cpp:852] [Rank 16] NCCL watchdog thread terminated with exception: "
        "NCCL error: remote process exited or there was a network error, NCCL version 2.19.3",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process "
        "exiting prematurely.",
        "Last error:",
        "NET/IB : Got completion from peer 10.42.0.2<47534> with error 5, opcode 48, len 32764, "
        "vendor err 244",
        "terminate called after throwing an instance of 'std::runtime_error'",
        "  what():  [Rank 16] NCCL watchdog thread terminated with exception: NCCL error: remote "
        "process exited or there was a network error, NCCL version 2.19.3",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process "
        "exiting prematurely.",
        "Last error:",
        "NET/IB : Got completion from peer 10.42.0.2<47534> with error 5, opcode 48, len 32764, "
        "vendor err 244",
        "[2024-07-25 06:36:18,293] torch.distributed.elastic.multiprocessing.api: [WARNING] "
        "Sending process 179 closing signal SIGTERM",
    ]
    statuses, rows = run(lines)
    assert statuses == [EVENT] * 10
    # no dedup: the LOG line and its what() echo each get the error's row (emitted when the
    # block closes); the "ncclXxxError:" continuation lines get rows of the error's kind and
    # code, the bare "NET/IB : ..." lines after "Last error:" are classified like NCCL's WARN;
    # the SIGTERM line is elastic teardown
    err = {"kind": "nccl_error", "code": "ncclRemoteError"}
    ib = {"kind": "nccl_ib_error", "code": "5"}
    terminate = [r for r in rows if r.get("line_no") == 5]
    assert pick([r for r in rows if r.get("line_no") != 5]) == [
        {**err, "line_no": 2},
        {**ib, "line_no": 4},
        {**err, "rank": 16, "line_no": 1},
        {**err, "line_no": 7},
        {**ib, "line_no": 9},
        {**err, "rank": 16, "line_no": 6},
        {"kind": "elastic_teardown", "code": "SIGTERM"},
    ]
    head = next(r for r in rows if r.get("line_no") == 1)
    assert head["message"].endswith("| NET/IB : Got completion from peer 10.42.0.2<47534> "
                                    "with error 5, opcode 48, len 32764, vendor err 244")
    # "terminate called after throwing ..." gets a copy of the row of the what() line after it
    assert pick(terminate) == [{**err, "rank": 16, "line_no": 5}]
    assert terminate[0]["message"].startswith("what():  [Rank 16] NCCL watchdog thread")


def test_watchdog_echo_one_row_per_line() -> None:
    # BasicSR#737 / sgl-project/sglang#1693: watchdog line, "Exception ... detected", what() echo
    lines = [
        "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, "
        "NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.",
        "[rank1]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID "
        "0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at "
        "work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807.",
        "[rank1]:[E626 06:24:44.906521000 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID "
        "0(default_pg) Rank 1] Timeout at NCCL work: 808, last enqueued NCCL work: 811, last "
        "completed NCCL work: 807.",
        "[rank1]:[E626 06:24:44.906600000 ProcessGroupNCCL.cpp:630] [Rank 1] Some NCCL operations "
        "have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU "
        "operations might run on corrupted/incomplete data.",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
        "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 1] Process group watchdog thread "
        "terminated with exception: [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, "
        "Timeout(ms)=600000) ran for 600020 milliseconds before timing out.",
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3b6d41df86 in "
        "/usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)",
    ]
    statuses, rows = run(lines)
    assert statuses == [EVENT] * 6 + [NOISE]
    # no dedup by SeqNum: every watchdog/timeout line gets its row; the consequence lines
    # ("Exception ... detected by watchdog", "Some NCCL operations have failed") are
    # watchdog_abort; the what() echo gets the timeout's row and the "terminate called" line
    # before it a copy of that row
    assert [(r["kind"], r.get("code"), r.get("rank"), r.get("line_no")) for r in rows] == [
        ("nccl_timeout", "ALLREDUCE", 1, None),
        ("nccl_timeout", "watchdog_abort", 1, None),
        ("nccl_timeout", None, 1, None),
        ("nccl_timeout", "watchdog_abort", 1, None),
        ("nccl_timeout", "ALLREDUCE", 1, None),
        ("nccl_timeout", "ALLREDUCE", 1, 5),
    ]
    assert rows[-1]["message"] == rows[-2]["message"]


def test_non_default_group_rank_is_not_a_global_rank() -> None:
    statuses, rows = run(["[E ProcessGroupNCCL.cpp:1537] [PG 3 Rank 5] Timeout at NCCL work: 9, "
                          "last enqueued NCCL work: 9, last completed NCCL work: 8."])
    assert statuses == [EVENT]
    assert "rank" not in rows[0]


def test_traceback_chain_one_row_most_specific() -> None:
    # torch 2.3+ per-rank prefixes; a CUDA error wrapped by another exception in a chain
    lines = [
        "[rank2]: Traceback (most recent call last):",
        '[rank2]:   File "/workspace/train.py", line 88, in step',
        "[rank2]:     torch.cuda.synchronize()",
        "[rank2]:     ^^^^^^^^^^^^^^^^^^^^^^^^",
        "[rank2]: RuntimeError: CUDA error: an illegal memory access was encountered",
        "[rank2]: CUDA kernel errors might be asynchronously reported at some other API call, so "
        "the stacktrace below might be incorrect.",
        "[rank2]: For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
        "[rank2]: Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
        "",
        "[rank2]: The above exception was the direct cause of the following exception:",
        "",
        "[rank2]: Traceback (most recent call last):",
        '[rank2]:   File "/workspace/train.py", line 212, in <module>',
        "[rank2]:     main()",
        "[rank2]: ValueError: training step failed",
        "some unrelated line",
        " iteration      100/  500000 | consumed samples:        51200 |",
        "done",
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/workspace/train.py", line 212, in <module>',
        "[rank0]: KeyError: 'labels'",
    ]
    statuses, rows = run(lines)
    assert statuses == [EVENT] * 8 + [None, EVENT, None] + [EVENT] * 4 + [None] * 3 + [EVENT] * 3
    # one row per chain (the most specific exception, not the ValueError that wraps it), and
    # torch's CUDA error advisory lines after the error get the error's row too
    cuda = {"kind": "cuda_error", "code": "an illegal memory access was encountered", "rank": 2}
    assert pick(rows) == [
        {**cuda, "line_no": 6},
        {**cuda, "line_no": 7},
        {**cuda, "line_no": 8},
        {**cuda, "line_no": 5},
        {"kind": "python_exception", "code": "KeyError", "rank": 0, "line_no": 21},
    ]


def test_megatron_nan_final_line() -> None:
    # NVIDIA Megatron-LM param_and_grad_buffer.py assertion, as quoted in an issue
    lines = [
        "Traceback (most recent call last):",
        '  File "/home/Megatron-LM/megatron/core/distributed/param_and_grad_buffer.py", line 114, '
        "in start_grad_sync",
        "    assert not norm.isnan(), (",
        "AssertionError: Rank 13: found NaN in local grad norm in backward pass before "
        "data-parallel communication collective. Device: 5, node: node-15-11",
    ]
    statuses, rows = run(lines)
    assert statuses == [EVENT] * 4
    assert pick(rows) == [{"kind": "nan_loss", "code": "nan_grad_norm", "rank": 13,
                           "device": "5", "host": "node-15-11", "line_no": 4}]


def test_elastic_report_with_other_failures() -> None:
    # errors/__init__.py _MSG_FORMAT_TEMPLATE / _FAILURE_FORMAT_TEMPLATE
    lines = [
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        "pretrain_gpt.py FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "[1]:",
        "  time      : 2024-05-01_12:00:07",
        "  host      : node018.cluster.local",
        "  rank      : 9 (local_rank: 1)",
        "  exitcode  : -6 (pid: 51023)",
        "  error_file: <N/A>",
        "  traceback : Signal 6 (SIGABRT) received by PID 51023",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2024-05-01_12:00:05",
        "  host      : node018.cluster.local",
        "  rank      : 8 (local_rank: 0)",
        "  exitcode  : 1 (pid: 51022)",
        "  error_file: /tmp/torchelastic_x/attempt_0/0/error.json",
        "  traceback : Traceback (most recent call last):",
        '    File "/workspace/pretrain_gpt.py", line 12, in main',
        "      train()",
        "  RuntimeError: CUDA error: unspecified launch failure",
        "  ",
        "============================================================",
        "srun: error: node018: task 1: Exited with exit code 1",
    ]
    statuses, rows = run(lines)
    assert statuses == [EVENT] * 26 + [None]
    # the root cause's row also on the report's first line and its "xxx FAILED" title line;
    # each entry's row on its exitcode line and on its traceback line
    other = {"kind": "elastic_child_failed", "code": "-6", "rank": 9, "value": 6.0,
             "device": "local_rank=1", "host": "node018", "ts": 1714564807000000,
             "ts_flag": "assumed_tz"}
    root = {"kind": "elastic_child_failed", "code": "1", "rank": 8, "device": "local_rank=0",
            "host": "node018", "ts": 1714564805000000, "ts_flag": "assumed_tz"}
    assert pick(rows) == [
        {**root, "line_no": 1},
        {**root, "line_no": 3},
        {**other, "line_no": 10},
        {**root, "line_no": 19},
        {**other, "line_no": 12},
        {**root, "line_no": 21},
    ]
    for r in rows:
        if r["rank"] == 9:
            assert r["message"].startswith("ChildFailedError other failure [1] pretrain_gpt.py")
        else:
            assert r["message"].endswith("RuntimeError: CUDA error: unspecified launch failure")


def test_unclosed_report_flushed_by_finish() -> None:
    lines = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
             "============================================================",
             "train.py FAILED", "Root Cause (first observed failure):", "[0]:",
             "  rank      : 3 (local_rank: 3)", "  exitcode  : -9 (pid: 7)"]
    _, rows = run(lines)
    # the root cause's row on the first line, the title line and the entry's exitcode line
    # (there is no traceback line)
    root = {"kind": "elastic_child_failed", "code": "-9", "rank": 3, "value": 9.0,
            "device": "local_rank=3"}
    assert pick(rows) == [{**root, "line_no": 1}, {**root, "line_no": 3},
                          {**root, "line_no": 7}]


def test_noise_and_unparsed() -> None:
    lines = [
        "W0801 13:23:17.366000 32974 torch/distributed/elastic/multiprocessing/api.py:900] "
        "Sending process 33051 closing signal SIGTERM",
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 484376 closing "
        "signal SIGTERM",
        "[W socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 "
        "- Address already in use).",
        "[2024-07-10 14:49:44,231] torch.distributed.run: [WARNING] "
        "*****************************************",
        "[rank0]:[W1029 12:00:00.123456789 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process "
        "group has NOT been destroyed before we destruct ProcessGroupNCCL.",
        "",
        "hello world",
        "Error: something that is not an exception line",
        "\ufffd\ufffd garbage",
        "  File not a frame",
    ]
    statuses, rows = run(lines)
    # "Sending process N closing signal SIGTERM" is elastic teardown and the c10d bind failure
    # (errno 98, not an IPv6/localhost retry) a rendezvous error; the banner and the
    # destroy warning stay noise
    assert statuses == [EVENT] * 3 + [NOISE] * 2 + [None] * 5
    assert pick(rows) == [
        {"kind": "elastic_teardown", "code": "SIGTERM"},
        {"kind": "elastic_teardown", "code": "SIGTERM"},
        {"kind": "rendezvous_error", "code": "server_bind_failed", "value": 98.0},
    ]


def test_sample_accounting() -> None:
    text = (SAMPLES / "node017" / "torchrun-7781.out").read_text()
    lines = text.splitlines()
    statuses, rows = run(lines)
    assert statuses.count(EVENT) == 45  # lines 8-52 (the SIGTERM lines 20-22 are teardown)
    assert statuses.count(None) == 3  # the three NCCL INFO lines (NcclMatcher's)
    # the root cause's traceback says "To enable traceback": its row is on the exitcode line,
    # and again on the report's first line and title line
    root = {"kind": "elastic_child_failed", "code": "1", "rank": 3, "device": "local_rank=3",
            "host": "node017", "ts": 1714564991000000, "ts_flag": "assumed_tz"}
    assert pick(rows) == [
        {"kind": "elastic_teardown", "code": "SIGTERM"},
        {"kind": "elastic_teardown", "code": "SIGTERM"},
        {"kind": "elastic_teardown", "code": "SIGTERM"},
        {"kind": "cuda_oom", "code": "CUDA out of memory", "rank": 3, "device": "3",
         "line_no": 19},
        {"kind": "elastic_worker_failed", "code": "1", "device": "local_rank=3"},
        {**root, "line_no": 37},
        {**root, "line_no": 39},
        {**root, "line_no": 49},
    ]


def test_labelled_sample() -> None:
    text = (SAMPLES / "slurm-4242.out").read_text()
    lines = [re.sub(r"^\s*\d+: ?", "", t, count=1) for t in text.splitlines()]
    _, rows = run(lines)
    # every line gets its row (no dedup): the watchdog consequence lines are watchdog_abort,
    # the LOG line and its what() echo the error's row, the "ncclRemoteError:" continuations
    # rows of the error, the bare "NET/IB : ..." lines nccl_ib_error; the "terminate called"
    # line (27) gets a copy of the what() line's row
    got = [(r["kind"], r.get("code"), r.get("rank"), r.get("line_no")) for r in rows]
    assert [g for g in got if g[3] != 27] == [
        ("nccl_timeout", "watchdog_abort", None, None),
        ("nccl_timeout", "watchdog_abort", None, None),
        ("nccl_error", "ncclRemoteError", None, 24),
        ("nccl_ib_error", "12", None, 26),
        ("nccl_error", "ncclRemoteError", 8, 23),
        ("nccl_error", "ncclRemoteError", None, 29),
        ("nccl_ib_error", "12", None, 31),
        ("nccl_error", "ncclRemoteError", 8, 28),
        ("nccl_timeout", "ALLREDUCE", 3, None),
        ("nccl_timeout", "watchdog_abort", None, None),
        ("nccl_timeout", "watchdog_abort", None, None),
    ]
    assert [g for g in got if g[3] == 27] == [("nccl_error", "ncclRemoteError", 8, 27)]
