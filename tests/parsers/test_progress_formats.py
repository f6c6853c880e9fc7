"""Progress and checkpoint lines of trainers users paste that had no recogniser: torchtitan
(pytorch/torchtitan#1287, #2389 and the printing code cited in parsers/signatures/
progress.toml), DeepSpeed's per-rank load line (EleutherAI/gpt-neox#843)."""

from __future__ import annotations

import pytest

from parsers.joblog import JobLogParser
from tests.parsers.util import parse

# torchtitan/tools/logging.py: "[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s",
# torchrun's [rankN]: in front; metrics.py's line with and without its ANSI colours
TITAN = (
    "[rank0]:[titan] 2025-06-16 22:20:01,114 - root - INFO - Loading the checkpoint at step "
    "400.\n"
    "[rank0]:[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 410  loss:  6.1384  memory: "
    "49.66GiB(52.28%)  tps: 5,856  tflops: 339.12  mfu: 34.29%\n"
    "[rank0]:[titan] 2025-06-16 22:30:55,322 - root - INFO - \x1b[31mstep: 420  \x1b[32mloss:  "
    "6.1000  \x1b[33mstep_time:  0.5000  \x1b[34mtps: 6,012  per_device_tps: 751  \x1b[36m"
    "tflops: 348.20  \x1b[35mmfu: 35.21%\x1b[39m\n")


def test_torchtitan_lines() -> None:
    events, _, acct = parse(JobLogParser, TITAN, "slurm-31.out")
    rows = [(e["kind"], e["iteration"], e["value"], e["ts"].isoformat(), e["ts_flag"],
             e["rank"]) for e in events]
    assert rows == [
        ("ckpt_load", 400, None, "2025-06-16T22:20:01.114000+00:00", "assumed_tz", 0),
        ("iteration", 410, None, "2025-06-16T22:30:50.322000+00:00", "assumed_tz", 0),
        ("iteration", 420, pytest.approx(500.0), "2025-06-16T22:30:55.322000+00:00",
         "assumed_tz", 0)]
    assert acct.events == 3


def test_other_step_lines_are_not_torchtitan() -> None:
    """NeMo's 'global_step: 653 | reduced_train_loss:' and prose are not torchtitan steps."""
    text = ("a step: 5 of the recipe\n"
            "lr: 0.1 | global_step: 653 | reduced_train_loss: 2.586\n")
    events, _, _ = parse(JobLogParser, text, "slurm-32.out")
    assert [e for e in events if e.get("format") == "torchtitan"] == []


def test_deepspeed_rank_loading_line() -> None:
    text = ("[2023-03-24 03:46:41,106] [INFO] [engine.py:1551:_load_checkpoint] rank: 5 loading "
            "checkpoint: /ckpt/global_step80000/mp_rank_05_model_states.pt\n")
    events, _, _ = parse(JobLogParser, text, "slurm-33.out")
    assert [(e["kind"], e["iteration"]) for e in events] == [("ckpt_load", 80000)]


def test_a_record_glued_behind_a_tqdm_bar() -> None:
    """tqdm and the logger share stderr; a record printed right after a bar redraw sits on
    the bar's line with no newline between (huggingface/transformers#15401): the bar and the
    record are both read, as if a carriage return ended the bar."""
    text = (" 47%|█████████████▍               | 7000/14754 [33:22<36:36,  3.53it/s][INFO|"
            "trainer.py:2103] 2022-01-29 00:19:36,630 >> Saving model checkpoint to "
            "/tmp/debug_squad/checkpoint-7000\n")
    events, _, _ = parse(JobLogParser, text, "slurm-34.out")
    assert sorted((e["kind"], e["iteration"]) for e in events) == [
        ("ckpt_save_start", 7000), ("progress_bar", 7000)]
    # the same behind the last of a line of redraws (each begun with \r by tqdm's
    # status_printer): the record keeps its row and its own stamp
    text = "\r 47%|█████████████▍               | 6999/14754 [33:21<36:37,  3.53it/s]\r" + text
    events, _, _ = parse(JobLogParser, text, "slurm-34.out")
    assert sorted((e["kind"], e["iteration"], e["ts_flag"]) for e in events) == [
        ("ckpt_save_start", 7000, "assumed_tz"), ("progress_bar", 6999, "missing"),
        ("progress_bar", 7000, "missing")]


@pytest.mark.parametrize("line", [
    # pytorch/pytorch torch/distributed/elastic/agent/server/api.py, Python logging (<= 2.0)
    # and the klog-style header of 2.4+; torchx's Ray prefix (meta-pytorch/torchx#492)
    "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully "
    "finished. Waiting 300 seconds for other agents to finish.",
    "I0227 17:39:41.936000 293814 torch/distributed/elastic/agent/server/api.py:840] [default] "
    "worker group successfully finished. Waiting 300 seconds for other agents to finish.",
    "ray/0 (CommandActor pid=494377) INFO:torch.distributed.elastic.agent.server.api:[] worker "
    "group successfully finished. Waiting 300 seconds for other agents to finish.",
    # torchelastic 0.2 (pytorch/elastic#134)
    "[INFO] 2020-11-16 05:37:30,257 api: [default] All workers successfully finished.",
])
def test_torchrun_agent_success_is_the_end_of_training(line: str) -> None:
    events, _, _ = parse(JobLogParser, line + "\n", "slurm-34.out")
    assert [(e["kind"], e["code"]) for e in events] == [("train_end", "done")]


def test_nanogpt_and_nanochat_steps() -> None:
    # karpathy/nanoGPT train.py and karpathy/nanochat scripts/base_train.py (#147), as cited
    # in parsers/signatures/progress.toml
    text = ("iter 0: loss 10.9853, time 30728.83ms, mfu -100.00%\n"
            "iter 10: loss 4.2151, time 140.47ms, mfu 31.02%\n"
            "step 00004/21400 (0.02%) | loss: 8.893647 | lrm: 1.00 | dt: 989.44ms | tok/sec: "
            "529,882 | mfu: 74.13 | total time: 0.00m\n"
            "step 0: train loss 2.2365, val loss 1.9580\n")
    events, _, _ = parse(JobLogParser, text, "slurm-35.out")
    assert [(e["kind"], e["iteration"], e["value"], e["format"]) for e in events] == [
        ("iteration", 0, pytest.approx(30728.83), "nanogpt"),
        ("iteration", 10, pytest.approx(140.47), "nanogpt"),
        ("iteration", 4, pytest.approx(989.44), "nanochat"),
        # nanoGPT's eval line (parsers/signatures/trainers.toml): an eval at step 0, not a step
        ("eval", 0, None, "nanogpt")]


def test_fairseq_and_maxtext_lines() -> None:
    # facebookresearch/fairseq#2338 (train_inner, logging format of 0.10) and #940 ('| '
    # before 0.9); checkpoint_utils.py / trainer.py save and load lines; MaxText's metric
    # line (AI-Hypercomputer/maxtext#761). Printing code cited in progress.toml.
    text = (
        "2020-07-17 07:00:00 | INFO | fairseq.trainer | loaded checkpoint checkpoints/"
        "checkpoint_last.pt (epoch 1 @ 2000 updates)\n"
        "2020-07-17 07:11:02 | INFO | train_inner | epoch 001:   2800 / 160368 loss=9.255, "
        "ppl=611.12, wps=57.3, ups=0.04, wpb=1525.5, bsz=8, num_updates=2800, lr=0.000305, "
        "gnorm=1.206, train_wall=2523, wall=72521\n"
        "2020-07-17 08:00:12 | INFO | fairseq.checkpoint_utils | saved checkpoint checkpoints/"
        "checkpoint_1_3000.pt (epoch 1 @ 3000 updates, score 6.112) (writing took 12.42 "
        "seconds)\n"
        "| epoch 001:    450 / 1891 loss=11.521, nll_loss=10.881, ppl=1886.05, wps=52922, "
        "ups=0.5, wpb=104928, bsz=5325, num_updates=445, lr=0.000111, gnorm=1.738\n"
        "| epoch 010 | train loss 1.44 | train ppl 2.72 | s/checkpoint    7747\n"
        "completed step: 9, seconds: 1.341, TFLOP/s/device: 257.929, Tokens/s/device: "
        "36653.244, loss: 0.000\n")
    events, _, _ = parse(JobLogParser, text, "slurm-36.out")
    got = [(e["kind"], e["iteration"], e["value"], e["format"],
            e["ts"].isoformat() if e["ts"] else None) for e in events]
    assert got == [
        ("ckpt_load", 2000, None, "fairseq", "2020-07-17T07:00:00+00:00"),
        ("iteration", 2800, None, "fairseq", "2020-07-17T07:11:02+00:00"),
        ("ckpt_save_end", 3000, None, "fairseq", "2020-07-17T08:00:12+00:00"),
        ("iteration", 445, None, "fairseq", "2020-07-17T08:00:12+00:00"),
        ("iteration", 9, pytest.approx(1341.0), "maxtext", "2020-07-17T08:00:12+00:00")]


def test_composer_console_lines() -> None:
    # mosaicml/composer's ConsoleLogger as in its README and mosaicml/llm-foundry#117
    text = ("[batch=1/100]:\n"
            "\t Train LanguageCrossEntropy: 10.9736\n"
            "         Train Perplexity: 58312.0586\n"
            "[epoch=1][batch=2/100]:\n"
            "         Train time/batch: 1\n")
    events, _, acct = parse(JobLogParser, text, "slurm-37.out")
    assert [(e["kind"], e["iteration"], e["format"]) for e in events] == [
        ("iteration", 1, "composer"), ("iteration", 2, "composer")]
    assert (acct.events, acct.irrelevant, acct.unparsed) == (2, 3, 0)


def test_olmo_console_step_header() -> None:
    # allenai/OLMo olmo/train.py log_metrics_to_console's header, cited in progress.toml
    text = "[step=10/739328]\n    train/CrossEntropyLoss=10.87\n[step=20/739328,epoch=0]\n"
    events, _, _ = parse(JobLogParser, text, "slurm-38.out")
    assert [(e["kind"], e["iteration"], e["format"]) for e in events] == [
        ("iteration", 10, "olmo"), ("iteration", 20, "olmo")]


def test_gpt_neox_iteration_line() -> None:
    # EleutherAI/gpt-neox megatron/training.py training_log (pasted in deepspeedai/DeepSpeed#3742)
    text = (" samples/sec: 7.799 | iteration       34/   10000 | elapsed time per iteration (ms): "
            "4103.1 | learning rate: 2.111E-06 | approx flops per GPU: 27.4TFLOPS | lm_loss: "
            "1.023436E+01 | loss scale: 1024.0 | number of skipped iterations:   0 | number of "
            "nan iterations:   0 |\n")
    events, _, _ = parse(JobLogParser, text, "slurm-39.out")
    assert [(e["kind"], e["iteration"], e["value"]) for e in events] == [
        ("iteration", 34, pytest.approx(4103.1))]


def test_litgpt_step_line() -> None:
    # Lightning-AI/litgpt#1110; the step (optimizer steps) is the progress, not the iter
    text = ("Epoch 1 | iter 63 step 15 | loss train: 1.601, val: n/a | iter time: 98.20 ms\n"
            "Epoch 1 | iter 64 step 16 | loss train: 1.583, val: n/a | iter time: 402.11 ms "
            "(step)\n")
    events, _, _ = parse(JobLogParser, text, "slurm-40.out")
    assert [(e["kind"], e["iteration"]) for e in events] == [
        ("iteration", 15), ("iteration", 16)]


@pytest.mark.parametrize(("line", "kind", "code", "iteration"), [
    # pytorch/torchtitan#1287: start-up ends
    ("[rank0]:[titan] 2025-06-25 13:10:56,821 - root - INFO - Training starts at step 401.",
     "train_start", None, None),
    # Lightning-AI/pytorch-lightning#14428 (fit_loop.py) and callbacks/timer.py
    ("`Trainer.fit` stopped: `max_epochs=1` reached.", "train_end", "done", None),
    ("`Trainer.fit` stopped: `max_steps=100` reached.", "train_end", "done", None),
    ("Time limit reached. Elapsed time is 0:10:00. Signaling Trainer to stop.", "train_end",
     "exit_duration", None),
    # NVIDIA-NeMo/Speech#12284 (NeMo 2 async save), AI-Hypercomputer/ml-goodput-measurement#4
    # (Orbax CheckpointManager.save, absl log header)
    ("[NeMo I 2025-02-20 14:59:14 nemo_logging:393] **Async checkpoint save for step 10** "
     "(Checkpoints/x/checkpoints/model_name=0--val_loss=0.00-step=9-consumed_samples=1280.0-"
     "last.ckpt) finalized successfully.", "ckpt_save_end", None, 10),
    ("I0608 20:54:47.918725 123567287061632 checkpoint_manager.py:1512] [process=0] Saving "
     "checkpoint at step 19", "ckpt_save_start", None, 19),
    # facebookincubator/submitit job_environment.py
    ("submitit WARNING (2022-08-12 02:06:11,453) - Caught signal SIGUSR2 on learnfair0123: "
     "this job is preempted.", "job_preempt", "submitit", None),
    ("submitit WARNING (2022-08-12 02:06:11,453) - Caught signal SIGUSR2 on learnfair0123: "
     "this job is timed-out.", "job_time_limit", "submitit", None),
])
def test_lifecycle_lines(line: str, kind: str, code: str | None, iteration: int | None) -> None:
    events, _, _ = parse(JobLogParser, line + "\n", "slurm-41.out")
    assert [(e["kind"], e["code"], e["iteration"]) for e in events] == [(kind, code, iteration)]


def test_composer_logger_stamp_is_read() -> None:
    # llm-foundry's logging format (mosaicml/llm-foundry#884): '%(asctime)s: rank{r}[%(process)d]
    # [%(threadName)s]: %(levelname)s: %(name)s: %(message)s'
    text = ("2024-01-19 15:51:44,402: rank0[11406][MainThread]: INFO: composer.trainer.trainer: "
            "Run name: interactive-il0GeA\n[batch=1/10]:\n")
    events, _, _ = parse(JobLogParser, text, "slurm-42.out")
    assert [(e["kind"], e["ts"].isoformat(), e["ts_flag"]) for e in events] == [
        ("iteration", "2024-01-19T15:51:44.402000+00:00", "inherited")]


def test_torchtune_stdout_logger_step() -> None:
    # meta-pytorch/torchtune#1358 (StdoutLogger, metric_logging.py)
    text = ("Step 1 | loss:2.085338592529297 lr:2e-05 tokens_per_second_per_gpu:"
            "57.828881833956174 \nStep 2 | loss:1.9\nStep 3 of the recipe: loss:1\n")
    events, _, _ = parse(JobLogParser, text, "slurm-43.out")
    assert [(e["kind"], e["iteration"], e["format"]) for e in events] == [
        ("iteration", 1, "torchtune"), ("iteration", 2, "torchtune")]


def test_diffusers_checkpoints_and_tf_step_rate() -> None:
    # huggingface/diffusers examples/*/train_*.py (accelerate's save_state / load_state) and
    # TensorFlow's StepCounterHook, as cited in parsers/signatures/trainers.toml
    text = ("12/04/2024 10:00:00 - INFO - accelerate.accelerator - Saving current state to "
            "output/checkpoint-500\n"
            "12/04/2024 10:00:05 - INFO - __main__ - Saved state to output/checkpoint-500\n"
            "Resuming from checkpoint checkpoint-500\n"
            "INFO:tensorflow:global_step/sec: 0.0339311\n")
    events, _, _ = parse(JobLogParser, text, "slurm-36.out")
    assert [(e["kind"], e["iteration"], e["value"]) for e in events] == [
        ("ckpt_save_start", None, None), ("ckpt_save_end", 500, None),
        ("ckpt_load", 500, None), ("progress_rate", None, pytest.approx(0.0339311))]
