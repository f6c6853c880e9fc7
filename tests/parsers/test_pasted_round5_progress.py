"""Progress, checkpoint and lifecycle lines users pasted in public threads nobody here had
read, collected a fifth time (2026-12-05: 92 such lines and 30 noise lines from 82 threads of
44 projects), beside the row each must give now, with its step. The first block gave no row
(or no step) before this round; the rest, from threads new to the tests, already did and
stay so. The signatures (parsers/signatures/progress.toml, trainers.toml) and the parsers
that read them cite the printing code."""

from __future__ import annotations

from pathlib import Path

from parsers.joblog import JobLogParser
from tests.parsers.util import assert_pasted, assert_steps, parse

# (line as pasted, kind, code, category, the step the row carries); the comment names the
# thread
PROGRESS = [
    # hiyouga/LlamaFactory#774
    ('{"current_steps": 3200, "total_steps": 3235, "loss": 4.4671, "eval_loss": null, '
     '"predict_loss": null, "reward": null, "learning_rate": 1.4439610072863874e-08, "epoch": '
     '0.99, "percentage": 98.92, "elapsed_time": "5:13:22", "remaining_time": "0:03:25"}',
     "iteration", "None", "progress", 3200),
    # tflearn/tflearn#486
    ("Training Step: 8  | total loss: 2.03040 | time: 0.275s", "iteration", "None", "progress", 8),
    # axolotl-ai-cloud/axolotl#3148
    ("[2025-09-10 10:58:06,585] [INFO] [axolotl.train.execute_training:203] [PID:65109] "
     "[RANK:0] Starting trainer...", "train_start", "None", "progress", None),
    # PaddlePaddle/PaddleMIX#342
    ("[2023-12-05 19:18:10,207] [    INFO] - global step 95 / 22140, loss: 1.780640, "
     "avg_reader_cost: 0.00027 sec, avg_batch_cost: 0.67439 sec, avg_samples: 64.00000, ips: "
     "94.90068 sample/sec, max_mem_reserved: 26397 MB, max_mem_allocated: 24184 MB",
     "iteration", "None", "progress", 95),
    # pytorch/xla#4324
    ("| Training Device=xla:1/0 Epoch=1 Step=500 Loss=0.00223 Rate=553.79 GlobalRate=349.32 "
     "Time=01:53:18", "progress_bar", "None", "progress", 500),
    # keras-team/keras#8680
    ("1562/1562 [==============================] - 524s - loss: 1.0897 - acc: 0.6553 - "
     "val_loss: 0.9240 - val_acc: 0.7261", "progress_bar", "None", "progress", 1562),
    # keras-team/keras#2937
    ("50000/50000 [==============================] - 678s - loss: 1.7646 - acc: 0.3460 - "
     "val_loss: 1.3379 - val_acc: 0.5161", "progress_bar", "None", "progress", 50000),
    # huggingface/transformers#21482
    ("[2023-02-06 16:37:18,583] [INFO] [engine.py:3500:save_16bit_model] Saving model weights "
     "to bennyD/checkpoint-500/pytorch_model.bin", "ckpt_save_start", "16bit", "checkpoint", 500),
    # PaddlePaddle/PaddleNLP#1761
    ("{'loss': 0.1856, 'learning_rate': 4.5e-05, 'global_step': 150, 'epoch': 2.0}              "
     "                                                                                   ",
     "hf_log", "None", "progress", 150),
    # meta-pytorch/torchtune#2301
    ("Model checkpoint of size 4.66 GiB saved to /mnt/slurm/Llama3.3-70B-fft-output/epoch_0/ft-m"
     "odel-00003-of-00030.safetensors", "ckpt_save_end", "None", "checkpoint", None),
    # deepspeedai/DeepSpeedExamples#707
    ("***** Evaluating perplexity, Epoch 0/1 *****", "eval", "None", "progress", None),
    # QingyaoAi/Deep-Listwise-Context-Model-for-Ranking-Refinement#4
    ("global step 6000 learning rate 0.1937 step-time 0.67 perplexity 13.56",
     "iteration", "None", "progress", 6000),
    # awslabs/sockeye#694
    ("[INFO:sockeye.training] Epoch[1] Batch [6150]   Speed: 122.79 samples/sec 6308.76 "
     "tokens/sec 1.19 updates/sec     perplexity=15.737472",
     "progress_bar", "None", "progress", 6150),
    # gretelai/gretel-synthetics#7
    ("Train for 13 steps", "train_start", "None", "progress", None),
    # ymcui/Chinese-LLaMA-Alpaca#559
    ("[INFO|deepspeed.py:390] 2023-06-10 18:22:44,370 >> Attempting to resume from "
     "/content/drive/MyDrive/IMPORTANTS/LLM/Pre-train/VN-LLaMA-Lora-V1.0-PreTrain_02/checkpoint-"
     "2", "ckpt_load", "loading", "checkpoint", 2),
    # zai-org/ChatGLM3#1153
    ("Attempting to resume from /home/liuyawei/model/finetune_lora/web_continue/checkpoint-1000",
     "ckpt_load", "loading", "checkpoint", 1000),
    # InternLM/xtuner#1034
    ("05/11 14:58:00 - mmengine - INFO - Auto resumed from the latest checkpoint "
     "/root/train/lora_output/iter_300.pth.", "ckpt_load", "loading", "checkpoint", 300),
    ("05/11 14:58:00 - mmengine - INFO - Resume checkpoint from "
     "/root/train/lora_output/iter_300.pth", "ckpt_load", "loading", "checkpoint", 300),
    # giulio98/functional-diffusion-processes#6
    ("[2024-05-05 15:46:35,893][absl][INFO] - Saving checkpoint at step: 17",
     "ckpt_save_start", "None", "checkpoint", 17),
    ("[2024-05-05 15:46:35,899][absl][INFO] - Saved checkpoint at "
     "/home/corallo/PycharmProjects/functional-diffusion-processes/logs/inr_mnist/meta_0_17",
     "ckpt_save_end", "None", "checkpoint", None),
    # NVIDIA-NeMo/Speech#14259
    ("[NeMo W 2025-07-16 09:08:27 nemo_logging:405] There were no checkpoints found in "
     "checkpoint_dir or no checkpoint folder at checkpoint_dir :/workspace/logs_15_07_curated. "
     "Training from scratch.", "ckpt_missing", "nemo_autoresume", "storage", None),
    # hiyouga/LlamaFactory#2604
    ("[2024-02-26 15:59:51,885] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint "
     "global_step1139 is about to be saved!                                                     "
     "           ", "ckpt_save_start", "None", "checkpoint", 1139),
    # hiyouga/LlamaFactory#2793
    ("54<1:43:46,  1.31it/s][INFO|trainer.py:3067] 2024-03-15 16:13:12,728 >> Saving model "
     "checkpoint to model/qwen/1_8_sft_test/tmp-checkpoint-1000",
     "ckpt_save_start", "None", "checkpoint", 1000),
    # xuyuzhuang11/OneBit#6
    ("[2024-06-26 04:16:12,291] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model "
     "checkpoint: /ssd/name/code/OneBit/scripts/ckpt_Llama-2-7b-hf/checkpoint-5000/global_step50"
     "00/zero_pp_rank_0_mp_rank_00_model_states.pt", "ckpt_save_start", "None", "checkpoint", 5000),
    # huggingface/diffusers#2606
    ("03/08/2023 21:57:44 - INFO - __main__ - ***** Running training *****",
     "train_start", "None", "progress", None),
    # pytorch/torchtitan#2389
    ("[titan] 2026-02-24 19:46:17,508 - root - INFO - step:  4  loss:  7.62585  grad_norm: "
     "26.6250  memory: 66.91GiB(37.51%)  tps: 10,050  tflops: 314.71  mfu: 13.99%",
     "iteration", "None", "progress", 4),
    # NVIDIA-NeMo/Speech#10128
    ("Training epoch 0, iteration 0/9 | lr: 0.0006 | consumed_samples: 32 | global_batch_size: "
     "32 | global_step: 0 | reduced_train_loss: 11.02", "iteration", "None", "progress", 0),
    # NJU-LHRS/official-CMID#5
    ("2023-06-21 05:37:06,540 - mmseg - INFO - Iter [200/21600]\tlr: 9.998e-03, eta: 1:05:45, "
     "time: 0.141, data_time: 0.008, memory: 22159, decode.loss_ce: 1.2669, decode.acc_seg: "
     "11.8965, aux.loss_ce: 0.4904, aux.acc_seg: 16.9658, loss: 1.7573",
     "iteration", "None", "progress", 200),
    # tianzhi0549/FCOS#55
    ("2019-05-31 07:57:47,793 maskrcnn_benchmark.trainer INFO: eta: 5 days, 22:13:05  iter: 20  "
     "loss: 2.3235 (2.9695)  loss_cls: 0.5318 (0.5656)  loss_reg: 1.1120 (1.7430)  "
     "loss_centerness: 0.6524 (0.6609)  time: 0.7022 (0.7111)  data: 0.4336 (0.4301)  lr: "
     "0.000833  max mem: 5004", "iteration", "None", "progress", 20),
    # huggingface/transformers#14531
    ("[2021-11-26 03:07:16,494] [INFO] [logging.py:69:log_dist] [Rank 0] step=2000, "
     "skipped=1995, lr=[0.001, 0.001], mom=[0.0, 0.0]", "iteration", "None", "progress", 2000),
    # meta-llama/llama-cookbook#206
    ("Training Epoch: 2/3, step 49/50 completed (loss: 1.035962462425232): "
     "100%|█████████████████████████████████████████████████████████████████████████████████████"
     "███████████████████████████████████████████████| 50/50 [09:01<00:00, 10.82s/it]",
     "progress_bar",
     "Training Epoch: 2/3, step 49/50 completed (loss: 1.035962462425232)",
     "progress", 50),
    # deepspeedai/Megatron-DeepSpeed#14
    (" loading checkpoint from /hf/Megatron-DeepSpeed-master/data/1B3-PP4-TP4-Meg at iteration 1",
     "ckpt_load", "loading", "checkpoint", 1),
    # allenai/OLMo#692
    ("2024-08-06 09:59:26.181 intern-studio-160750:0  olmo.train:908  INFO    "
     "[step=1/739328,epoch=0]", "iteration", "None", "progress", 1),
    # open-mmlab/mmsegmentation#3003
    ("05/10 12:17:19 - mmengine - INFO - Iter(train) [    350/1520000]  lr: 9.9997e-03  eta: 20 "
     "days, 15:54:48  time: 1.1427  data_time: 0.2034  memory: 17238  loss: 1.9884  "
     "decode.loss_sem_p: 0.1065  decode.loss_sem_i: 0.5748  decode.loss_bd: 0.6427  "
     "decode.loss_sem_bd: 0.6645  decode.acc_seg: 95.0817", "iteration", "None", "progress", 350),
    # NVIDIA/Megatron-LM#314
    ("saving checkpoint at iteration     400 to customer_scripts/checkpoints/3b",
     "ckpt_save_start", "None", "checkpoint", 400),
    # ultralytics/ultralytics#7653
    ("    31/1000      6.73G      1.235     0.5911       1.14         11        640: "
     "100%|██████████| 16/16 [00:05<00:00,  2.83it/s]",
     "progress_bar",
     "31/1000      6.73G      1.235     0.5911       1.14         11        640",
     "progress", 16),
    # invoke-ai/InvokeAI#1162
    ("> `Trainer.fit` stopped: `max_steps=100` reached.", "train_end", "done", "progress", None),
    # huggingface/nanotron#390
    ("10/17/2025 16:31:56 [INFO|DP=0|PP=0|TP=0]: iteration: 327281 / 378950 | consumed_tokens: "
     "85.8G | elapsed_time_per_iteration_ms: 11.5K | tokens_per_sec: 22.8K | "
     "tokens_per_sec_per_gpu: 11.4K | global_batch_size: 64 | lm_loss: 2.38 | lr: 1e-05 | "
     "model_tflops_per_gpu: 38.3 | hardware_tflops_per_gpu: 38.3 | grad_norm: 1.25",
     "iteration", "None", "progress", 327281),
    # hiyouga/LlamaFactory#1860
    ("[2023-12-13 12:48:44,500] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model "
     "checkpoint: saves/Yi-34B/lora/RL_Med_Yi-34B-200K_202",
     "ckpt_save_start", "None", "checkpoint", None),
    # huggingface/transformers#27820
    ("Saving model checkpoint to /scratch/sanitycheck-20231211/tmp-checkpoint-10",
     "ckpt_save_start", "None", "checkpoint", 10),
    # Topdu/OpenOCR#9
    ("[2024/08/06 18:03:31] openrec INFO: epoch: [1/2], global_step: 100, lr: 0.000005, loss: "
     "69.376022, avg_reader_cost: 0.00971 s, avg_batch_cost: 0.18023 s, avg_samples: 64.0, ips: "
     "355.10891 samples/s, eta: 0:32:33", "iteration", "None", "progress", 100),
    # prism-oncology/novae#27
    ("Epoch 9: 100%|██████████| 195/195 [01:58<00:00,  1.64it/s, train/loss_step=3.860, "
     "train/entropy=0.591, train/loss_epoch=3.950]", "progress_bar", "Epoch 9", "progress", 195),
]

# lines of the same pastes that carry no progress: none may give a progress or checkpoint row
NOISE = [
    # deepspeedai/DeepSpeed#1825, argonne-lcf/Megatron-DeepSpeed#63, NVIDIA/Megatron-LM#314
    "[2022-03-11 02:05:56,969] [INFO] [config.py:1062:print]   zero_enabled ................. True",
    "  [2024-10-13 10:39:13,696] [INFO] [logging.py:96:log_dist] [Rank 0] time (ms) | "
    "fwd_microstep: 4631.17 | bwd_microstep: 15589.38 | bwd_inner_microstep: 14105.76 | "
    "bwd_allreduce_microstep: 1483.58 | step_microstep: 423.28",
    "    save-checkpoint ................................: (383764.98, 383765.08)",
    # allenai/OLMo#692, rowanz/r2c#43, ultralytics/ultralytics#7653
    "    train/CrossEntropyLoss=12.18",
    "Epoch     2: reducing learning rate of group 0 to 1.0000e-04.",
    "                   all        722       1444      0.939      0.927      0.967      0.551",
    # NVIDIA-NeMo/Speech#7878, huggingface/transformers#27820, tloen/alpaca-lora#188
    "GPU available: True (cuda), used: True",
    "Trainer.model is not a `PreTrainedModel`, only saving its state dict.",
    "trainable params: 4194304 || all params: 6742609920 || trainable%: 0.06220594176090199",
]


def test_each_pasted_line_gives_its_row(tmp_path: Path) -> None:
    """In one file, then each line alone in a file named as nothing in particular."""
    assert_pasted(tmp_path, "slurm-4255.out", [t[:4] for t in PROGRESS])


def test_steps() -> None:
    """The step each row carries (a batch of the epoch as a progress_bar's)."""
    assert_steps(PROGRESS, "slurm-4255.out")


def test_noise_gives_no_progress_row() -> None:
    """The pastes' config dumps, timers, metric and table lines stay without such a row."""
    text = "".join(t + "\n" for t in NOISE)
    rows, _, _ = parse(JobLogParser, text, "slurm-4256.out")
    kinds = {"iteration", "progress_bar", "progress_rate", "hf_log", "eval", "train_start",
             "train_end", "ckpt_save_start", "ckpt_save_end", "ckpt_load", "ckpt_missing"}
    assert [r for r in rows if r["kind"] in kinds] == []
