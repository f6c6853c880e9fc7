"""DeepSpeed lines in a job's output -> rows (parsers/deepspeed.py through JobLogParser).

Envelope: deepspeed/utils/logging.py ``[%(asctime)s] [%(levelname)s]
[%(filename)s:%(lineno)d:%(funcName)s] %(message)s``; ``log_dist`` adds ``[Rank N] ``.
Messages: runtime/engine.py ``_report_progress`` (step=...), utils/timer.py ThroughputTimer,
runtime/checkpoint_engine/torch_checkpoint_engine.py ([Torch] ...), engine.py
``_save_checkpoint`` / ``_save_zero_checkpoint``.
"""

from __future__ import annotations

from parsers.joblog import JobLogParser
from tests.parsers.util import parse, pick

PATH = "node003/slurm-77.out"


def test_step_timer_and_overflow_lines() -> None:
    # real lines, as posted in a 2023-11 fine-tuning log (DeepSpeed 0.12, zero stage 2)
    text = "\n".join([
        "[2023-11-07 01:55:08,040] [INFO] [fused_optimizer.py:348:_update_scale] Reducing dynamic"
        " loss scale from 8192.0 to 4096.0",
        "[2023-11-07 01:55:08,040] [INFO] [logging.py:96:log_dist] [Rank 0] Overflow detected."
        " Skipping step. Attempted loss scale: 8192.0, reducing to 4096.0",
        "[2023-11-07 01:55:23,711] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=4,"
        " lr=[4.99804827338393e-05, 4.99804827338393e-05], mom=[(0.9, 0.95), (0.9, 0.95)]",
        "[2023-11-07 01:55:23,714] [INFO] [timer.py:260:stop] epoch=0/micro_step=40/global_step=10,"
        " RunningAvgSamplesPerSec=25.025771473496132, CurrSamplesPerSec=25.704280480541442,"
        " MemAllocated=4.32GB, MaxMemAllocated=38.49GB",
        # older ThroughputTimer wording (DeepSpeed 0.7, 2022 CSCS example README)
        "[2022-08-29 06:58:56,176] [INFO] [timer.py:198:stop] 0/20, RunningAvgSamplesPerSec"
        "=232.7340551694273, CurrSamplesPerSec=227.48090316379353, MemAllocated=0.36GB,"
        " MaxMemAllocated=15.06GB",
    ]) + "\n"
    rows, _, acct = parse(JobLogParser, text, PATH)
    # the overflow line is a loss_scale_overflow (value = the scale tried; "Reducing dynamic loss
    # scale" repeats it and stays NOISE); ThroughputTimer lines are progress_rate rows (iteration
    # = global step, or the micro step of the old "0/20" form: code says which; value =
    # RunningAvgSamplesPerSec)
    assert pick(rows) == [
        {"ts": "2023-11-07T01:55:08.040000Z", "host": "node003", "kind": "loss_scale_overflow",
         "job_id": "77", "rank": None, "code": None, "iteration": None, "value": 8192.0,
         "device": None},
        {"ts": "2023-11-07T01:55:23.711000Z", "host": "node003", "kind": "iteration",
         "job_id": "77", "rank": 0, "code": None, "iteration": 10, "value": None, "device": None},
        {"ts": "2023-11-07T01:55:23.714000Z", "host": "node003", "kind": "progress_rate",
         "job_id": "77", "rank": None, "code": "global_step", "iteration": 10,
         "value": 25.025771473496132, "device": None},
        {"ts": "2022-08-29T06:58:56.176000Z", "host": "node003", "kind": "progress_rate",
         "job_id": "77", "rank": None, "code": "micro_step", "iteration": 20,
         "value": 232.7340551694273, "device": None},
    ]
    step = rows[1]
    assert step["ts_flag"] == "assumed_tz" and step["format"] == "deepspeed"
    assert step["message"] is None  # progress rows keep no text (file/line_no locate it)
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (5, 4, 1, 0)


def test_checkpoint_save_and_load() -> None:
    text = "\n".join([
        # real (2023-08 log): checkpoint engine create() via log_dist
        "[2023-08-02 00:41:17,937] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint"
        " global_step10 is about to be saved!",
        # engine._save_checkpoint log_dist(f'Saving model checkpoint: {save_path}')
        "[2023-08-02 00:41:17,940] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model"
        " checkpoint: /ckpt/global_step10/mp_rank_00_model_states.pt",
        # TorchCheckpointEngine.save logger.info
        "[2023-08-02 00:41:17,941] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Saving"
        " /ckpt/global_step10/mp_rank_00_model_states.pt...",
        "[2023-08-02 00:41:20,112] [INFO] [torch_checkpoint_engine.py:23:save] [Torch] Saved"
        " /ckpt/global_step10/mp_rank_00_model_states.pt.",
        # engine._save_zero_checkpoint logger.info('zero checkpoint saved {}')
        "[2023-08-02 00:41:25,500] [INFO] [engine.py:3285:_save_zero_checkpoint] zero checkpoint"
        " saved /ckpt/global_step10/zero_pp_rank_0_mp_rank_00_optim_states.pt",
        # TorchCheckpointEngine.commit
        "[2023-08-02 00:41:25,610] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch]"
        " Checkpoint global_step10 is ready now!",
        # TorchCheckpointEngine.load logger.info
        "[2023-08-02 01:10:00,000] [INFO] [torch_checkpoint_engine.py:27:load] [Torch] Loading"
        " checkpoint from /ckpt/global_step10/mp_rank_00_model_states.pt...",
        "[2023-08-02 01:10:03,000] [INFO] [torch_checkpoint_engine.py:29:load] [Torch] Loaded"
        " checkpoint from /ckpt/global_step10/mp_rank_00_model_states.pt.",
    ]) + "\n"
    rows, _, acct = parse(JobLogParser, text, PATH)
    assert pick(rows, ("ts", "kind", "rank", "code", "iteration")) == [
        {"ts": "2023-08-02T00:41:17.937000Z", "kind": "ckpt_save_start", "rank": 0, "code": None,
         "iteration": 10},
        {"ts": "2023-08-02T00:41:17.940000Z", "kind": "ckpt_save_start", "rank": 0, "code": None,
         "iteration": 10},
        {"ts": "2023-08-02T00:41:25.500000Z", "kind": "ckpt_save_end", "rank": None,
         "code": "zero", "iteration": 10},
        {"ts": "2023-08-02T00:41:25.610000Z", "kind": "ckpt_save_end", "rank": None,
         "code": "commit", "iteration": 10},
        {"ts": "2023-08-02T01:10:00Z", "kind": "ckpt_load", "rank": None, "code": "loading",
         "iteration": 10},
    ]
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (8, 5, 3, 0)


def test_unknown_info_line_with_deepspeed_envelope_is_unparsed_text() -> None:
    # a DeepSpeed WARNING nobody classifies stays visible as UNPARSED
    text = ("[2023-11-07 01:50:00,000] [WARNING] [stage3.py:1850:step] 4 pytorch allocator cache"
            " flushes since last step. this happens when there is high memory pressure\n")
    rows, _, acct = parse(JobLogParser, text, PATH)
    assert rows == [] and acct.unparsed == 1


def test_unknown_info_line_with_deepspeed_envelope_is_noise() -> None:
    # real (2024-04 Megatron-DeepSpeed run on Aurora): activation checkpointing info
    text = ("[2024-04-19 13:24:58,072] [INFO] [checkpointing.py:540:forward] Activation"
            " Checkpointing Information\n"
            "[2024-04-19 13:24:58,073] [INFO] [config.py:1000:print] DeepSpeedEngine"
            " configuration:\n")
    rows, _, acct = parse(JobLogParser, text, PATH)
    assert rows == [] and (acct.irrelevant, acct.unparsed) == (2, 0)
