"""NcclMatcher: real NCCL debug lines beside the rows they must become.

Format source: NVIDIA/nccl src/debug.cc (``ncclDebugLog``: ``%s:%d:%d [%d] %s:%d NCCL WARN``,
``[%d] NCCL INFO``, newest ``[%d] %s:%d (%s) NCCL WARN``, optional ``[%F %T] `` timestamp).
"""

from __future__ import annotations

from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

from parsers.base import EVENT, NOISE, FileContext
from parsers.nccl import NcclMatcher
from tests.parsers.util import run_matcher

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "real_formats" / "nccl_torch"
KEYS = ("kind", "code", "host", "device", "rank", "ts_fallback")


def run(lines: list[str]) -> tuple[list[int | None], list[dict[str, Any]]]:
    return run_matcher(NcclMatcher(FileContext(path="x.out", tz=UTC)), lines)


def pick(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: r[k] for k in KEYS if k in r} for r in rows]


@pytest.mark.parametrize(("line", "row"), [
    # NVIDIA/nccl#1814 (2.19+ wording, RoCE: localGid/remoteGids present)
    ("hostname-test:983:1261 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion "
     "from peer 10.1.2.3<55921> with status=12 opcode=1 len=0 vendor err 129 (Send) localGid "
     "::ffff:29.87.4.221 remoteGids::ffff:29.87.88.182",
     {"kind": "nccl_ib_error", "code": "12", "host": "hostname-test", "device": "3"}),
    # NVIDIA/nccl-tests#252 (2.18 wording, ib_plugin)
    ("kolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer "
     "10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send)",
     {"kind": "nccl_ib_error", "code": "4", "host": "kolyoz2", "device": "0"}),
    # NVIDIA/nccl#214 title (old: no "from peer")
    ("node-8x-v100-nvlink-1:2912:2968 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got "
     "completion with error 4, opcode 1, len 21938, vendor err 81",
     {"kind": "nccl_ib_error", "code": "4", "host": "node-8x-v100-nvlink-1", "device": "0"}),
    # newest wording: NVIDIA/nccl src/transport/net_ib (WARN "NET/IB: Got completion from peer %s
    # with status=%s(%d) opcode=%s(%d) vendor_err=%u %s%s%s%s hca %s")
    ("gpu-a7:3311:3502 [5] transport/net_ib/p2p.cc:412 (ncclIbCompletionEventProcess) NCCL WARN "
     "NET/IB: Got completion from peer 10.4.0.9<51110> with status=IBV_WC_RETRY_EXC_ERR(12) "
     "opcode=IBV_WC_RDMA_WRITE(1) vendor_err=129  hca mlx5_3",
     {"kind": "nccl_ib_error", "code": "12", "host": "gpu-a7", "device": "5"}),
    # NVIDIA/nccl net_ib.cc "NET/IB : Got async event : %s" (port error quoted in OPT-175B logbook)
    ("node012:8812:8990 [2] p2p_plugin.c:141 NCCL WARN NET/IB : Got async event : port error",
     {"kind": "nccl_ib_error", "code": "port error", "host": "node012", "device": "2"}),
    # misc/ibvwrap.cc "Call to ibv_create_cq failed with error %s"
    ("w1-c2:901:1022 [0] misc/ibvwrap.cc:203 NCCL WARN Call to ibv_create_cq failed with error "
     "Cannot allocate memory",
     {"kind": "nccl_ib_error", "code": "ibv_create_cq", "host": "w1-c2", "device": "0"}),
    # NVIDIA/nccl-tests#166 (socket.cc "socketProgress: Connection closed by remote peer %s")
    ("gpu004:2200689:2200706 [3] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed "
     "by remote peer gpu004.ds-a4-r02.abc.com<55693>",
     {"kind": "nccl_socket_error", "code": "Connection closed by remote peer", "host": "gpu004",
      "device": "3"}),
    # NVIDIA/nccl#1920 (2.23+ WARN timestamp "[%F %T] "; user redacted pid:tid)
    ("[2025-11-24 11:20:21] gpu-server320 [5] misc/socket.cc:46 NCCL WARN socketProgressOpt: "
     "Call to send to 10.44.137.149<52905> failed : Connection reset by peer",
     {"kind": "nccl_socket_error", "code": "Connection reset by peer", "host": "gpu-server320",
      "device": "5", "ts_fallback": 1763983221000000}),
    # NVIDIA/nccl-tests#166 "proxy.cc:1143 NCCL WARN Socket recv failed while polling"
    ("gpu004:2200689:2200706 [3] proxy.cc:1143 NCCL WARN Socket recv failed while polling for "
     "opId=0x7f4774cc9620",
     {"kind": "nccl_socket_error", "code": "Socket recv failed", "host": "gpu004",
      "device": "3"}),
    # NVIDIA/nccl#957 (CUDACHECK "Cuda failure '%s'")
    ("tomte401:1850301:1881341 [0] transport.cc:154 NCCL WARN Cuda failure 'invalid argument'",
     {"kind": "cuda_error", "code": "invalid argument", "host": "tomte401", "device": "0"}),
    # NVIDIA/nccl#957 "[Proxy Service 0] Failed to execute operation Connect from rank 0, retcode 3"
    ("tomte401:1850301:1881358 [0] proxy.cc:1519 NCCL WARN [Proxy Service 0] Failed to execute "
     "operation Connect from rank 0, retcode 3",
     {"kind": "nccl_warn", "code": "ncclInternalError", "host": "tomte401", "device": "0"}),
    # NVIDIA/nccl-tests#188: a WARN with no known cause
    ("user:16901:16967 [2] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3",
     {"kind": "nccl_warn", "host": "user", "device": "2"}),
    # NVIDIA/nccl init.cc INFO "comm %p rank %d nranks %d cudaDev %d busId %lx - Abort COMPLETE"
    ("lsp-ws1:7655:7655 [0] NCCL INFO comm 0x4d2d12d0 rank 5 nranks 16 cudaDev 5 busId 92000 - "
     "Abort COMPLETE",
     {"kind": "nccl_abort", "host": "lsp-ws1", "device": "0"}),
])
def test_signal_lines(line: str, row: dict[str, Any]) -> None:
    statuses, rows = run([line])
    assert statuses == [EVENT]
    assert pick(rows) == [row]
    assert rows[0]["message"] == line.split(" NCCL WARN ", 1)[-1].split(" NCCL INFO ", 1)[-1]


def test_healthy_info_is_noise() -> None:
    # NVIDIA/nccl#1814 and NVIDIA/nccl#1232 logs (healthy INFO), bare VERSION line
    lines = [
        "hostname-test:983:1261 [3] NCCL INFO Connected NVLS tree",
        "hostname-test:983:1261 [3] NCCL INFO threadThresholds 8/8/64 | 512/8/64 | 512 | 512",
        "hostname-test:984:1257 [4] NCCL INFO comm 0x557fe785f7a0 rank 36 nranks 64 cudaDev 4 "
        "nvmlDev 4 busId 9b000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE",
        "node0:13571:13571 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0",
        "node2:22555:22555 [0] NCCL INFO Connected all rings",
        "node017:48211:48211 [0] NCCL INFO NCCL version 2.18.1+cuda12.1",
        "NCCL version 2.18.1+cuda12.1",
        "gpu004:2200689:2200706 [3] NCCL INFO misc/socket.cc:749 -> 6",
        "kolyoz2:25146:25852 [0] NCCL INFO [Service thread] Connection closed by localRank 0",
    ]
    statuses, rows = run(lines)
    # all healthy but the INFO error-return trace "file.cc:NNN -> N": an nccl_trace row whose
    # code names the ncclResult_t (6 = ncclRemoteError)
    assert statuses == [NOISE] * 7 + [EVENT, NOISE]
    assert pick(rows) == [
        {"kind": "nccl_trace", "code": "ncclRemoteError", "host": "gpu004", "device": "3"}]
    assert rows[0]["message"] == "misc/socket.cc:749 -> 6"


def test_unrelated_and_malformed_lines_are_not_claimed() -> None:
    lines = [
        "",
        " iteration      100/  500000 | consumed samples:        51200 |",
        "NCCL WARN",  # no envelope
        "node017:1:2 [x] NCCL WARN garbled device",
        "Some text mentioning NCCL in passing",
        "\x00\x01 NCCL \xff",
    ]
    statuses, rows = run(lines)
    assert statuses == [None] * len(lines)
    assert rows == []


def test_sample_accounting() -> None:
    """The Slurm sample (srun --label prefixes removed as the job-log parser does)."""
    import re

    text = (SAMPLES / "slurm-4242.out").read_text()
    lines = [re.sub(r"^\s*\d+: ?", "", t, count=1) for t in text.splitlines()]
    statuses, rows = run(lines)
    # events: the WARN, the three "-> 6" traces, the two bare "NET/IB : ..." lines echoed in
    # "Last error:" (classified like the WARN) and the Abort COMPLETE
    assert statuses.count(EVENT) == 7
    assert statuses.count(NOISE) == 15  # lines 1-14, Service thread
    trace = {"kind": "nccl_trace", "code": "ncclRemoteError", "host": "node018", "device": "0"}
    assert pick(rows) == [
        {"kind": "nccl_ib_error", "code": "12", "host": "node018", "device": "0"},
        trace, trace, trace,
        {"kind": "nccl_ib_error", "code": "12"},
        {"kind": "nccl_ib_error", "code": "12"},
        {"kind": "nccl_abort", "host": "node017", "device": "3"},
    ]
