"""Lines users pasted in public threads nobody here had read, collected a sixth time
(2026-12-04: 117 failure lines, 54 progress and checkpoint lines and 51 healthy lines from
126 threads). Below, those that give their row now, beside it; a comment marks the lines that
gave no row (or no step) before this round; the rest already did and stay so. Not here: the
lines still without their row. The signatures
(parsers/signatures/*.toml) and the parsers that read them cite the printing code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parsers.util import assert_pasted, assert_steps, explain_alone, explain_rows

# (line as pasted, kind, code, category); the comment names the thread
JOB_OUTPUT = [
    # facebookincubator/submitit#1776 (no row before this round)
    ('Job not requeued because: timed-out and not checkpointable',
     'job_time_limit', 'submitit', 'scheduler'),
    # nathanweeks/exonerate#31 (no row before this round)
    ('_slurmstepd: error: Detected 12 oom-kill event(s) in StepId=16198179.batch. Some of yo'
     'ur processes may have been killed by the cgroup out-of-memory handler.',
     'oom_event', 'cgroup', 'oom_host'),
    # mjq11302010044/RRPN_pytorch#42 (no row before this round)
    ('terminate called without an active exception',
     'python_fatal', 'std::terminate', 'user_code'),
    # PaddlePaddle/Paddle#346 (no row before this round)
    ('F1104 11:19:11.596427 87426 hl_cuda_device.cc:661] Check failed: cudaSuccess == cudaSt'
     'at (0 vs. 77) Cuda Error: an illegal memory access was encountered',
     'cuda_error', 'an illegal memory access was encountered', 'user_code'),
    # ShannonAI/Self_Explaining_Structures_Improve_NLP_Models#6 (no row before this round)
    ('Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.24 GiB already allocate'
     'd; 2.88 MiB free; 1.25 GiB reserved in total by PyTorch)',
     'cuda_oom', 'CUDA out of memory', 'oom_gpu'),
    # AlexeyAB/darknet#86 (no row before this round)
    ('    CUDA Error: no CUDA-capable device is detected',
     'cuda_error', 'no CUDA-capable device is detected', 'gpu_driver'),
    # NVIDIA/k8s-device-plugin#119 (no row before this round)
    ('E0604 15:51:53.763503   15104 kuberuntime_manager.go:749] container start failed: Crea'
     'teContainerConfigError: endpoint not found in cache for a registe',
     'pod_waiting', 'CreateContainerConfigError', 'user_code'),
    # nebius/soperator#854 (no row before this round)
    ('`salloc: error: Node failure on worker-1`',
     'srun_node_fail', 'None', 'node_failure'),
    # ai4d-iasc/trixie#58 (no row before this round)
    ('srun: error: Task launch for 36.0 failed on node cn131: Job credential expired',
     'srun_node_fail', 'Job credential expired', 'node_failure'),
    # NVIDIA/nccl#795
    ('a100-st-p4d24xlarge-22:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to re'
     'cv from 10.200.84.247<58355> failed : Broken pipe',
     'nccl_socket_error', 'Broken pipe', 'network'),
    # NVIDIA/nccl#795
    ('a100-st-p4d24xlarge-22:183006:183220 [1] proxy.cc:1119 NCCL WARN [Proxy Service 9] Fai'
     'led to execute operation Connect from rank 9, retcode 6',
     'nccl_warn', 'ncclRemoteError', 'nccl_error'),
    # NVIDIA/nccl#795
    ('a100-st-p4d24xlarge-22:183006:183181 [1] misc/socket.cc:538 NCCL WARN Net : Connection'
     ' closed by remote peer a100-st-p4d24xlarge-22.luciodelelis-92732890-0458-4f76-8369-c4f'
     'ee80b23e7.pcluster<47861>',
     'nccl_socket_error', 'Connection closed by remote peer', 'network'),
    # NVIDIA/nccl#795
    ('a100-st-p4d24xlarge-22:183006:183220 [1] NCCL INFO transport/net_socket.cc:368 -> 6',
     'nccl_trace', 'ncclRemoteError', 'nccl_error'),
    # NVIDIA/nccl#1657
    ('E0323 21:57:08.583000 23 torch/distributed/elastic/multiprocessing/api.py:869] failed '
     '(exitcode: 1) local_rank: 0 (pid: 88) of binary: /opt/venv/bin/python3',
     'elastic_worker_failed', '1', 'user_code'),
    # hiyouga/LlamaFactory#7396
    ('[80746] [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog c'
     'aught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=46'
     '6119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before ti'
     'ming out.',
     'nccl_timeout', 'ALLREDUCE', 'nccl_timeout'),
    # hiyouga/LlamaFactory#7396
    ('[80748] [rank0]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exce'
     'ption (either an error or timeout) detected by watchdog at work: 1580, last enqueued N'
     'CCL work: 1582, last completed NCCL work: 1579.',
     'nccl_timeout', 'watchdog_abort', 'nccl_timeout'),
    # lmzpai/roboMamba#10
    ('E0325 20:57:27.620000 2606 site-packages/torch/distributed/elastic/multiprocessing/api'
     '.py:869] failed (exitcode: -9) local_rank: 5 (pid: 2630) of binary: /root/miniconda3/b'
     'in/python',
     'elastic_worker_failed', '-9', 'user_code'),
    # Facico/Chinese-Vicuna#113
    ('ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0'
     ' (pid: 1622990) of binary: /home/changquan/anaconda3/envs/lang/bin/python',
     'elastic_worker_failed', '1', 'user_code'),
    # zai-org/ChatGLM2-6B#520
    ('错误信息：Loading checkpoint shards:  57% 4/7 [00:40<00:29,  9.96s/it]ERROR:torch.distribut'
     'ed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 31631) of bin'
     'ary: /usr/bin/python3',
     'elastic_worker_failed', '-9', 'user_code'),
    # OpenBMB/MiniCPM-V#770
    ('torch/distributed/elastic/multiprocessing/api.py:826] failed (exitcode: -9) local_rank'
     ': 0 (pid: 1322) of binary: /root/miniconda3/bin/python',
     'elastic_worker_failed', '-9', 'user_code'),
    # Nextomics/NextDenovo#114
    ('slurmstepd: error: *** JOB 867816 ON c0700a-s1 CANCELLED AT 2021-05-11T12:06:17 DUE TO'
     ' TIME LIMIT ***',
     'slurm_job_cancelled', 'TIME LIMIT', 'scheduler'),
    # DataBiosphere/toil#4706
    ('slurmstepd-phoenix-07: error: *** JOB 1449736 ON phoenix-07 CANCELLED AT 2023-12-03T12'
     ':47:09 DUE TO TIME LIMIT ***',
     'slurm_job_cancelled', 'TIME LIMIT', 'scheduler'),
    # desihub/desitarget#628
    ('srun: Force Terminated job 32233190',
     'step_aborted', 'Force Terminated job 32233190', 'unknown'),
    # desihub/desitarget#628
    ('slurmstepd: error: *** STEP 32233190.0 ON nid01934 CANCELLED AT 2020-07-03T02:59:56 DU'
     'E TO TIME LIMIT ***',
     'slurm_job_cancelled', 'TIME LIMIT', 'scheduler'),
    # desihub/desitarget#628
    ('srun: error: nid01934: tasks 2,4-5,7: Terminated',
     'srun_task_exit', 'Terminated', 'unknown'),
    # desihub/desitarget#628
    ('srun: error: Unable to allocate resources: Requested time limit is invalid (missing or'
     ' exceeds some limit)',
     'job_rejected',
     'Requested time limit is invalid (missing or exceeds some limit)',
     'scheduler'),
    # lanl/PyBNF#118
    ('slurmstepd: error: Detected 2 oom-kill event(s) in step 3756240.batch cgroup.',
     'oom_event', 'cgroup', 'oom_host'),
    # hafs-community/HAFS#101
    ('slurmstepd: error: Detected 1 oom-kill event(s) in step 3495064.0 cgroup. Some of your'
     ' processes may have been killed by the cgroup out-of-memory handler.',
     'oom_event', 'cgroup', 'oom_host'),
    # hafs-community/HAFS#101
    ('srun: error: Orion-01-01: task 4: Out Of Memory',
     'oom_event', 'srun', 'oom_host'),
    # hafs-community/HAFS#101
    ('slurmstepd: error: *** STEP 3495064.0 ON orion-01-01 CANCELLED AT 2021-10-27T19:35:36 '
     '***',
     'slurm_job_cancelled', 'CANCELLED', 'scheduler'),
    # hafs-community/HAFS#101
    ('srun: error: Orion-18-69: task 289: Bus error',
     'srun_task_exit', 'Bus error', 'user_code'),
    # mjq11302010044/RRPN_pytorch#42
    ('RuntimeError: CUDA error: an illegal memory access was encountered',
     'cuda_error', 'an illegal memory access was encountered', 'user_code'),
    # k2-fsa/icefall#247
    ('  what():  CUDA error: an illegal memory access was encountered',
     'cuda_error', 'an illegal memory access was encountered', 'user_code'),
    # skhu101/GauHuman#21
    ('RuntimeError: merge_sort: failed to synchronize: cudaErrorIllegalAddress: an illegal m'
     'emory access was encountered',
     'cuda_error', 'cudaErrorIllegalAddress', 'user_code'),
    # OpenRLHF/OpenRLHF#1040
    ('torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/'
     '3 clients joined.',
     'rendezvous_error', 'DistStoreError', 'network'),
    # pytorch/pytorch#111805
    ('torch.distributed.DistStoreError: Timed out after 6 seconds waiting for workers. 1/2 w'
     'orkers joined.',
     'rendezvous_error', 'DistStoreError', 'network'),
    # alibaba/Pai-Megatron-Patch#468
    ('torch.distributed.DistStoreError: Socket Timeout',
     'rendezvous_error', 'DistStoreError', 'network'),
    # wxian3/NeuroLens#2
    ('torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 55.57 GiB. GPU 0 ha'
     's a total capacty of 12.00 GiB of which 9.02 GiB is free. Of the allocated memory 984.'
     '52 MiB is allocated by PyTorch, and 463.48 MiB is reserved by PyTorch but unallocated.'
     ' If reserved but unallocated memory is large try setting max_split_size_mb to avoid fr'
     'agmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF',
     'cuda_oom', 'CUDA out of memory', 'oom_gpu'),
    # Li-Chongyi/Zero-DCE#52
    ('OutOfMemoryError: CUDA out of memory. Tried to allocate 1.71 GiB (GPU 0; 6.00 GiB tota'
     'l capacity; 3.49 GiB already allocated; 1.04 GiB free; 3.50 GiB reserved in total by P'
     'yTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avo'
     'id fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF',
     'cuda_oom', 'CUDA out of memory', 'oom_gpu'),
    # shllln/GenerativeGraph#5
    ('RuntimeError: CUDA out of memory. Tried to allocate 1024.00 KiB (GPU 0; 11.17 GiB tota'
     'l capacity; 10.90 GiB already allocated; 576.00 KiB free; 30.96 MiB cached)',
     'cuda_oom', 'CUDA out of memory', 'oom_gpu'),
    # murong-xu/CADS#4
    ('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a t'
     'otal capacity of 31.47 GiB of which 12.73 GiB is free. Including non-PyTorch memory, t'
     'his process has 18.73 GiB memory in use. Of the allocated memory 9.08 GiB is allocated'
     ' by PyTorch, and 9.35 GiB is reserved by PyTorch but unallocated. If reserved but unal'
     'located memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True t'
     'o avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/'
     'docs/stable/notes/cuda.html#environment-variables)',
     'cuda_oom', 'CUDA out of memory', 'oom_gpu'),
    # lllyasviel/FramePack#369
    ('...CUDA out of memory. Tried to allocate 30.29 GiB. GPU 0 has a total capacity of 10.7'
     '4 GiB of which 3.69 GiB is free. Including non-PyTorch memory, this process has 6.68 G'
     'iB memory in use. Of the allocated memory 6.10 GiB is allocated by PyTorch, and 396.58'
     ' MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is lar'
     'ge try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation'
     '.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cud'
     'a.html#environment-variables)',
     'cuda_oom', 'CUDA out of memory', 'oom_gpu'),
    # NVIDIA/nccl#1405
    ('kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from '
     'peer 10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGi'
     'd fd00:1148:9000:5000:4:200:3:ff22 remoteGidsfd00:1148:9000:5000:4:200:3:ff1f',
     'nccl_ib_error', '12', 'network'),
    # NVIDIA/nccl#1405
    ('kp-ddp-worker-0:3468:3905 [4] NCCL INFO proxy.cc:878 -> 6 [Progress Thread]',
     'nccl_trace', 'ncclRemoteError', 'nccl_error'),
    # NVIDIA/nccl-tests#24
    ('gpu5:35917:35994 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with er'
     'ror 12, opcode 1, len 0, vendor err 129',
     'nccl_ib_error', '12', 'network'),
    # NVIDIA/nccl-tests#24
    ("gpu5:35917:35917 [1] init.cu:194 NCCL WARN Cuda failure 'an illegal memory access was "
     "encountered'",
     'cuda_error', 'an illegal memory access was encountered', 'user_code'),
    # NVIDIA/nccl-tests#24
    ("gpu5: Test NCCL failure common.cu:343 'unhandled cuda error'",
     'nccl_error', 'unhandled cuda error', 'nccl_error'),
    # NVIDIA/nccl#1737
    ('gh-3714u15:7038:7053 [0] ib_plugin.c:1007 NCCL WARN NET/IB : Got completion from peer '
     '10.1.32.3<54891> with error 5, opcode 0, len 0, vendor err 249',
     'nccl_ib_error', '5', 'network'),
    # zai-org/GLM-130B#132
    ('**RuntimeError: NCCL communicator was aborted on rank 2.  Original reason for failure '
     'was: [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=10, OpType'
     '=BROADCAST, Timeout(ms)=1800000) ran for 1805457 milliseconds before timing out.**',
     'nccl_timeout', 'BROADCAST', 'nccl_timeout'),
    # BinItAI/visdet#14
    ('RuntimeError: NCCL communicator was aborted on rank 1.  Original reason for failure wa'
     's: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2511984, OpT'
     'ype=ALLREDUCE, Timeout(ms)=1800000) ran for 1809553 milliseconds before timing out.',
     'nccl_timeout', 'ALLREDUCE', 'nccl_timeout'),
    # BinItAI/visdet#14
    ('[E ProcessGroupNCCL.cpp:828] [Rank 2] Watchdog caught collective operation timeout: Wo'
     'rkNCCL(SeqNum=2511984, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1809826 millisec'
     'onds before timing out.',
     'nccl_timeout', 'ALLREDUCE', 'nccl_timeout'),
    # mlfoundations/open_clip#1087
    ('RuntimeError: : NCCL communicator was aborted on rank 3.  Original reason for failure '
     'was: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=266392, Op'
     'Type=ALLGATHER, Timeout(ms)=1800000) ran for 1803169 milliseconds before timing out.',
     'nccl_timeout', 'ALLGATHER', 'nccl_timeout'),
    # pytorch/pytorch#64241
    ('NCCL communicator was aborted on rank 1. Original reason for failure was: Work: WorkNC'
     'CL(OpType=ALLREDUCE, TensorShape=[1], Timeout(ms)=2000) timed out in call to wait().',
     'nccl_error', 'aborted', 'nccl_timeout'),
    # ostris/ai-toolkit#470
    ("CUDA error: uncorrectable ECC error encountered Search for `cudaErrorECCUncorrectable'"
     ' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more i'
     'nformation. CUDA kernel errors might be asynchronously reported at some other API call'
     ', so the stacktrace below might be incorrect. For debugging consider passing CUDA_LAUN'
     'CH_BLOCKING=1 Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.',
     'cuda_error', 'cudaErrorECCUncorrectable', 'gpu_memory'),
    # JuliaGPU/CUDAdrv.jl#106
    ('  CUDA error: uncorrectable ECC error encountered (code #214, ERROR_ECC_UNCORRECTABLE)',
     'cuda_error',
     'uncorrectable ECC error encountered (code #214, ERROR_ECC_UNCORRECTABLE)',
     'user_code'),
    # kohya-ss/sd-scripts#1434
    ('[E ProcessGroupNCCL.cpp:916] [Rank 1] NCCL watchdog thread terminated with exception: '
     'CUDA error: uncorrectable ECC error encountered',
     'cuda_error', 'uncorrectable ECC error encountered', 'gpu_memory'),
    # pytorch/pytorch#49832
    ('  what():  CUDA error: unspecified launch failure (insert_events at /pytorch/c10/cuda/'
     'CUDACachingAllocator.cpp:764)',
     'cuda_error',
     'unspecified launch failure (insert_events at /pytorch/c10/cuda/CUDACachingAllocator.c'
      'pp:764)',
     'user_code'),
    # pytorch/pytorch#2567
    ('RuntimeError: cuda runtime error (4) : unspecified launch failure at /home/ubuntu/pyto'
     'rch/torch/lib/THC/THCTensorCopy.cu:85',
     'cuda_error', 'unspecified launch failure', 'gpu_hardware'),
    # pytorch/pytorch#3912
    ('THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1502009910772/work/torch/lib/THC/ge'
     'neric/THCStorage.c line=32 error=4 : unspecified launch failure',
     'cuda_error', 'unspecified launch failure', 'gpu_hardware'),
    # pytorch/pytorch#21276
    ('THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=271 error'
     '=4 : unspecified launch failure       x',
     'cuda_error', 'unspecified launch failure       x', 'user_code'),
    # XPixelGroup/BasicSR#211
    ('RuntimeError: CUDA error: unspecified launch failure`',
     'cuda_error', 'unspecified launch failure`', 'user_code'),
    # facebookresearch/av_hubert#19
    ('    "message": "RendezvousTimeoutError: ",',
     'rendezvous_error', 'RendezvousTimeoutError', 'network'),
    # pytorch/pytorch#64926
    ('    "message": "RendezvousConnectionError: The connection to the C10d store has failed'
     '. See inner exception for details.",',
     'rendezvous_error', 'RendezvousConnectionError', 'network'),
    # pytorch/pytorch#147064
    ('E0213 12:07:20.086000 870572 torch/distributed/elastic/multiprocessing/api.py:869] fai'
     'led (exitcode: 1) local_rank: 0 (pid: 876053) of binary: /usr/local/google/home/kiuk/.'
     'pyenv/versions/3.11.4/envs/venv311/bin/python3.11',
     'elastic_worker_failed', '1', 'user_code'),
    # pytorch/pytorch#147064
    ('I0213 12:07:20.086000 870572 torch/distributed/elastic/agent/server/api.py:889] [defau'
     'lt] Worker group FAILED. 3/3 attempts left; will restart worker group',
     'elastic_restart', 'FAILED', 'unknown'),
    # pytorch/pytorch#107021
    ('[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to co'
     'nnect to 192.0.0.1:1234',
     'rendezvous_error', 'client_timeout', 'network'),
    # pytorch/pytorch#107021
    ('torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to '
     'the C10d store has failed. See inner exception for details.',
     'rendezvous_error', 'RendezvousConnectionError', 'network'),
    # pytorch/pytorch#79388
    ('[E socket.cpp:793] [c10d] The client socket has timed out after 60s while trying to co'
     'nnect to (IP1, 2222).',
     'rendezvous_error', 'client_timeout', 'network'),
    # NVIDIA/dcgm-exporter#604
    ('Unable to determine the device handle for GPU 000:BA:80.0: Unknown Error',
     'gpu_lost', 'nvidia_smi', 'gpu_hardware'),
    # xxd3vin/workspace#19
    ('Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error',
     'gpu_lost', 'nvidia_smi', 'gpu_hardware'),
    # JosephKJ/OWOD#81
    ('**"Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost. Reboot the'
     ' system to recover this GPU"**',
     'gpu_lost', 'nvidia_smi', 'gpu_hardware'),
    # pdbear/syno_nvidia_gpu_driver#22
    ('Unable to determine the device handle for GPU0000:07:00.0: Unknown Error',
     'gpu_lost', 'nvidia_smi', 'gpu_hardware'),
    # AlexeyAB/darknet#86
    ('        Unable to determine the device handle for GPU 0000:03:00.0: GPU is lost.  Rebo'
     'ot',
     'gpu_lost', 'nvidia_smi', 'gpu_hardware'),
    # SystemsGenetics/GEMmaker#242
    ('  slurmstepd: error: *** JOB 32391783 ON cn119 CANCELLED AT 2021-06-18T13:05:36 DUE TO'
     ' PREEMPTION ***',
     'slurm_job_cancelled', 'PREEMPTION', 'preemption'),
    # facebookincubator/submitit#1708
    ('submitit WARNING (2022-08-12 02:06:11,453) - Caught signal SIGUSR2 on SERVER_NAME: thi'
     's job is preempted.',
     'job_preempt', 'submitit', 'preemption'),
    # facebookincubator/submitit#1708
    ('slurmstepd: error: *** JOB 608 ON SERVER_NAME CANCELLED AT 2022-08-12T02:06:12 DUE TO '
     'JOB REQUEUE ***',
     'slurm_job_cancelled', 'JOB REQUEUE', 'scheduler'),
    # facebookincubator/submitit#1708
    ('srun: error: SERVER_NAME: tasks 2-3: Exited with exit code 1',
     'srun_task_exit', '1', 'user_code'),
    # MhLiao/DB#94
    ('RuntimeError: DataLoader worker (pid 25902) is killed by signal: Segmentation fault',
     'process_signal', 'Segmentation fault', 'user_code'),
    # ymoslem/OpenNMT-Tutorial#6
    ('Memory cgroup out of memory: Killed process 629 (onmt_train) total-vm:14119556kB, anon'
     '-rss:6538204kB, file-rss:80652kB, shmem-rss:16kB, UID:0 pgtables:13432kB oom_score_adj'
     ':0',
     'oom_kill', 'onmt_train', 'oom_host'),
    # castorini/hedwig#70
    ('Killed',
     'process_signal', 'Killed', 'unknown'),
    # NVIDIA/nccl#1235
    ('ng30903:3063025:3066048 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection clo'
     'sed by remote peer ng30903-ib.narval.calcul.quebec<51159>',
     'nccl_socket_error', 'Connection closed by remote peer', 'network'),
    # NVIDIA/nccl#1235
    ('ng30903:3063025:3066048 [0] proxy.cc:1143 NCCL WARN Socket recv failed while polling f'
     'or opId=0x55a51966cc80',
     'nccl_socket_error', 'Socket recv failed', 'network'),
    # NVIDIA/nccl#1235
    ("ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'",
     'cuda_error', 'out of memory', 'oom_gpu'),
    # NVIDIA/nccl#1235
    ('ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 629145'
     '6 bytes',
     'nccl_warn', 'None', 'nccl_error'),
    # NVIDIA/nccl#1029
    ('rdma-gpu-train-worker-0: rdma-gpu-train-worker-0:19491:21059 [7] proxy.cc:1143 NCCL WA'
     'RN Socket recv failed while polling for opId=0x7fb582222f90',
     'nccl_socket_error', 'Socket recv failed', 'network'),
]

NODE = [
    # NVIDIA/nvtrust#77 (no row before this round)
    ('[  286.345361] NVRM: kfspPollForQueueEmpty_IMPL: Timed out waiting for FSP command que'
     'ue to be empty.',
     'gpu_lost', 'FSP', 'gpu_hardware'),
    # NVIDIA/nvtrust#77 (no row before this round)
    ('[  279.950855] NVRM: gpuHandleSanityCheckRegReadError_GH100: Possible bad register rea'
     'd: addr: 0x110804,  regvalue: 0xbadf4100,  error code: Unknown SYS_PRI_ERROR_CODE',
     'nvrm_error', 'bad_register_read', 'gpu_driver'),
    # ovro-lwa/lwa-issues#117
    ('[11189.970968] EDAC MC3: 1 UE memory read error on CPU_SrcID#1_MC#1_Chan#2_DIMM#0 (cha'
     'nnel:2 slot:0 page:0xb757589 offset:0x140 grain:32 -  OVERFLOW err_code:0101:0092 sock'
     'et:1 imc:1 rank:0 bg:3 ba:0 row:1a1e8 col:180)',
     'edac', 'UE', 'node_failure'),
    # madMAx43v3r/chia-gigahorse#301
    ('[14328.198504] NVRM: Xid (PCI:0000:0a:00): 31, pid=13332, name=cuda_plot_k32_v, Ch 000'
     '00010, intr 00000000. MMU Fault: ENGINE CE2 HUBCLIENT_CE0 faulted @ 0x7f29_5b8c9000. F'
     'ault is of type FAULT_PRIV_VIOLATION ACCESS_TYPE_VIRT_READ',
     'xid', '31', 'user_code'),
    # madMAx43v3r/chia-gigahorse#301
    ("[14370.687545] NVRM: Xid (PCI:0000:0a:00): 62, pid='<unknown>', name=<unknown>, 2023b2"
     '30 20238a3a 2023e8b6 2023eac4 2023ec3c 2023ea86 00000000 00000000',
     'xid', '62', 'gpu_hardware'),
    # NVIDIA/open-gpu-kernel-modules#363
    ('NVRM: Xid (PCI:0000:08:00): 31, pid=169800, name=chrome, Ch 00000023, intr 00000000. M'
     'MU Fault: ENGINE CE0 HUBCLIENT_HSCE0 faulted @ 0x0_0abe0000. Fault is of type FAULT_PT'
     'E ACCESS_TYPE_VIRT_READ',
     'xid', '31', 'user_code'),
    # NVIDIA/open-gpu-kernel-modules#829
    ('[605633.376794] NVRM: Xid (PCI:0000:06:00): 120, GSP task exception: store access page'
     ' fault (cause:0xf) @ pc:0x13ebd80, partition:2#0, task:3',
     'xid', '120', 'gpu_driver'),
    # pcyin/tranX#41
    ('[2059991.491436] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,me      '
     '                                                                                      '
     '                         ms_allowed=0,global_oom,task_memcg=/user.slice,task=python3,p'
     'id=25315,uid=0',
     'oom_kill', 'oom-kill', 'oom_host'),
    # pcyin/tranX#41
    ('[2059991.491542] Out of memory: Killed process 25315 (python3) total-vm:53312244      '
     '                                                                                      '
     '                         kB, anon-rss:31451456kB, file-rss:74816kB, shmem-rss:12296kB,'
     ' UID:0 pgtables:690                                                                   '
     '                                                  68kB oom_score_adj:0',
     'oom_kill', 'python3', 'oom_host'),
    # ShengcaiLiao/QAConv#19
    ('[448212.100902] sunloginclient invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVA'
     'BLE), order=0, oom_score_adj=0',
     'oom_kill', 'sunloginclient', 'oom_host'),
]

K8S = [
    # sapcc/helm-charts#548 (no row before this round)
    ('Message:             No nodes are available that match all of the predicates: Insuffic'
     'ient cpu (19), Insufficient memory (19), PodToleratesNodeTaints (10).',
     'k8s_event', 'FailedScheduling', 'scheduler'),
    # NVIDIA/k8s-device-plugin#430 (no row before this round)
    ('0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are avai'
     'lable: 1 No preemption victims found for incoming pod..',
     'k8s_event', 'FailedScheduling', 'scheduler'),
    # NVIDIA/gpu-operator#331
    ('      Reason:       OOMKilled',
     'pod_terminated', 'OOMKilled', 'oom_host'),
    # NVIDIA/gpu-operator#331
    ('      Reason:       CrashLoopBackOff',
     'pod_waiting', 'CrashLoopBackOff', 'unknown'),
    # kubeflow/trainer#1661
    ('Warning  Failed  113s   kubelet  Error: container create failed: time="2022-09-14T11:3'
     '5:13Z" level=error msg="runc create failed: unable to start container process: contain'
     'er init was OOM-killed (memory limit too low?)"',
     'k8s_event', 'Failed', 'unknown'),
    # NVIDIA/k8s-device-plugin#119
    ('Warning FailedScheduling 40s (x2 over 40s) default-scheduler 0/2 nodes are available: '
     '1 Insufficient nvidia.com/gpu, 1 node(s) were unschedulable.',
     'k8s_event', 'FailedScheduling', 'scheduler'),
    # AliyunContainerService/gpushare-scheduler-extender#59
    ('  Warning  FailedScheduling  6s (x5 over 3m1s)  default-scheduler  0/2 nodes are avail'
     'able: 2 Insufficient aliyun.com/gpu-mem`',
     'k8s_event', 'FailedScheduling', 'scheduler'),
    # kubernetes/kubernetes#91600
    ('  Warning  Evicted         18m                kubelet, mgt04     The node was low on r'
     'esource: ephemeral-storage. Container calico-node was using 92Ki, which exceeds its re'
     'quest of 0.',
     'k8s_event', 'Evicted', 'storage'),
    # kubernetes/kubernetes#132001
    ('May 28 16:05:54 192-168-250-5 kubelet[2269385]: I0528 16:05:54.802914 2269385 eviction'
     '_manager.go:627] "Eviction manager: pod is evicted successfully" pod="sre/infras-logst'
     'ash-d484d57fc-rkx95"',
     'pod_evicted', 'Evicted', 'preemption'),
    # kubernetes/kubernetes#132001
    ('infras-logstash-d484d57fc-rkx95\t\tEvicted\t\tThe node was low on resource: ephemeral-'
     'storage. Threshold quantity: 30Gi, available: 24094024Ki. Container infras-logstash wa'
     's using 2456Ki, request is 0, has larger consumption of ephemeral-storage. ',
     'pod_evicted', 'Evicted', 'storage'),
    # elastisys/compliantkubernetes-apps#1173
    ('Warning  Evicted  37m   kubelet  The node was low on resource: ephemeral-storage. Cont'
     'ainer X was using 2596Ki, which exceeds its request of 0.',
     'k8s_event', 'Evicted', 'storage'),
    # cloud-ark/kubeplus#1382
    ('Message:      The node was low on resource: ephemeral-storage. Threshold quantity: 214'
     '6223340, available: 1883424Ki. Container helmer was using 10304Ki, request is 10Mi, ha'
     's larger consumption of ephemeral-storage. Container consumerui was using 52676Ki, req'
     'uest is 10Mi, has larger consumption of ephemeral-storage.',
     'pod_evicted', 'Evicted', 'storage'),
    # kubernetes/test-infra#4580
    ('`Evicted\t\tThe node was low on resource: nodefs.`',
     'pod_evicted', 'Evicted', 'preemption'),
]

# (line as pasted, kind, code, category, the step the row carries)
PROGRESS = [
    # NVIDIA-BioNeMo/bionemo-recipes#414 (no row before this round)
    ('ERROR sub-packages/bionemo-esm2/tests/bionemo/esm2/model/test_stop_and_go.py::TestESM2'
     'StopAndGo::test_stop_and_go_consistency[LearningRateCallback] - nemo.utils.exp_manager'
     '.NotFoundError: There were no checkpoints found in checkpoint_dir or no checkpoint fol'
     'der at checkpoint_dir :/tmp/tmpuyrh4jvz/TestESM2StopAndGo/checkpoints. Cannot resume.',
     'ckpt_error', 'nemo_resume_not_found', 'storage', None),
    # MIC-DKFZ/nnUNet#440 (no row before this round)
    ('2020-12-21 19:11:40.861863: saving checkpoint...',
     'ckpt_save_start', 'None', 'checkpoint', None),
    # MIC-DKFZ/nnUNet#440 (no row before this round)
    ('2020-12-21 19:11:43.451044: done, saving took 2.62 seconds',
     'ckpt_save_end', 'None', 'checkpoint', None),
    # ostris/ai-toolkit#570 (no row before this round)
    ('Saving at step 3000',
     'ckpt_save_start', 'None', 'checkpoint', 3000),
    # ostris/ai-toolkit#570 (no row before this round)
    ('Saved checkpoint to G:\\AI\\ai-toolkit\\output\\mgnm_composition\\mgnm_composition_000'
     '003000.safetensors',
     'ckpt_save_end', 'None', 'checkpoint', 3000),
    # vocalpy/vak#181 (no row before this round)
    ('Step 10600 is a checkpoint step.',
     'ckpt_save_start', 'None', 'checkpoint', 10600),
    # vocalpy/vak#181 (no row before this round)
    ('Step 11000 is a validation step; computing metrics on validation set',
     'eval', 'None', 'progress', 11000),
    # axolotl-ai-cloud/axolotl#2634 (no row before this round)
    ('[2025-05-05 01:38:55,524] [INFO] [axolotl.train.determine_resume_checkpoint:143] [PID:'
     '25] [RANK:0] Using Auto-resume functionality to start with checkpoint at lora-out/chec'
     'kpoint-9318',
     'ckpt_load', 'loading', 'checkpoint', 9318),
    # XPixelGroup/BasicSR#211 (no row before this round)
    ('`19-08-22 10:12:46.002 - INFO: <epoch:  5, iter:  10,100, lr:1.992e-04> l_pix: 1.8082e'
     '-02 ',
     'iteration', 'None', 'progress', 10100),  # Python's {:8,d}: read without the comma
    # modelscope/ClearerVoice-Studio#4 (no row before this round)
    ('Train Epoch: 0/100 Step: 10/965 | 2.057s/batch | lr 5.0000e-04 || Mask_Loss 1.6780',
     'progress_bar', 'Epoch 0', 'progress', 10),
    # facebookresearch/detectron2#3180 (no row before this round)
    ('{"data_time": 0.00965266628190875, "eta_seconds": 2810.600295108743, "fast_rcnn/cls_ac'
     'curacy": 0.989990234375, "fast_rcnn/false_negative": 0.07849843176741549, "fast_rcnn/f'
     'g_cls_accuracy": 0.9215015682325846, "iteration": 1919, "loss_box_reg": 0.066535413265'
     '22827, "loss_cls": 0.025953871197998524, "loss_rpn_cls": 0.0007295090181287378, "loss_'
     'rpn_loc": 0.010772376786917448, "lr": 0.01, "roi_head/num_bg_samples": 476.25, "roi_he'
     'ad/num_fg_samples": 35.75, "rpn/num_neg_anchors": 243.875, "rpn/num_pos_anchors": 12.1'
     '25, "time": 0.39993729814887047, "total_loss": 0.10340066681965254}',
     'iteration', 'None', 'progress', 1919),
    # johnman3032/simple-lora-dreambooth-trainer#2 (no step before this round)
    ('10/20/2023 15:48:52 - INFO - __main__ - Saved state to C:/Users/User_name/Documents/LO'
     'RA/W Output\\checkpoint-416',
     'ckpt_save_end', 'None', 'checkpoint', 416),
    # intelligent-machine-learning/dlrover#977
    ('loading checkpoint from /workspace/Megatron-LM-23.06/checkpoint at iteration 100',
     'ckpt_load', 'loading', 'checkpoint', 100),
    # facebookresearch/fairseq#2681
    ('2020-10-01 11:52:42 | INFO | train_inner | epoch 001:      2 / 78 loss=0.981, ppl=1.97'
     ', wps=2233.4, ups=2.18, wpb=1024, bsz=8, num_updates=2, lr=3.4995e-07, gnorm=0.067, tr'
     'ain_wall=0, wall=8',
     'iteration', 'None', 'progress', 2),
    # huggingface/transformers#24313
    ('[INFO|trainer.py:1682] 2023-06-16 13:12:23,136 >> ***** Running training *****',
     'train_start', 'None', 'progress', None),
    # NVIDIA-NeMo/Speech#10675
    ('Training epoch 0, iteration 196/3999 | lr: 2.954e-05 | consumed_samples: 4728 | global'
     '_batch_size: 24 | global_step: 196 | reduced_train_loss: 10.84 | train_step_timing in '
     's: 0.9765',
     'iteration', 'None', 'progress', 196),
    # NVIDIA-NeMo/Speech#10675
    ("Epoch 0, global step 199: 'val_loss' was not in top 10",
     'eval', 'None', 'progress', 199),
    # huggingface/transformers#33336
    ("{'loss': 2.1048, 'grad_norm': 2.1349170207977295, 'learning_rate': 4.9939613526570054e"
     "-05, 'epoch': 0.0}                                           ",
     'hf_log', 'None', 'progress', None),
    # axolotl-ai-cloud/axolotl#2634
    ('[2025-05-05 01:38:55,525] [INFO] [axolotl.train.execute_training:213] [PID:25] [RANK:0'
     '] Starting trainer...',
     'train_start', 'None', 'progress', None),
    # huggingface/nanotron#23
    ('01/17/2024 13:47:27 [INFO|DP=0|PP=0|TP=0|ip-26-0-160-225]: iteration: 992 / 1000 | con'
     'sumed_tokens: 635K | elapsed_time_per_iteration_ms: 41.2 | tokens_per_sec: 15.5K | tok'
     'ens_per_sec_per_gpu: 1.94K | global_batch_size: 20 | lm_loss: 10.6 | lr: 1e-05 | model'
     '_tflops_per_gpu: 0.0095 | hardware_tflops_per_gpu: 0.00951 | grad_norm: 0.507',
     'iteration', 'None', 'progress', 992),
    # karpathy/nanoGPT#110
    ('iter 1631: loss 4.0863, time 561.94ms',
     'iteration', 'None', 'progress', 1631),
    # verl-project/verl#2060
    ('step:0 - val-aux/openai/gsm8k/reward/mean@1:0.565 - val-aux/openai/gsm8k/score/mean@1:'
     '0.565 - val-core/openai/gsm8k/acc/mean@1:0.508',
     'iteration', 'None', 'progress', 0),
    # hpcaitech/Open-Sora#637
    ('Epoch 0:  19%|██████▏                          | 1610/8573 [11:25:45<50:22:32, 26.05s/'
     'it, loss=0.279, step=1609, global_step=1609]',
     'progress_bar', 'Epoch 0', 'progress', 1610),
    # ZJULearning/ttfnet#9
    ('2019-10-04 15:27:50,440 - INFO - Epoch [5][400/1284]    lr: 0.00800, eta: 1:54:10, tim'
     'e: 0.666, data_time: 0.033, memory: 9804, losses/ttfnet_loss_heatmap: 2.0091, losses/t'
     'tfnet_loss_wh: 3.2484, loss: 5.2576',
     'progress_bar', 'None', 'progress', 400),
    # huggingface/transformers#14946
    ('[INFO|trainer.py:2033] 2021-12-26 19:42:00,421 >> Saving model checkpoint to finetuned'
     '-ro-en-dev/checkpoint-2',
     'ckpt_save_start', 'None', 'checkpoint', 2),
    # huggingface/transformers#14946
    ('[2021-12-26 19:44:09,596] [INFO] [logging.py:69:log_dist] [Rank 0] Saving model checkp'
     'oint: finetuned-ro-en-dev/checkpoint-2/global_step2/mp_rank_00_model_states.pt',
     'ckpt_save_start', 'None', 'checkpoint', 2),
    # hustvl/LightningDiT#73
    ('Epoch 0:   0%|          | 2/5005 [00:06<4:10:12,  0.33it/s, v_num=1, aeloss_step=1.41e'
     '+5, discloss_step=0.000]',
     'progress_bar', 'Epoch 0', 'progress', 2),
    # Lightning-AI/pytorch-lightning#4225
    ('Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]',
     'progress_bar', 'Epoch 0', 'progress', 4),
    # modelscope/ms-swift#4366
    ('Train:  33%|███▎      | 3099/9297 [7:04:32<12:19:18,  7.16s/it][INFO:swift] last_model'
     '_checkpoint: /wd/output_path/v0-20250526-162705/checkpoint-3000',
     'progress_bar', 'Train', 'progress', 3099),
    # facebookresearch/detectron2#3023
    ('[05/10 04:48:34] d2.utils.events INFO:  eta: 0:56:30  iter: 4359  total_loss: 0  time:'
     ' 0.6098  data_time: 0.0097  lr: 0.0059734  max_mem: 3911M',
     'iteration', 'None', 'progress', 4359),
    # open-mmlab/mmdetection#7932
    ('2022-05-07 13:14:22,908 - mmdet - INFO - Epoch [1][1500/14659]\tlr: 0.01000, eta: 1 da'
     'y, 12:59:34, time: 0.739, data_time: 0.049, memory: 3028, loss_ins: 1.2023, loss_cate:'
     ' 0.5622, loss: 1.7645',
     'progress_bar', 'None', 'progress', 1500),
    # open-mmlab/mmpretrain#360
    ('2021-07-14 13:52:35,974 - mmcls - INFO - Saving checkpoint at 1 epochs',
     'ckpt_save_start', 'None', 'checkpoint', None),
    # ultralytics/ultralytics#10200
    ('    12/1000       8.6G      1.846      3.474      1.381        254        640:  38%|##'
     '#7      | 6/16 [00:01<00:02,  3.88it/s]',
     'progress_bar',
     '12/1000       8.6G      1.846      3.474      1.381        254        640',
     'progress', 6),
    # pytorch/torchtitan#2839
    ('[rank0]:[titan] 2026-04-06 10:32:54,517 - root - INFO - step: 10  loss:  3.58616  grad'
     '_norm:  1.3104  memory:  0.96GiB(1.01%)  tps: 193,943  tflops: 13.88  mfu: 1.40%',
     'iteration', 'None', 'progress', 10),
    # huggingface/finetrainers#29
    ('Resuming from checkpoint pytorch_model',
     'ckpt_load', 'loading', 'checkpoint', None),
    # bytedeco/storch#51
    ('step 500: train loss 2.5476382, val loss 2.5570214, mem 838.6 MiB @ 00 00:01:01.811, m'
     'ean 00 00:00:00.123',
     'eval', 'None', 'progress', 500),
    # geoelements/gns#79
    ('Epoch 0: 100%|████████████████████████████████████████████████████████████████████████'
     '████████████████████████████████████████████████████| 994/994 [03:44<00:00,  4.42batch'
     '/s, avg_loss=0.34, loss=0.06, lr=1.00e-04]',
     'progress_bar', 'Epoch 0', 'progress', 994),
    # huggingface/transformers#5901
    ('Iteration: 100%|█████████▉| 20703/20711 [4:42:54<00:07,  1.14it/s]',
     'progress_bar', 'Iteration', 'progress', 20703),
]

#: healthy lines from the same pastes: no row at all
HEALTHY = [
    # NVIDIA/nccl#1657
    '[rank0]:[I323 21:57:08.461980659 ProcessGroupNCCL.cpp:1538] [PG ID 0 PG GUID 0(default'
     '_pg) Rank 0] ProcessGroupNCCL heart beat monitor thread joined.',
    # NVIDIA/nccl#1657
    '[I323 21:57:08.462050602 TCPStoreLibUvBackend.cpp:120] [c10d - debug] Read callback fa'
     'iled. code:-4095 name:EOF desc:end of file',
    # k2-fsa/icefall#247
    'Exception raised from create_event_internal at /pytorch/c10/cuda/CUDACachingAllocator.'
     'cpp:733 (most recent call first):',
    # PaddlePaddle/Paddle#346
    'I1104 11:18:45.290464 87409 Tester.cpp:127]  Test samples=1000 cost=0.347865 Eval: cla'
     'ssification_error_evaluator=0.148',
    # NVIDIA/nvidia-container-toolkit#30
    '      Reason:       Completed',
    # ovro-lwa/lwa-issues#117
    '[11219.196622] {1}[Hardware Error]:   version: 3.0',
    # alibaba/Pai-Megatron-Patch#468
    'W0219 12:09:28.313000 140145133409408 torch/distributed/run.py:757] Setting OMP_NUM_TH'
     'READS environment variable for each process to be 1 in default, to avoid your system b'
     'eing overloaded, please further tune the variable for optimal performance in your appl'
     'ication as needed.',
    # ymcui/Chinese-LLaMA-Alpaca-2#274
    'WARNING:torch.distributed.launcher.api:config has no run_id, generated a random run_id'
     ': 174580650467654300307713793029077439978',
    # ymcui/Chinese-LLaMA-Alpaca-2#274
    'master_addr is only used for static rdzv_backend and when rdzv_endpoint is not specifi'
     'ed.',
    # NVIDIA/nccl-tests#24
    'gpu5:35917:35917 [0] NCCL INFO Destroyed comm 0x7f24c4001af0 rank 4',
    # huggingface/transformers#24313
    '[INFO|trainer.py:1688] 2023-06-16 13:12:23,136 >>   Total optimization steps = 345',
    # huggingface/transformers#24313
    'wandb: Currently logged in as: smangrul. Use `wandb login --relogin` to force relogin',
    # jdg900/MMR#2
    '[2025-03-25 18:12:45,948] [INFO] [logging.py:96:log_dist] [Rank -1] DeepSpeed info: ve'
     'rsion=0.14.0, git-hash=unknown, git-branch=unknown',
    # jdg900/MMR#2
    '[2025-03-25 18:12:45,952] [INFO] [comm.py:668:init_distributed] Initializing TorchBack'
     'end in DeepSpeed with backend nccl',
    # MIC-DKFZ/nnUNet#440
    '2020-12-21 19:01:09.376864: This epoch took 661.806423 s',
    # MIC-DKFZ/nnUNet#440
    '2020-12-21 19:01:09.376922: lr: 0.009991',
    # adrienpetralia/NILMFormer#7
    '2025-10-29 21:49:22,276 - INFO - Train loss : 0.0003 ',
    # NVIDIA-NeMo/Speech#10675
    '[NeMo W 2024-09-29 08:11:31 nemo_logging:349] /home/usr/.local/lib/python3.10/site-pac'
     "kages/pytorch_lightning/callbacks/model_checkpoint.py:384: `ModelCheckpoint(monitor='v"
     "al_loss')` could not find the monitored key in the returned metrics: ['lr', 'consumed_"
     "samples', 'global_batch_size', 'global_step', 'step', 'reduced_train_loss', 'grad_norm"
     "', 'train_step_timing in s', 'epoch']. HINT: Did you call `log('val_loss', value)` in "
     'the `LightningModule`?',
    # ostris/ai-toolkit#570
    'Removing old save: G:\\AI\\ai-toolkit\\output\\mgnm_composition\\mgnm_composition_0000'
     '02000.safetensors',
    # vocalpy/vak#181
    'Accuracy has not improved in 1 validation steps. Not saving max-val-acc checkpoint for'
     ' this validation step.',
    # axolotl-ai-cloud/axolotl#2634
    '[2025-05-05 01:39:12,729] [WARNING] [engine.py:1232:_do_optimizer_sanity_check] **** Y'
     'ou are using ZeRO with an untested optimizer, proceed with caution',
    # axolotl-ai-cloud/axolotl#2634
    '[2025-05-05 01:38:50,663] [INFO] [axolotl.train.save_initial_configs:365] [PID:25] [RA'
     'NK:0] Pre-saving tokenizer to ./lora-out...',
    # microsoft/muzic#126
    'time2 is 1685112173.1206985',
    # kohya-ss/sd-scripts#1434
    'CUDA kernel errors might be asynchronously reported at some other API call, so the sta'
     'cktrace below might be incorrect.',
    # kohya-ss/sd-scripts#1434
    'Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.',
    # sgl-project/sglang#3204
    '[2025-01-29 08:52:43 TP5] Using default MoE config. Performance might be sub-optimal! '
     'Config file not found at /home/ubuntu/.local/lib/python3.10/site-packages/sglang/srt/l'
     'ayers/moe/fused_moe_triton/configs/E=160,N=192,device_name=NVIDIA_A100-SXM4-80GB.json',
    # pytorch/pytorch#64926
    "  rdzv_configs     : {'timeout': 900}",
    # pytorch/pytorch#147064
    'I0213 12:07:20.086000 870572 torch/distributed/elastic/agent/server/api.py:699] [defau'
     'lt] Stopping worker group',
    # huggingface/transformers#14946
    '[INFO|configuration_utils.py:425] 2021-12-26 19:42:00,423 >> Configuration saved in fi'
     'netuned-ro-en-dev/checkpoint-2/config.json',
    # NVIDIA/k8s-device-plugin#165
    'Failed to get system container stats for "/system.slice/docker.service": failed to get'
     ' cgroup stats for "/system.slice/docker.service": failed to get container info for "/s'
     'ystem.slice/docker.service": unk',
    # facebookincubator/submitit#1708
    'submitit WARNING (2022-08-12 02:06:12,299) - Bypassing signal SIGCONT',
    # modelscope/ms-swift#4366
    '[INFO:swift] best_model_checkpoint: /wd/output_path/v0-20250526-162705/checkpoint-2800',
    # open-mmlab/mmdetection#7932
    "2022-05-07 12:55:17,528 - mmdet - INFO - workflow: [('train', 1)], max: 12 epochs",
    # modelscope/scepter#48
    'scepter [INFO] 2024-10-06 20:19:36,924 [File: run_task.py Function: run_task at line 4'
     '8]  checkpoint save interval is changed from 25 to 62 according to the setting epoches'
     ' interval 25',
    # ultralytics/ultralytics#10200
    '      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size         '
     '                                                                                      '
     '                                                                                      '
     '                                                                               ',
    # EleutherAI/gpt-neo#227
    'Saving config to C://Users//Mayank//GPTNeo//models//GPT3_XL',
    # EleutherAI/gpt-neo#227
    '2021-06-14 21:42:15.288177: I tensorflow/core/platform/cpu_feature_guard.cc:142] This '
     'TensorFlow binary is optimized with oneAPI Deep Neural Network Library (oneDNN) to use'
     ' the following CPU instructions in performance-critical operations:  AVX2',
    # madMAx43v3r/chia-gigahorse#301
    '[14328.198496] NVRM: GPU at PCI:0000:0a:00: GPU-760d0170-b7c5-6817-9414-6cc7112645de',
    # madMAx43v3r/chia-gigahorse#301
    '[14372.273528] sched: RT throttling activated',
    # NVIDIA/open-gpu-kernel-modules#829
    '[605633.376803] NVRM:     RISC-V CSR State:',
    # ShengcaiLiao/QAConv#19
    '[448212.100910] Hardware name: ASUS System Product Name/TUF GAMING B560M-PLUS, BIOS 08'
     '20 04/26/2021',
    # rwth-i6/returnn#1496
    'RETURNN starting up, version 1.20240117.113304+git.54097989, date/time 2024-01-17-23-1'
     '5-11 (UTC+0000), pid 1130069, cwd /work/asr4/zeyer/setups-data/combined/20',
    # bytedeco/storch#51
    '13443137 parameters',
    # lightly-ai/lightly-train#680
    '[2026-04-01 13:02:26,694][INFO] Validating...',
    # huggingface/transformers#5901
    'compress roberta.20200717.zip on ./pretrained',
    # huggingface/finetrainers#344
    'DESKTOP-1CE5APL:1689:2800 [0] NCCL INFO Failed to open libibverbs.so[.1]',
    # huggingface/finetrainers#344
    'DESKTOP-1CE5APL:1689:2800 [0] NCCL INFO ncclCommInitRank comm 0x562f744f9960 rank 0 nr'
     'anks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0xaf0466eb06180cf5 - Init START',
]


@pytest.mark.parametrize(("name", "table"), [
    ("slurm-4261.out", JOB_OUTPUT), ("node.log", NODE), ("describe.txt", K8S)])
def test_each_pasted_line_gives_its_row(tmp_path: Path, name: str,
                                        table: list[tuple[str, str, str, str]]) -> None:
    """In one file, then each line alone in a file named as nothing in particular."""
    assert_pasted(tmp_path, name, table)


def test_each_pasted_progress_line_gives_its_row(tmp_path: Path) -> None:
    """In one file, then each line alone."""
    assert_pasted(tmp_path, "slurm-4262.out", [t[:4] for t in PROGRESS])


def test_steps() -> None:
    """The step each progress or checkpoint row carries."""
    assert_steps(PROGRESS, "slurm-4262.out")


def test_healthy_lines_give_no_row(tmp_path: Path) -> None:
    """The healthy lines, in one file and each alone."""
    assert explain_rows(tmp_path, "slurm-4263.out", HEALTHY) == {}
    for text, rows in zip(HEALTHY, explain_alone(tmp_path, HEALTHY), strict=True):
        assert rows == [], text

