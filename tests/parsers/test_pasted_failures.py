"""Failure lines as users pasted them in public threads, which tormortem missed, beside the row
and category each must give. Collected from the threads cited per line (2026-12-02); the
printing code is cited in the signature or recogniser that reads each (parsers/signatures/
*.toml, parsers/nccl.py, parsers/slurm_step.py). Job output and kernel logs both."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import pytest

from parsers.joblog import JobLogParser
from parsers.reader import InputFile
from pipeline.ingest.explain import explain_files
from tests.parsers.util import assert_pasted, explain_rows, parse

# (line as pasted, kind, code, category)
JOB_OUTPUT = [
    # NVIDIA/nccl#902: NCCL's WARN with its host:pid:tid head trimmed
    ("NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129",
     "nccl_ib_error", "12", "network"),
    # NVIDIA/nccl#214: the head trimmed down to the source location
    ("transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 4, opcode 1, "
     "len 21938, vendor err 81", "nccl_ib_error", "4", "network"),
    # NVIDIA/nccl#1129
    ("misc/ibvwrap.cc:280 NCCL WARN Call to ibv_create_qp failed", "nccl_ib_error",
     "ibv_create_qp", "nccl_error"),
    # NVIDIA/nccl#2076: NCCL 2.2x's socketProgressOpt (src/misc/socket.cc)
    ("socketProgressOpt: Call to recv from 172.16.0.4<33759> failed : Connection reset by peer",
     "nccl_socket_error", "Connection reset by peer", "network"),
    # NVIDIA/nccl#1612: a device index without the host head
    ("[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer "
     "10.10.1.3<36138>", "nccl_socket_error", "Connection closed by remote peer", "network"),
    # pytorch/pytorch#55571
    ("RuntimeError: Socket Timeout", "rendezvous_error", "socket_timeout", "network"),
    # meta-pytorch/torchtune#2676
    ("[rank2]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81]"
     " Timed out waiting 1800000ms for recv operation to complete", "nccl_timeout", "gloo_recv",
     "nccl_timeout"),
    # sgl-project/sglang#28396: the TCPStore's server went away (a symptom)
    ("[rank1]:[W618 10:26:54.029068449 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl("
     "fd=105, addr=[localhost]:39468, remote=[::ffff:0.0.0.0]:12201): Connection reset by peer",
     "rendezvous_error", "store_connection_lost", "unknown"),
    # NVIDIA/semantic-segmentation#33: torch < 1.8's THC wording
    ("RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at "
     "/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265", "cuda_error",
     "uncorrectable ECC error encountered", "gpu_memory"),
    # karpathy/neuraltalk2#127
    ("THCudaCheck FAIL file=/tmp/luarocks_cutorch-scm-1-6961/cutorch/lib/THC/generic/"
     "THCStorage.c line=147 error=4 : unspecified launch failure", "cuda_error",
     "unspecified launch failure", "gpu_hardware"),
    # marbl/canu#1067: slurmstepd before 15.08 put the node last
    ("slurmstepd: *** JOB 830329 CANCELLED AT 2018-08-06T17:21:44 DUE TO TIME LIMIT on n447 ***",
     "slurm_job_cancelled", "TIME LIMIT", "scheduler"),
    # c3nl-neuraldynamics/c3nl_cluster#20: bash in a batch script
    ("/tmp/slurmd/job603995/slurm_script: line 9:  4727 Killed                  python train.py",
     "process_signal", "Killed", "unknown"),
    # andreas128/SRFlow#17, deepmodeling/deepmd-kit#23
    ("Bus error (core dumped)", "process_signal", "Bus error", "user_code"),
    ("Segmentation fault (core dumped)", "process_signal", "Segmentation fault", "user_code"),
    # open-mmlab/mmsegmentation#1356
    ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
     "shared memory (shm).", "process_signal", "Bus error", "user_code"),
    # TorchSSL/TorchSSL#4
    ("DataLoader worker (pid 12847) is killed by signal: Killed", "process_signal", "Killed",
     "unknown"),
    # MIC-DKFZ/nnUNet#1254
    ("OSError: [Errno 5] Input/output error", "python_exception", "OSError", "storage"),
    # openucx/ucx#6669, ucx#9167 (UCX under MPI / NCCL's UCX plugin)
    ("[g07r1n14:27251:0:27251] ib_mlx5_log.c:143  Transport retry count exceeded on mlx5_0:1/IB "
     "(synd 0x15 vend 0x81 hw_synd 0/0)", "nccl_ib_error", "Transport retry count exceeded",
     "network"),
    ("[r-hpc39:4184378:0:4184378] ib_mlx5_log.c:184  Local protection error on mlx5_0:1/IB "
     "(synd 0x4 vend 0x32 hw_synd 0/146)", "nccl_ib_error", "Local protection", "network"),
]

KERNEL = [
    # Joshua-Riek/ubuntu-rockchip#970
    ("[  279.665960] EXT4-fs (nvme0n1p1): Remounting filesystem read-only", "io_error",
     "ext4_read_only", "storage"),
    # oxidecomputer/crucible#1844
    ("[ 4700.636735] nvme0n1: I/O Cmd(0x2) @ LBA 131209936, 200 blocks, I/O Error (sct 0x3 / "
     "sc 0x71) ", "io_error", "nvme_status", "storage"),
    # dstackai/dstack#1936
    ("[  200.085136] EXT4-fs warning (device nvme1n3): ext4_end_bio:343: I/O error 10 writing to"
     " inode 14 starting block 3864576)", "io_error", "ext4_write", "storage"),
    # jade-hpc-gpu/jade-hpc-gpu.github.io#14 (dmesg -T)
    ("[Mon Oct 16 09:54:43 2017] LNet: 2431:0:(o2iblnd_cb.c:3174:kiblnd_check_conns()) Timed out "
     "tx for 172.31.126.87@o2ib: 403055 seconds", "io_error", "lustre_conn_lost", "storage"),
    # pocopico/rp-ext#129
    ("[    5.662202] mlx5_core 0000:01:00.0: mlx5_load_one failed with error code -22",
     "mlx5_error", "load_failed", "network"),
    # linux-nvme/nvme-cli#3268
    ("[15601.662156] infiniband rocep33s0f0: mlx5_poll_one:527:(pid 0): Responder error cqe on "
     "cqn 0x406:", "mlx5_error", "error_cqe", "network"),
]


@pytest.mark.parametrize(("name", "table"), [("slurm-4242.out", JOB_OUTPUT),
                                             ("dmesg.txt", KERNEL)])
def test_each_pasted_line_gives_its_row(tmp_path: Path, name: str,
                                        table: list[tuple[str, str, str, str]]) -> None:
    """In one file, then each line the only line of its file (no neighbour opens or closes
    a block)."""
    assert_pasted(tmp_path, name, table)


def test_a_bare_level_is_not_an_nccl_line(tmp_path: Path) -> None:
    """Without the host head the envelope needs a message: 'NCCL WARN' alone says nothing."""
    assert explain_rows(tmp_path, "slurm-1.out", ["NCCL WARN", "x NCCL INFO"]) == {}


def test_mpirun_timestamped_tags_are_peeled(tmp_path: Path) -> None:
    """``mpirun --timestamp-output --tag-output`` glues ctime(3) to the tag (NVIDIA/nccl#957):
    the line is NCCL's, its stamp the local time mpirun printed, its rank the tag's."""
    line = ("Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] "
            "transport.cc:154 NCCL WARN Cuda failure 'invalid argument'")
    f = tmp_path / "slurm-9.out"
    f.write_text(line + "\n", encoding="utf-8")
    rows = list(explain_files([InputFile(f, "slurm-9.out")], tz=UTC, year=2024))
    assert [(r["kind"], r["code"]) for r in rows] == [("cuda_error", "invalid argument")]
    ev, _, _ = parse(JobLogParser, line + "\n", "slurm-9.out")
    assert [(e["ts"].isoformat(), e["ts_flag"], e["host"], e["rank"]) for e in ev] == [
        ("2023-08-11T12:31:45+00:00", "assumed_tz", "tomte401", 0)]



def test_c10_stamps_of_months_before_october() -> None:
    """c10/util/Logging.cpp prints the date as (month + 1) * 100 + day: ``[E424 ...]`` is
    April 24 (pasted from pytorch/pytorch threads); read with four digits only, such lines
    inherited the previous line's time. The year is that of the file's latest full stamp."""
    text = (" [2024-04-24 01:16:00] iteration      100/  500000 | consumed samples:        51200"
            " | elapsed time per iteration (ms): 410.2 |\n"
            "[rank1]:[E424 01:17:25.031948957 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught"
            " collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, "
            "NumelOut=1, Timeout(ms)=600000) ran for 600090 milliseconds before timing out.\n")
    ev, _, _ = parse(JobLogParser, text, "slurm-12.out")
    row = next(e for e in ev if e["kind"] == "nccl_timeout")
    assert (row["ts"].isoformat(), row["ts_flag"]) == ("2024-04-24T01:17:25.031948+00:00",
                                                       "inferred_year")


def test_slurmctld_before_17_11(tmp_path: Path) -> None:
    """Older slurmctld spelled the id ``JobID=`` and put the state bits and node count before
    a job's outcome (ArjunaUsers/ArjunaUsers.github.io#7 and #137)."""
    got = explain_rows(tmp_path, "slurmctld.log", [
        "[2017-11-02T10:00:00.123] sched: Allocate JobID=2977957 NodeList=node01 #CPUs=32 "
        "Partition=gpu",
        "[2017-11-02T12:00:00.456] _job_complete: JobID=2977957 State=0x1 NodeCnt=1 "
        "WEXITSTATUS 1",
        "[2017-11-02T12:00:00.457] _job_complete: JobID=2977957 State=0x8005 NodeCnt=1 done"])
    assert got == {1: [("job_start", "node01", "none")],
                   2: [("job_end", "WEXITSTATUS 1", "user_code")],
                   3: [("job_end", "done", "none")]}


def test_inline_code_pastes() -> None:
    """Backticks (inline code, FoNDUE-HTR/Documentation#5) around a job-output line are the
    paste's, not the line's. (A quote's '> ' is not peeled in job output: Megatron's own
    messages begin with it; the text dialect peels it.)"""
    ev, _, acct = parse(JobLogParser, "`srun: error: gpu001: task 0: Out Of Memory`\n",
                        "slurm-5.out")
    assert [(e["kind"], e["code"]) for e in ev] == [("oom_event", "srun")]
    assert acct.events == 1
