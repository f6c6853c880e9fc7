"""Lines users pasted in public threads that tormortem read as nothing, collected a second time
(2026-12-04, a new collection: 119 progress and checkpoint lines, 154 job-output failure
lines, 186 kernel, Slurm and Kubernetes lines), beside the row each must give now. The
signatures that read them cite the printing code and the thread (parsers/signatures/
trainers.toml, torch.toml, cuda.toml, launchers.toml, kernel.toml, k8s.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from parsers.joblog import JobLogParser
from tests.parsers.util import assert_pasted, explain_rows, parse

# (line as pasted, kind, code, category, iteration the row carries)
JOB_OUTPUT = [
    # ayoolaolafenwa/PixelLib#59 (tf.keras Progbar, the epoch's end): a batch of the epoch
    ("100/100 [==============================] - 262s 2s/step - batch: 49.5000 - size: 4.0000 - "
     "loss: 1.9837 - rpn_class_loss: 0.0468", "progress_bar", "None", "progress", 100),
    # tensorflow/tensorflow#44107 (a redraw, a warning glued behind it)
    ("23/28 [=======================>......] - ETA: 1s - loss: 3.0482 - sparse_categorical_"
     "accuracy: 0.0890WARNING:tensorflow:Can save best model only with val_sparse_categorical_"
     "crossentropy available, skipping.", "progress_bar", "None", "progress", 23),
    # huoyijie/AdvancedEAST#70
    ("Epoch 00006: val_loss improved from inf to 0.86316, saving model to model/weights_3T384."
     "006-0.863.h5", "ckpt_save_start", "None", "checkpoint", None),
    ("Epoch 00014: early stopping", "train_end", "done", "progress", None),
    # tensorflow/models#2980
    ("INFO:tensorflow:global step 1: loss = 79.3501 (57.126 sec/step)", "iteration", "None",
     "progress", 1),
    # armaanpriyadarshan/Training-a-Custom-TensorFlow-2.X-Object-Detector#6
    ("INFO:tensorflow:Step 200 per-step time 0.831s loss=1.192", "iteration", "None",
     "progress", 200),
    ("I0912 11:40:27.956218 139735407601536 model_lib_v2.py:652] Step 100 per-step time 0.813s "
     "loss=1.396", "iteration", "None", "progress", 100),
    # facebookresearch/detectron2#195, facebookresearch/maskrcnn-benchmark#825
    ("[11/01 11:27:04 d2.utils.events]: eta: 8:05:12  iter: 1259  total_loss: 1.012  loss_cls: "
     "0.714  loss_box_reg: 0.291  time: 0.3322  data_time: 0.0334  lr: 0.010000  max_mem: 3961M",
     "iteration", "None", "progress", 1259),
    ("2019-05-27 10:48:54,461 maskrcnn_benchmark.trainer INFO: eta: 0:17:37  iter: 87940  loss: "
     "0.6097 (0.9191)  loss_classifier: 0.1472 (0.3151)  time: 0.5063 (0.5132)  data: 0.0062 "
     "(0.0078)  lr: 0.000025  max mem: 4358", "iteration", "None", "progress", 87940),
    # open-mmlab/mmdetection#2672, #8654; open-mmlab/mmengine#155
    ("2020-05-08 18:56:16,649 - mmdet - INFO - Epoch [1][2400/7517]\tlr: 0.00125, eta: 4:33:09, "
     "time: 0.595, data_time: 0.032, memory: 6836, loss: 0.4890", "progress_bar", "None",
     "progress", 2400),
    ("2022-08-29 23:24:56,646 - mmdet - INFO - Saving checkpoint at 20 epochs",
     "ckpt_save_start", "None", "checkpoint", None),
    ("04/21 21:03:53 - mmengine - INFO - Epoch(train) [1][10/90]  lr: 1.000e-02  eta: 0:00:25  "
     "time: 0.010  data_time: 0.000  memory: 0  loss: 11.4723", "progress_bar", "None",
     "progress", 10),
    # facebookresearch/fairseq#514, #732
    ("| epoch 008 | loss 6.326 | nll_loss 5.193 | ppl 36.58 | wps 12876 | ups 4.9 | wpb 2578 | "
     "bsz 108 | num_updates 21896 | lr 0.000213706 | gnorm 1.201", "iteration", "None",
     "progress", 21896),
    ('{"epoch": 19, "valid_loss": "3.986", "valid_nll_loss": "2.283", "valid_ppl": "4.87", '
     '"valid_num_updates": "90000", "valid_best_loss": "3.98635"}', "iteration", "None",
     "progress", 90000),
    # karpathy/nanoGPT#178, #215
    ("step 250: train loss 1.5440, val loss 1.7220", "eval", "None", "progress", 250),
    ("saving checkpoint to out", "ckpt_save_start", "None", "checkpoint", None),
    # facebookresearch/mmf#870
    ("2021-04-12T20:19:17 | mmf.trainers.callbacks.logistics: progress: 100/22000, train/total_"
     "loss: 0.6858, max mem: 3788.0, experiment: run, epoch: 1, num_updates: 100",
     "iteration", "None", "progress", 100),
    ("2021-04-12T20:16:54 | mmf.trainers.core.training_loop: Starting training...",
     "train_start", "None", "progress", None),
    # Blaizzy/mlx-vlm#795; NVIDIA-NeMo/Automodel#3473; pytorch/elastic#97
    ("Iter 36: Train loss 4.040, Learning Rate 2.000e-08, It/sec 1.472, Tokens/sec 67.707, "
     "Trained Tokens 1656, Peak mem 5.094 GB", "iteration", "None", "progress", 36),
    ("2026-08-10 16:00:44 | INFO | root | step 8 | epoch 0 | loss 0.7839 | grad_norm 1.7024 | "
     "lr 1.00e-05 | mem 24.06 GiB", "iteration", "None", "progress", 8),
    ("Instance: [i-015067026ed8f10a3] Epoch: [0][1830/3125]   Time  0.139 ( 0.137)    Data  "
     "0.034 ( 0.034)    Loss 4.8472e+00 (5.0661e+00)", "progress_bar", "None", "progress", 1830),
    # pytorch/torchtitan#1287
    ("[rank0]:[titan] 2025-06-25 13:20:46,458 - root - INFO - Saving the checkpoint (or staging "
     "if async is enabled).", "ckpt_save_start", "None", "checkpoint", None),
    ("[rank0]:[titan] 2025-06-25 13:20:46,479 - root - INFO - Finished saving the checkpoint (or "
     "staging if async is enabled)in 0.02 seconds.", "ckpt_save_end", "None", "checkpoint", None),
    # NVIDIA/Megatron-LM#51; openai/improved-diffusion#36
    ("global rank 0 is loading checkpoint checkpoints/gpt2_345m/release/mp_rank_00/model_optim_"
     "rng.pt", "ckpt_load", "loading", "checkpoint", None),
    ("loading model from checkpoint: MAINMOD_70K/ema_0.9999_070000.pt...", "ckpt_load",
     "loading", "checkpoint", 70000),
    # axolotl-ai-cloud/axolotl#1613; meta-llama/llama-cookbook#428
    ("[2024-05-13 14:47:28,053] [INFO] [axolotl.train.log:61] [PID:123985] [RANK:0] Training "
     "Completed!!! Saving pre-trained model to ./qlora-out", "train_end", "done", "progress",
     None),
    ("max training steps reached, stopping training, total_train_steps:  6", "train_end", "done",
     "progress", None),
    # huggingface/transformers#36076: HF's head cut down to the stamp and its '>> '
    ("2025-02-07 15:29:09,695 >> Saving model checkpoint to data/tmp-checkpoint-pe8ry7n_      ",
     "ckpt_save_start", "None", "checkpoint", None),
    # uzh-rpg/RVT#40: Lightning's bar on an iterable without a length (tqdm's bar without a
    # total), and ModelCheckpoint(verbose=True) after a validation that saved nothing
    ("Epoch 2: : 115816it [7:03:13,  4.56it/s, loss=2.1, v_num=3hqp]", "progress_bar",
     "Epoch 2", "progress", 115816),
    ("Epoch 2, global step 400000: 'val/AP' was not in top 1", "eval", "None", "progress",
     400000),
]

# (line as pasted, kind, code, category): 154 job-output failure lines (109 threads)
FAILURES = [
    # lzhxmu/CPPO#6: ChildFailedError's summary without its header
    ("  exitcode  : -9 (pid: 14750)", "elastic_worker_failed", "-9", "user_code"),
    # NVIDIA/nvidia-resiliency-ext#18: torch 2.4+'s wording of the teardown
    ("W0227 17:39:41.936000 293814 site-packages/torch/distributed/elastic/multiprocessing/api.py"
     ":766] Closing process 293866 via signal SIGTERM", "elastic_teardown", "SIGTERM", "unknown"),
    # deepspeedai/DeepSpeed#3869
    ("[2023-07-04 17:31:27,755] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 953850",
     "elastic_teardown", "SIGKILL", "unknown"),
    ("[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['/usr/bin/python3', "
     "'-u', 'main.py', '--local_rank=0'] exits with return code = -9", "elastic_worker_failed",
     "-9", "user_code"),
    # NVIDIA/cudf#22130 (RMM's CUDA_TRY)
    ("RuntimeError: CUDA error at: /tmp/conda-bld-output/bld/rattler-build_librmm/work/cpp/src/"
     "cuda_stream_view.cpp:45: cudaErrorIllegalAddress an illegal memory access was encountered",
     "cuda_error", "an illegal memory access was encountered", "user_code"),
    # NVIDIA/nccl#473, NVIDIA/nccl-tests#6
    ("fastmoe: Test NCCL failure common.cu:777 'unhandled system error'", "nccl_error",
     "unhandled system error", "nccl_error"),
    ("NCCL failure common.cu:908 'unhandled cuda error'.", "nccl_error", "unhandled cuda error",
     "nccl_error"),
    # NVIDIA/flowtron#52: a device-side assert, per thread
    ("C:/cb/pytorch_1000000000000/work/aten/src/THC/THCTensorIndex.cu:218: block: [0,0,0], "
     "thread: [106,0,0] Assertion `srcIndex < srcSelectDimSize` failed.", "cuda_error",
     "device-side assert triggered", "user_code"),
    # hiyouga/LlamaFactory#5155
    ('safetensors_rust.SafetensorError: Error while serializing: IoError(Os { code: 28, kind: '
     'StorageFull, message: "No space left on device" })', "io_error", "no_space", "storage"),
    # open-mmlab/mmsegmentation#69, pytorch/pytorch#5962
    ("RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR", "cuda_error",
     "CUDNN_STATUS_INTERNAL_ERROR", "user_code"),
    ("RuntimeError: CUDNN_STATUS_INTERNAL_ERROR", "cuda_error", "CUDNN_STATUS_INTERNAL_ERROR",
     "user_code"),
    # open-mpi/ompi#2661
    ("mpirun noticed that process rank 0 with PID 21183 on node host01 exited on signal 9 "
     "(Killed).", "process_signal", "Killed", "unknown"),
    # coqui-ai/STT#2238 (jobacct_gather's memory enforcement)
    ("slurmstepd: error: Job 7518 exceeded memory limit (626359956 > 512000000), being killed",
     "oom_event", "memory_limit", "oom_host"),
    # hiyouga/LlamaFactory#1808
    ("RuntimeError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via "
     "c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer. "
     "This may indicate a possible application crash on rank 0 or a network set up issue.",
     "rendezvous_error", "store_connection_lost", "unknown"),
    # NVIDIA/Megatron-LM#343, facebookresearch/maskrcnn-benchmark#137
    ("RuntimeError: Address already in use", "rendezvous_error", "address_in_use", "user_code"),
    ("RuntimeError: Address already in use at /pytorch/torch/lib/THD/process_group/General.cpp:"
     "20", "rendezvous_error", "address_in_use", "user_code"),
    # OpenRLHF/OpenRLHF#621 (libmlx5's CQE dump behind Ray's prefix)
    ("(RayWorkerWrapper pid=92234, ip=172.19.24.110) mlx5: host_unknown: got completion with "
     "error: [repeated 2x across cluster]", "mlx5_error", "error_cqe", "network"),
    # WZMIAOMIAO/deep-learning-for-image-processing#240
    ("RuntimeError: DataLoader worker (pid(s) 18894, 18897) exited unexpectedly",
     "process_signal", "DataLoader worker exited", "user_code"),
    # modelscope/ms-swift#9443
    ("[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running "
     "collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape="
     "[195812480], TensorDtypes=BFloat16)", "python_exception", "RuntimeError", "user_code"),
]

KERNEL = [
    # NVIDIA/open-gpu-kernel-modules#789
    ("[  903.609564] NVRM: RmInitAdapter: Cannot initialize GSP firmware RM", "gpu_lost",
     "RmInitAdapter", "gpu_hardware"),
    ("[ 2052.745833] NVRM: gpuWaitForGfwBootComplete_TU102: failed to wait for GFW_BOOT: "
     "(progress 0x3)", "gpu_lost", "GFW_BOOT", "gpu_hardware"),
    # Bumblebee-Project/Bumblebee#722; ValveSoftware/SteamOS#209
    ("[87669.726589] NVRM: nvidia_frontend_open: minor 0, module->open() failed, error -5",
     "nvrm_error", "open_failed", "gpu_driver"),
    ("[  441.170986] NVRM: No NVIDIA graphics adapter found!", "gpu_lost", "no_adapter",
     "gpu_hardware"),
    # jamesstringer90/Easy-GPU-PV#276
    ("Error: nvmlDeviceGetHandleByIndex(): Unknown Error", "gpu_lost", "nvml", "gpu_hardware"),
    # Open-CAS/ocf#408
    ("Oct 11 05:39:13 chi412 kernel: NMI watchdog: Watchdog detected hard LOCKUP on cpu 79",
     "hung_task", "hard_lockup", "node_failure"),
    # NVIDIA/gpu-operator#610 (a zh_CN locale's month: no envelope, the message still read)
    ("11月 15 14:15:47 leon-NF5468M6 nv-fabricmanager[4177]: request to query NVSwitch device "
     "information from NVSwitch driver failed with error:WARNING Nothing to do "
     "[NV_WARN_NOTHING_TO_DO]", "nvlink_error", "fabricmanager", "nvlink"),
    ("Nov 15 14:15:47 leon-NF5468M6 systemd[1]: nvidia-fabricmanager.service: Control process "
     "exited, code=exited, status=1/FAILURE", "nvlink_error", "fabricmanager", "nvlink"),
    # data-infra/cube-studio#29
    ('Sep 18 03:19:01 ubuntu2404 nvidia-fabricmanager-start.sh[4753]: "/usr/bin/nv-fabricmanager'
     ' -c /usr/share/nvidia/nvswitch/fabricmanager.cfg" failed! Exit code: 1', "nvlink_error",
     "fabricmanager", "nvlink"),
]

DESCRIBE = [
    # hmcts/cnp-flux-config#28772; pachyderm/pachyderm#2213 (kubectl describe pod)
    ("      Reason:       OOMKilled", "pod_terminated", "OOMKilled", "oom_host"),
    ("      Reason:           CrashLoopBackOff", "pod_waiting", "CrashLoopBackOff", "unknown"),
    # derailed/k9s#174
    ("Message:            The node was low on resource: memory. Container proprietary-crawler "
     "was using 9402820Ki, which exceeds its request of 7G. ", "pod_evicted", "Evicted",
     "oom_host"),
]


@pytest.mark.parametrize(("name", "table"), [
    ("slurm-4242.out", [t[:4] for t in JOB_OUTPUT]), ("slurm-4243.out", FAILURES),
    ("kern.log", KERNEL), ("describe.txt", DESCRIBE)])
def test_each_pasted_line_gives_its_row(tmp_path: Path, name: str,
                                        table: list[tuple[str, str, str, str]]) -> None:
    """In one file, then each line alone in a file named as nothing in particular."""
    assert_pasted(tmp_path, name, table)


def test_steps_and_batches() -> None:
    """The step each row carries: a global step as ``iteration``, a batch of the epoch as a
    ``progress_bar`` (not the run's progress), a checkpoint's step from its file name."""
    text = "".join(t[0] + "\n" for t in JOB_OUTPUT)
    rows, _, acct = parse(JobLogParser, text, "slurm-4242.out")
    by_line = {r["line_no"]: r for r in rows}
    for i, (line, kind, _code, _cat, iteration) in enumerate(JOB_OUTPUT, 1):
        r = by_line[i]
        assert (r["kind"], r["iteration"]) == (kind, iteration), line
    assert acct.events == len(JOB_OUTPUT)


def test_per_step_times_are_milliseconds() -> None:
    """``sec/step``, ``per-step time``, detectron2's ``time:`` are seconds; rows hold ms."""
    text = (JOB_OUTPUT[4][0] + "\n" + JOB_OUTPUT[5][0] + "\n" + JOB_OUTPUT[7][0] + "\n")
    rows, _, _ = parse(JobLogParser, text, "slurm-1.out")
    assert [r["value"] for r in rows] == [pytest.approx(57126.0), pytest.approx(831.0),
                                         pytest.approx(332.2)]


def test_keras_metrics_and_a_non_improving_epoch_are_not_saves(tmp_path: Path) -> None:
    """ModelCheckpoint's 'did not improve' line saves nothing; an 'Epoch 1/100' header is no
    row either (the Progbar lines under it are)."""
    got = explain_rows(tmp_path, "slurm-2.out", ["Epoch 00010: val_loss did not improve from "
                                             "0.80084", "Epoch 1/100"])
    assert got == {}
