"""Failure lines users pasted in public threads nobody here had read, collected a fifth time
(2026-12-04: 134 failure lines from 114 threads, 24 healthy lines from the same pastes), beside
the row each must give now. Each alone first gave no row (the last one a wrong row); the
signatures (parsers/signatures/*.toml) and parsers that read them cite the printing code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parsers.util import assert_pasted, explain_alone, explain_rows

# (line as pasted, kind, code, category); the comment names the thread
JOB_OUTPUT = [
    # ray-project/ray#46548, #27710, #5363 (0.x: "client ID", "the monitor"), #22425, #58638
    ("The node with node id: 510c08bfbe1181a04dfcf3cc7c256a189ea984a70293efbe2257c20a and "
     "address: <address> and node name: <address> has been marked dead because the detector "
     "has missed too many heartbeats from it. This can happen when a \t(1) raylet crashes "
     "unexpectedly (OOM, etc.) ", "node_down", "ray_node_dead", "node_failure"),
    ("2022-08-11 17:52:21,412 WARNING worker.py:1799 -- The node with node id: c118acd15dee467500"
     "f3fb92b837db8e73d4e868e7e835585ace6f29 and address: 10.0.3.192 and node name: 10.0.3.192 "
     "has been marked dead because the detector has missed too many heartbeats from it. This can "
     "happen when a        (1) raylet crashes unexpectedly (OOM, preempted node, etc.) ",
     "node_down", "ray_node_dead", "node_failure"),
    ("2019-08-03 09:58:24,196\tERROR worker.py:1713 -- The node with client ID 6a16415bb1baa3dc2"
     "e753af42ab73ff900d87222 has been marked dead because the monitor has missed too many "
     "heartbeats from it.", "node_down", "ray_node_dead", "node_failure"),
    ("[2022-02-16 12:46:52,789 C 149 149] node_manager.cc:170: This node has beem marked as dead.",
     "node_down", "ray_node_dead", "node_failure"),
    ("Task failed because the node it was running on is dead or unavailable. Node IP: 127.0.0.1, "
     "node ID: e55b8ca03ebf3f7418f51533d8d55abeaab75fa9b29e2e6282b47646. This can happen if the "
     "node was preempted, had a hardware failure, or its raylet crashed unexpectedly.",
     "node_down", "ray_node_dead", "node_failure"),
    # ray-project/ray#30312 (pytest's "E   " gutter)
    ("E                       ray.exceptions.OutOfMemoryError: Task was killed due to the node "
     "running low on memory.", "oom_event", "ray_memory_monitor", "oom_host"),
    # occlum/occlum#1604, gpustack/gpustack#2125, pytorch/pytorch#108732, pytorch/gloo#223
    ("[E ProcessGroupGloo.cpp:144] Gloo connectFullMesh failed with [../third_party/gloo/gloo/"
     "transport/tcp/pair.cc:144] no error", "rendezvous_error", "gloo_connect", "network"),
    ("(RayWorkerWrapper pid=933, ip=50.147.43.24) [rank1]:[E528 08:52:46.164295950 ProcessGroup"
     "Gloo.cpp:145] Gloo connectFullMesh failed with [/pytorch/third_party/gloo/gloo/transport/"
     "tcp/pair.cc:144] no error", "rendezvous_error", "gloo_connect", "network"),
    ("RuntimeError: [/opt/conda/conda-bld/pytorch_1682343967769/work/third_party/gloo/gloo/"
     "transport/tcp/pair.cc:799] connect [172.31.71.170]:13195: Connection refused",
     "rendezvous_error", "gloo_connect", "network"),
    ("[<some path>/gloo/gloo/transport/tcp/pair.cc:761] connect [127.0.1.1]:60817: Connection "
     "refused", "rendezvous_error", "gloo_connect", "network"),
    # visinf/da-sac#12: torch.multiprocessing.spawn's header above the worker's traceback
    ("-- Process 1 terminated with the following error:", "elastic_worker_failed", "spawn",
     "user_code"),
    # Lightning-AI/litData#340: one elastic failure block joined into a CloudWatch row
    ("  | 2024-08-23T22:22:58.879Z | [2]: time : 2024-08-23_22:22:58 host : algo-2 rank : 2 "
     "(local_rank: 2) exitcode : -6 (pid: 189) error_file: <N/A> traceback : Signal 6 (SIGABRT) "
     "received by PID 189", "elastic_worker_failed", "-6", "user_code"),
    # jax-ml/jax#23599
    ("2024-10-09 15:47:38.568412: E external/xla/xla/tsl/distributed_runtime/coordination/"
     "coordination_service.cc:1170] /job:jax_worker/replica:0/task:0 has been set to ERROR in "
     "coordination service: UNAVAILABLE: Task /job:jax_worker/replica:0/task:0 heartbeat "
     "timeout. This indicates that the remote task has failed, got preempted, or crashed "
     "unexpectedly. Check the task logs for an earlier error to debug further. "
     "[type.googleapis.com/tensorflow.CoordinationServiceError='']", "elastic_worker_failed",
     "coordination_heartbeat", "user_code"),
    # Kay1794/Aware-of-the-history#2 (PID masked), horovod/horovod#1421, #410, #243
    ("mpirun noticed that process rank 1 with PID xxxxxx on node xxxxxxxx exited on signal 9 "
     "(Killed).", "process_signal", "Killed", "unknown"),
    ("mpirun detected that one or more processes exited with non-zero status, thus causing",
     "elastic_worker_failed", "mpirun", "user_code"),
    ("2018-07-30 06:41:52.525932: W tensorflow/core/framework/op_kernel.cc:1318] OP_REQUIRES "
     "failed at mpi_ops.cc:422 : Aborted: Horovod has been shut down. This was caused by an "
     "exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor "
     "after one of the ranks finished execution. If the shutdown was caused by an exception, you "
     "should see the exception in the log before the first shutdown message.",
     "elastic_worker_failed", "horovod_shutdown", "user_code"),
    ("AbortedError (see above for traceback): Horovod has been shut down. This has been caused "
     "by an exception on one of the rank or an attempt to allreduce, allgather or broadcast a "
     "tensor after one of the ranks has finished execution.", "elastic_worker_failed",
     "horovod_shutdown", "user_code"),
    # Lightning-AI/pytorch-lightning#20542: the signal Slurm sent at the time limit
    ("[rank: 0] Received SIGTERM: 15", "elastic_signal", "SIGTERM", "scheduler"),
    ("Bypassing SIGTERM: 15", "elastic_signal", "SIGTERM", "scheduler"),
    # NVIDIA/nccl#1410 (torch's "Last error:" continuation), #1664 (a plugin's "NET/IBP:")
    ("[rank7]: Cuda failure 1 'invalid argument'", "cuda_error", "invalid argument", "user_code"),
    ("NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 opcode=32698 len=32696 "
     "vendor err 129 (Send)", "nccl_ib_error", "12", "network"),
    # NVIDIA/nccl#1928 (aws-ofi-nccl under torch's "Last error:")
    ("[rank3]: NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 "
     "(UNDELIVERABLE). Completed length: 0", "nccl_ib_error", "UNDELIVERABLE", "network"),
    # NVIDIA/k8s-device-plugin#1431 (nvidia-smi and the container hook after a driver upgrade)
    ("Failed to initialize NVML: Driver/library version mismatch", "nvrm_error",
     "version_mismatch", "gpu_driver"),
    ("nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: "
     "unknown", "nvrm_error", "version_mismatch", "gpu_driver"),
]

NODE = [
    # saharmor/dalle-playground#104
    ("[ 7386.259769] NVRM: API mismatch: the client has the version 515.48.07, but",
     "nvrm_error", "version_mismatch", "gpu_driver"),
    # charmplusplus/charm#2532 (mlx5_cmd_check before 5.16), ofiwg/libfabric#4525
    ("[145291.904971] mlx5_core 0000:04:00.0: mlx5_cmd_check:795:(pid 9993): RTR2RTS_QP(0x504) "
     "op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x4bb88f)", "mlx5_error",
     "cmd_out_err", "network"),
    ("[359142.397077] mlx5_core 0000:02:00.0: mlx5_eq_int:556:(pid 0): CQ error on CQN 0x40a, "
     "syndrom 0x1", "mlx5_error", "error_cqe", "network"),
]

K8S = [
    # NVIDIA/gpu-operator#898 (kubectl describe, the container's Last State)
    ("      Reason:    StartError", "pod_terminated", "StartError", "unknown"),
]

#: healthy lines from the same pastes: no row at all
HEALTHY = [
    # NVIDIA/nccl#1039: TF's allocator falls back, and says so
    "2023/10/26 09:19:04 2023-10-26 09:19:04.135369: W tensorflow/core/common_runtime/bfc_"
    "allocator.cc:242] Allocator (GPU_0_bfc) ran out of memory trying to allocate 0B with "
    "freed_by_count=0. The caller indicates that this is not a failure, but may mean that there "
    "could be performance gains if more memory were available.",
    # kubeflow/trainer#2008, ray-project/ray#22425, sgl-project/sglang#3226
    'time="2024-02-21T09:32:29Z" level=info msg="Reconciling for job pytorch-simple"',
    "[2022-02-16 12:45:44,562 I 149 149] node_manager.cc:620: Sending Python GC request to 5 "
    "local workers to clean up Python cyclic references.",
    "[2025-01-30 18:11:27 TP1] Init torch distributed begin.",
    # NVIDIA/nccl-tests#252, NVIDIA/nccl#1059
    "kolyoz2:25146:25852 [0] NCCL INFO [Service thread] Connection closed by localRank 0",
    "MLVM2: MLVM2:10792:10792 [0] NCCL INFO Bootstrap : Using ibP257s464513:172.16.1.56<0>",
]


@pytest.mark.parametrize(("name", "table"), [
    ("slurm-4246.out", JOB_OUTPUT), ("node.log", NODE), ("describe.txt", K8S)])
def test_each_pasted_line_gives_its_row(tmp_path: Path, name: str,
                                        table: list[tuple[str, str, str, str]]) -> None:
    """In one file, then each line alone in a file named as nothing in particular."""
    assert_pasted(tmp_path, name, table)


def test_healthy_lines_give_no_row(tmp_path: Path) -> None:
    """The healthy lines, in one file and each alone."""
    assert explain_rows(tmp_path, "slurm-4247.out", HEALTHY) == {}
    for text, rows in zip(HEALTHY, explain_alone(tmp_path, HEALTHY), strict=True):
        assert rows == [], text
