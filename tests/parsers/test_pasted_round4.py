"""Lines users pasted in public threads nobody here had read, collected a fourth time
(2026-12-04: 172 failure lines from 136 threads, 120 progress, checkpoint and lifecycle lines
from 85 threads), beside the row each must give now. Each alone first gave no row; the
signatures (parsers/signatures/*.toml) and parsers that read them cite the printing code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parsers.util import assert_pasted, assert_steps

# (line as pasted, kind, code, category); the comment names the thread
JOB_OUTPUT = [
    # jax-ml/jax#17399, j-towns/vdvae-jax#2: XLA's NCCL status
    ("INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:275: NCCL operation ncclCommInitRank"
     "(&comm, nranks, id, rank) failed: unhandled cuda error", "nccl_error",
     "unhandled cuda error", "nccl_error"),
    ("RuntimeError: Internal: external/org_tensorflow/tensorflow/compiler/xla/service/gpu/nccl_"
     "all_reduce_thunk.cc:162: NCCL operation ncclAllReduce(send_buffer, recv_buffer, buffer."
     "element_count, datatype, reduce_op, comm, *cu_stream) failed: invalid usage: while "
     "running replica 0 and partition 0 of a replicated computation (other replicas may have "
     "failed as well).", "nccl_error", "invalid usage", "nccl_error"),
    # pytorch/pytorch#69197
    ("RuntimeError: connect() timed out. Original timeout was 60000 ms.", "rendezvous_error",
     "socket_timeout", "network"),
    # NVIDIA/nccl#653 (the host cut out), NVIDIA/Megatron-LM#792 (the WARN without its head)
    ("201: :41367:41367 [1] enqueue.cc:422 NCCL WARN Error : no algorithm/protocol available",
     "nccl_warn", "None", "nccl_error"),
    ("[Proxy Service 2] Failed to execute operation Connect from rank 2, retcode 3", "nccl_warn",
     "ncclInternalError", "nccl_error"),
    # aws/aws-ofi-nccl#715 (a log viewer's columns), llm-d/llm-d#191 (grep's file name)
    ("  | 2024-11-28T07:42:11.527Z | algo-1:17778:17848 [5] nccl_ofi_ofiutils_init_connection:"
     "274 NCCL WARN NET/OFI Couldn't open CQ. RC: -22, ERROR: Invalid argument", "nccl_warn",
     "None", "nccl_error"),
    ("ms-pd-llm-d-modelservice-prefill-2.log:[2025-09-17 15:16:23] ms-pd-llm-d-modelservice-"
     "prefill-2:311:405 [0] transport/net_ib.cc:199 NCCL WARN NET/IB : mlx5_32:1 Got async "
     "error event: port error", "nccl_ib_error", "port error", "network"),
    # ai2cm/ace#851: the watchdog's line cut short by the paste
    ("2026-02-18T10:48:25.681Z [rank7]:[E218 10:48:25.033625188 ProcessGroupNCCL.cpp:632] "
     "[Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1512677, OpType="
     "ALLREDUCE, NumelIn=306176, NumelOut=306176, Timeout(ms)=1200000) ran for 1200027 "
     "milliseconds before timing ", "nccl_timeout", "ALLREDUCE", "nccl_timeout"),
    # aws/aws-ofi-nccl#346
    ("libfabric:451707:1708520807::efa:cq:efa_rdm_txe_handle_error():737<warn> err: 5, message: "
     "Invalid address My EFA addr: fi_addr_efa://[fe80::13:c2ff:fe6f:f03d]:0:1072483550 My host "
     "id: i-0db7083f3fcbebb65", "nccl_ib_error", "Invalid address", "network"),
    # deepseek-ai/DeepEP#55, #289, sgl-project/sglang#6017
    ("/workspace/nvshmem_src/src/host/transport/transport.cpp:nvshmemi_transport_init:287: "
     "Unable to initialize any transports. returning error.", "nccl_error", "nvshmem_init",
     "nccl_error"),
    ("/sgl-workspace/nvshmem/src/host/init/init.cu:nvshmemi_check_state_and_init:1080: nvshmem "
     "initialization failed, exiting", "nccl_error", "nvshmem_init", "nccl_error"),
    ("/sgl-workspace/nvshmem/src/modules/transport/ibrc/ibrc.cpp:418: non-zero status: 110 "
     "ibv_modify_qp failed", "nccl_error", "nvshmem", "nccl_error"),
    # ray-project/ray#47759, hkust-nlp/simpleRL-reason#25
    ("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
     "elastic_worker_failed", "ActorDiedError", "user_code"),
    ("The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR "
     "Worker exit detail: Worker unexpectedly exits with a connection error code 2.",
     "elastic_worker_failed", "SYSTEM_ERROR", "user_code"),
    # Esri/arcgis-python-api#743, STVIR/pysot#140, deepspeedai/DeepSpeed#454
    ("RuntimeError: [enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: can't allocate "
     "memory: you tried to allocate 402653184 bytes. Error code 12 (Cannot allocate memory).",
     "oom_event", "host_alloc", "oom_host"),
    ("ERROR: Unexpected segmentation fault encountered in worker.", "process_signal",
     "segmentation fault", "user_code"),
    ("!!!! kernel execution error. (m: 384, n: 384, k: 64, error: 13)", "cuda_error",
     "cublas_status_13", "user_code"),
    # sehoffmann/dmlcloud#58, jupyter/docker-stacks#736
    ("pynvml.NVMLError_Unknown: Unknown Error", "gpu_lost", "nvml", "gpu_hardware"),
    ("command terminated with exit code 137", "process_signal", "Killed", "unknown"),
    # snakemake/snakemake-executor-plugin-slurm#371 (the job id written out as JOBID)
    ("slurmstepd: error: Detected 2 oom_kill events in StepId=JOBID.13. Some of the step tasks "
     "have been OOM Killed.", "oom_event", "cgroup", "oom_host"),
    # nebius/nebius-solutions-library#265, mknoxnv/ubuntu-slurm#4
    ("slurmstepd: error: Prolog hung on node worker-X", "node_drain",
     "Prolog or job env setup failure", "node_failure"),
    ("srun: error: Task launch for 23.0 failed on node hpc: Job prolog failed", "node_drain",
     "Prolog or job env setup failure", "node_failure"),
]

NODE = [
    # rwth-i6/returnn#1500 (dmesg -H's relative stamps), the AER report cut off above them
    ("[  +0.000921] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)",
     "pcie_aer", "uncorrected_fatal", "gpu_hardware"),
    ("[  +0.000041] pcieport 0000:00:03.0: AER: device recovery failed", "pcie_aer",
     "uncorrected_fatal", "node_failure"),
    # aws/aws-ofi-nccl#22, NVIDIA/gpu-operator#356, BiBiServ/bibigrid#705
    ("[ 1632.420956] infiniband efa_0: Failed to process command ALLOC_PD (opcode 14) "
     "comp_status 1 err -12", "ib_error", "efa_admin_cmd", "network"),
    ("Job for nvidia-fabricmanager.service failed because the control process exited with "
     "error code.", "nvlink_error", "fabricmanager", "nvlink"),
    ("Feb 02 09:52:07 bibigrid-worker slurmd[12912]: slurmd: fatal: can't stat gres.conf file "
     "/dev/nvidia0: No such file or directory", "gpu_lost", "gres_device_missing",
     "gpu_hardware"),
    # kubernetes/kubernetes#21485, operate-first/apps#1352
    ("Feb 17 13:58:47.304: INFO: Condition Ready of node e2e-gce-builder-2-3-minion-kb53 is "
     "false instead of true. Reason: NodeStatusUnknown, message: Kubelet stopped posting node "
     "status.", "k8s_event", "NodeStatusUnknown", "node_failure"),
    ("csi-rbdplugin-qtr59        openshift-storage        Evicted   oct-03-03-compute   Pod The "
     "node had condition: [DiskPressure]. ", "pod_evicted", "Evicted", "storage"),
]

# (line, kind, code, category, the step the row carries)
PROGRESS = [
    # Lightning-AI/litgpt#689, #1042, #1055
    ("iter 76 step 38: loss 10.8259, iter time: 197.87ms", "iteration", "None", "progress", 38),
    ("iter 1760 | step 220: loss 1.5947, iter time: 263.85 ms (optimizer.step)", "iteration",
     "None", "progress", 220),
    # huggingface/nanotron#233 (srun's label, then the logger's head)
    ("[0434:0]:11/01/2024 11:05:18 [INFO|DP=0|PP=0|TP=0|lrdn0434]: iteration: 12001 / 17500 | "
     "consumed_tokens: 25.2G | elapsed_time_per_iteration_ms: 28.2K | tokens_per_sec: 74.5K",
     "iteration", "None", "progress", 12001),
    # marin-community/levanter#486
    ("2024-02-24T13:38:44 - 3 - levanter.checkpoint - checkpoint.py:246 - INFO :: Saving "
     "checkpoint to gs://levanter-checkpoints/llama2/run_0212/step-9485 for step 9485",
     "ckpt_save_start", "None", "checkpoint", 9485),
    # volcengine/verl#2060
    ("step:0 - val-aux/openai/gsm8k/reward/mean@1:0.565 - val-core/openai/gsm8k/acc/mean@1:0.508",
     "iteration", "None", "progress", 0),
    # tensorflow/tensorflow#23743, Tonyfy/LCNN_TRAIN#11
    ("INFO:tensorflow:Saving checkpoints for 501 into /data0/users/haha/tensorflow-test/"
     "MonitoredTrainingSession_test/log/model.ckpt.", "ckpt_save_start", "None", "checkpoint",
     501),
    ("I0914 09:33:43.461599  6584 solver.cpp:228] Iteration 1851300, loss = 0.183091",
     "iteration", "None", "progress", 1851300),
    # facebookresearch/detectron2#2380, ml-explore/mlx-examples#414
    ("[12/11 20:48:49 d2.engine.train_loop]: Starting training from iteration 0", "train_start",
     "None", "progress", 0),
    ("Iter 1: Val loss 3.092, Val took 2.807s", "eval", "None", "progress", 1),
    # PaddlePaddle/PaddleOCR#16562, PaddleSeg#928, open-mmlab/OpenPCDet#1229
    ("[2025/09/24 12:13:19] ppocr INFO: epoch: [3/500], global_step: 500, lr: 0.005000, loss: "
     "0.609742, avg_reader_cost: 1.81036 s", "iteration", "None", "progress", 500),
    ("2021-03-30 06:55:57 [INFO]\t[TRAIN] epoch: 1, iter: 20/500, loss: 2.0859, lr: 0.009657, "
     "batch_cost: 0.5344, reader_cost: 0.07273", "iteration", "None", "progress", 20),
    ("2023-01-05 16:34:49,377   INFO  Train:    1/3 ( 33%) [  49/323 ( 15%)]  Loss: 36.77 "
     "(81.7)  LR: 1.351e-04  Acc_iter 50          Data time: 0.00(0.02)", "iteration", "None",
     "progress", 50),
    # in-epoch batch counters: Lightning in Colab (tqdm with ncols=0), HF's notebook bar,
    # the MetricLogger (Alpha-VLLM/LLaMA2-Accessory#48), Keras verbose=2 (keras-team/keras#13816)
    ("Epoch 0:  97% 1651/1702 [13:00<00:24,  2.11it/s, loss=0.158, v_num=0, train_loss=0.149]",
     "progress_bar", "Epoch 0", "progress", 1651),
    ("[ 22/290 02:50 < 38:04, 0.12 it/s, Epoch 0.36/5]", "progress_bar", "None", "progress", 22),
    ("[07:15:39.400163] Epoch: [2]  [1480/1504]  lr: 0.000005  closs: 0.8662 (0.8558)  time: "
     "4.3713  data: 0.0001  max mem: 51710", "progress_bar", "None", "progress", 1480),
    ("3/3 - 65s - loss: 0.2053 - val_loss: 0.1153", "progress_bar", "None", "progress", 3),
    # liaoyuhua/GPT-TS#4, hiyouga/LlamaFactory#2146, #10488
    ("Validation loss decreased (inf --> 38.347205).  Saving model ...", "ckpt_save_start",
     "None", "checkpoint", None),
    ("[2024-01-09 22:55:34,656] [INFO] [engine.py:2920:_load_zero_checkpoint] loading 8 zero "
     "partition checkpoints for rank 0", "ckpt_load", "loading", "checkpoint", None),
    ("***** train metrics *****", "train_end", "done", "progress", None),
]


@pytest.mark.parametrize(("name", "table"), [
    ("slurm-4244.out", JOB_OUTPUT), ("node.log", NODE),
    ("slurm-4245.out", [t[:4] for t in PROGRESS])])
def test_each_pasted_line_gives_its_row(tmp_path: Path, name: str,
                                        table: list[tuple[str, str, str, str]]) -> None:
    """In one file, then each line alone in a file named as nothing in particular."""
    assert_pasted(tmp_path, name, table)


def test_steps() -> None:
    """The step each progress row carries (a batch of the epoch as a progress_bar's)."""
    assert_steps(PROGRESS, "slurm-4245.out")
