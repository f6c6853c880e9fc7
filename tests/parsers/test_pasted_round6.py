"""Lines users pasted in public threads nobody here had read, collected a sixth time
(2026-12-04: 117 failure lines, 54 progress and checkpoint lines and 51 healthy lines from
126 threads). Below, those that give their row now, beside it; a comment marks the lines that
gave no row (or no step) before this round; the rest already did and stay so. Not here: the
lines still without their row. The signatures
(parsers/signatures/*.toml) and the parsers that read them cite the printing code.
This file: job output; ``test_pasted_round6_nodes.py`` node and Kubernetes lines,
``test_pasted_round6_progress.py`` progress, checkpoint and healthy lines."""

from __future__ import annotations

from pathlib import Path

from tests.parsers.util import assert_pasted

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


def test_each_pasted_line_gives_its_row(tmp_path: Path) -> None:
    """In one file, then each line alone in a file named as nothing in particular."""
    assert_pasted(tmp_path, "slurm-4261.out", JOB_OUTPUT)
