"""Round 6 of the pasted lines (``test_pasted_round6.py`` says what they are): progress and
checkpoint lines beside the row and step each gives, and the healthy lines of the same pastes,
which must give none."""

from __future__ import annotations

from pathlib import Path

from tests.parsers.util import assert_pasted, assert_steps, explain_alone, explain_rows

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
