"""Megatron-LM lines in a job's output -> rows (parsers/megatron.py through JobLogParser).

Formats: NVIDIA/Megatron-LM megatron/training/training.py ``training_log`` (new, with the
``[%Y-%m-%d %H:%M:%S]`` stamp) and megatron/training.py (old, no stamp);
megatron/training/checkpointing.py and megatron/checkpointing.py (save/load prints);
megatron/core/timers.py (``(min, max) time across ranks (ms):``); ``print_datetime``.
"""

from __future__ import annotations

from parsers.joblog import JobLogParser
from tests.parsers.util import parse, pick

PATH = "logs/node017/slurm-4242.out"

# new training_log format (f" [{datetime.now().strftime('%Y-%m-%d %H:%M:%S')}]" + format strings)
NEW_ITER = (
    " [2024-05-01 12:00:00] iteration      100/  500000 | consumed samples:        12800 |"
    " elapsed time per iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 401.2 |"
    " learning rate: 1.000000E-04 | global batch size:   128 | lm loss: 5.123456E+00 |"
    " loss scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 |"
    " number of nan iterations:   0 |"
)
# old megatron/training.py training_log (no stamp)
OLD_ITER = (
    " iteration      101/  500000 | consumed samples:        12928 |"
    " elapsed time per iteration (ms): 1200.0 | learning rate: 1.000E-04 |"
    " global batch size:   128 | lm loss: 5.100000E+00 | loss scale: 1.0 |"
    " number of skipped iterations:   0 | number of nan iterations:   0 |"
)
# Megatron-DeepSpeed, as posted in argonne-lcf/Megatron-DeepSpeed notes (consumed tokens, TFLOPs)
MDS_ITER = (
    " iteration      199/  317892 | consumed samples:       152832 | consumed tokens:    625999872"
    " | elapsed time per iteration (ms): 14287.5 | learning rate: 2.407E-04 | global batch size:"
    "   768 | lm loss: 5.905366E+00 | loss scale: 8192.0 | actual seqlen:  4096 | number of skipped"
    " iterations:   0 | number of nan iterations:   0 | samples per second: 53.753 | tokens per"
    " gpu per second (tgs): 1146.733 | TFLOPs: 69.85 |"
)


def test_iteration_lines_new_old_and_megatron_deepspeed() -> None:
    rows, _, acct = parse(JobLogParser, "\n".join([NEW_ITER, OLD_ITER, MDS_ITER]) + "\n", PATH)
    assert pick(rows) == [
        {"ts": "2024-05-01T12:00:00Z", "host": "node017", "kind": "iteration", "job_id": "4242",
         "rank": None, "code": None, "iteration": 100, "value": 1234.5, "device": None},
        {"ts": "2024-05-01T12:00:00Z", "host": "node017", "kind": "iteration", "job_id": "4242",
         "rank": None, "code": None, "iteration": 101, "value": 1200.0, "device": None},
        {"ts": "2024-05-01T12:00:00Z", "host": "node017", "kind": "iteration", "job_id": "4242",
         "rank": None, "code": None, "iteration": 199, "value": 14287.5, "device": None},
    ]
    assert [r["ts_flag"] for r in rows] == ["assumed_tz", "inherited", "inherited"]
    assert [r["format"] for r in rows] == ["megatron"] * 3
    assert rows[0]["message"] is None  # progress rows keep no text (file/line_no locate it)
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (3, 3, 0, 0)


def test_checkpoint_save_and_load_variants() -> None:
    text = "\n".join([
        # old checkpointing.py: 'saving checkpoint at iteration {:7d} to {}' + success line
        "saving checkpoint at iteration     100 to /ckpt",
        "  successfully saved checkpoint at iteration     100 to /ckpt",
        # new checkpointing.py: stamped, '... in {ckpt_format} format', '[ t 1/8, p 1/1 ]'
        "[2024-05-01 12:10:00.123456] saving checkpoint at iteration     200 to /ckpt in torch_dist"
        " format",
        "  [2024-05-01 12:10:30.500000] scheduled an async checkpoint save at iteration     200 to"
        " /ckpt",
        "  [2024-05-01 12:11:00.000000] successfully saved checkpoint from iteration     200 to"
        " /ckpt [ t 1/8, p 1/1 ]",
        # load: ' loading checkpoint from {load_dir} at iteration {iteration}' and success line
        " loading checkpoint from /ckpt at iteration 200",
        "  successfully loaded checkpoint from /ckpt [ t 1/8, p 1/1 ] at iteration 200",
        # real log (Pai-Megatron-Patch run): release checkpoint, old '[ t 0, p 0 ]' wording
        " loading release checkpoint from /mnt/qwen-ckpts/Qwen2-0.5B-hf-to-mcore-te-tp1-pp1-new",
        " checkpoint version 3.0",
        "  successfully loaded checkpoint from"
        " /mnt/qwen-ckpts/Qwen2-0.5B-hf-to-mcore-te-tp1-pp1-new [ t 0, p 0 ] at iteration 0",
    ]) + "\n"
    rows, _, acct = parse(JobLogParser, text, PATH)
    got = [(r["kind"], r["iteration"], r["code"], r["ts"].isoformat() if r["ts"] else None,
            r["ts_flag"]) for r in rows]
    assert got == [
        ("ckpt_save_start", 100, None, None, "missing"),
        ("ckpt_save_end", 100, None, None, "missing"),
        ("ckpt_save_start", 200, None, "2024-05-01T12:10:00.123456+00:00", "assumed_tz"),
        ("ckpt_save_scheduled", 200, None, "2024-05-01T12:10:30.500000+00:00", "assumed_tz"),
        ("ckpt_save_end", 200, None, "2024-05-01T12:11:00+00:00", "assumed_tz"),
        ("ckpt_load", 200, "loading", "2024-05-01T12:11:00+00:00", "inherited"),
        ("ckpt_load", 200, "loaded", "2024-05-01T12:11:00+00:00", "inherited"),
        ("ckpt_load", None, "release", "2024-05-01T12:11:00+00:00", "inherited"),
        ("ckpt_load", 0, "loaded", "2024-05-01T12:11:00+00:00", "inherited"),
    ]
    assert (acct.events, acct.irrelevant, acct.unparsed) == (9, 1, 0)


def test_timers_print_datetime_and_setup_noise() -> None:
    # real lines: Megatron-LM run log (2023, load) and a 2026 run with logger-prefixed timers
    text = "\n".join([
        "(min, max) time across ranks (ms):",
        "    load-checkpoint ................................: (4542.10, 4542.10)",
        "[after model, optimizer, and learning rate scheduler are built] datetime: 2023-07-16"
        " 10:57:00 ",
        "> building train, validation, and test datasets ...",
        " > datasets target sizes (minimum size):",
        "    train:      10000",
        "done with setup ...",
        "training ...",
        "INFO:megatron.core.timers:(min, max) time across ranks (ms):",
        "    model-and-optimizer-setup ......................: (1020.90, 1022.97)",
        "    train/valid/test-data-iterators-setup ..........: (190.27, 292.00)",
        "Overwriting rerun_state_machine.current_iteration from -1 to 0...",
        "[before the start of training step] datetime: 2023-07-16 10:57:05.581210 ",
        # save_checkpoint_and_time -> timers.log(['save-checkpoint']) (max_only variant too)
        "(min, max) time across ranks (ms):",
        "    save-checkpoint ................................: (24895.07, 24895.13)",
        "max time across ranks (ms):",
        "    save-checkpoint ................................: 1200.50",
        "[after training is done] datetime: 2023-07-16 11:57:05 ",
        "[exiting program at iteration 500] datetime: 2023-07-16 11:58:00 ",
        # arguments dump (megatron/training/arguments.py _print_args)
        "------------------------ arguments ------------------------",
        "  accumulate_allreduce_grads_in_fp32 .............. False",
        "-------------------- end of arguments ---------------------",
        "",
    ]) + "\n"
    rows, _, acct = parse(JobLogParser, text, PATH)
    assert pick(rows, ("ts", "kind", "code", "iteration", "value")) == [
        {"ts": None, "kind": "ckpt_load_time", "code": "load-checkpoint", "iteration": None,
         "value": 4.5421},
        {"ts": "2023-07-16T10:57:05.581210Z", "kind": "train_start", "code": None,
         "iteration": None, "value": None},
        {"ts": "2023-07-16T10:57:05.581210Z", "kind": "ckpt_save_time", "code": "save-checkpoint",
         "iteration": None, "value": 24.89513},
        {"ts": "2023-07-16T10:57:05.581210Z", "kind": "ckpt_save_time", "code": "save-checkpoint",
         "iteration": None, "value": 1.2005},
        {"ts": "2023-07-16T11:57:05Z", "kind": "train_end", "code": "done", "iteration": None,
         "value": None},
        {"ts": "2023-07-16T11:58:00Z", "kind": "train_end", "code": "exit_iteration",
         "iteration": 500, "value": None},
    ]
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (23, 6, 17, 0)


def test_nan_checks() -> None:
    text = "\n".join([
        # megatron/core/distributed (grad buffer) assert, as it ends a traceback
        "AssertionError: Rank 5: found NaN in local grad norm in backward pass before data-parallel"
        " communication collective. Device: 5, node: hd02-gpu1-0056",
        # rerun_state_machine.validate_result, logger.error of the initial run
        "Unexpected result nan on rank 3 at iteration #1234 invocation #1 (message='found NaN in"
        " local forward loss calculation')",
        # rerun disabled: RuntimeError(full_message)
        "RuntimeError: Rank 2, node node018, device 2, iteration 77: Unexpected result inf"
        " (message='found Inf in local forward loss calculation')",
    ]) + "\n"
    rows, _, acct = parse(JobLogParser, text, PATH)
    nan = sorted((r for r in rows if r["kind"] == "nan_loss"), key=lambda r: r["line_no"])
    # the grad-norm assert is read by torch_dist (code nan_grad_norm), the others by megatron
    assert pick(nan, ("host", "rank", "code", "iteration", "device")) == [
        {"host": "hd02-gpu1-0056", "rank": 5, "code": "nan_grad_norm", "iteration": None,
         "device": "5"},
        {"host": "node017", "rank": 3, "code": "NaN", "iteration": 1234, "device": None},
        {"host": "node018", "rank": 2, "code": "Inf", "iteration": 77, "device": "2"},
    ]
    assert [r["format"] for r in nan] == ["torch", "megatron", "megatron"]
    assert acct.unparsed == 0 and acct.events == 3


def test_user_print_is_unparsed() -> None:
    rows, _, acct = parse(JobLogParser, "my custom metric 3.5\nEpoch finished\n", PATH)
    assert rows == []
    assert acct.unparsed == 2
