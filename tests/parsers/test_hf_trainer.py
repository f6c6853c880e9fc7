"""Hugging Face Trainer lines in a job's output -> rows (parsers/hf_trainer.py via JobLogParser).

Formats: transformers src/transformers/trainer.py (logger.info messages), trainer_callback.py
``ProgressCallback.on_log`` (``str(logs)``), the examples' logging format
``[%(levelname)s|%(filename)s:%(lineno)s] %(asctime)s >> %(message)s``, tqdm bars.
"""

from __future__ import annotations

from parsers.joblog import JobLogParser
from tests.parsers.util import parse, pick

PATH = "gpu-worker-3/job-555.out"


def test_trainer_run() -> None:
    text = "\n".join([
        # trainer.py _inner_training_loop logger.info lines, examples' format
        "[INFO|trainer.py:2078] 2024-05-01 12:00:00,123 >> ***** Running training *****",
        "[INFO|trainer.py:2079] 2024-05-01 12:00:00,123 >>   Num examples = 10,000",
        "[INFO|trainer.py:2086] 2024-05-01 12:00:00,124 >>   Total optimization steps = 2,000",
        "[INFO|trainer.py:2100] 2024-05-01 12:00:00,125 >>   Continuing training from global"
        " step 500",
        # ProgressCallback.on_log: str(logs)
        "{'loss': 2.3456, 'grad_norm': 1.23, 'learning_rate': 4.5e-05, 'epoch': 0.12}",
        # real (transformers issue #36076): eval dict and the checkpoint save line
        "{'eval_loss': 0.7353992462158203, 'eval_runtime': 132.7399, 'eval_samples_per_second':"
        " 80.39, 'eval_steps_per_second': 10.05, 'epoch': 0.03}",
        "[INFO|trainer.py:3850] 2025-02-07 15:29:09,695 >> Saving model checkpoint to"
        " out/checkpoint-600",
        "[INFO|configuration_utils.py:420] 2025-02-07 15:29:09,701 >> Configuration saved in"
        " out/checkpoint-600/config.json",
        "[INFO|trainer.py:3850] 2025-02-07 15:30:09,695 >> Saving model checkpoint to"
        " data/tmp-checkpoint-pe8ry7n_",
        # logger.info("\n\nTraining completed. Do not forget ...\n\n"): the text after the
        # envelope starts with two newlines, so it lands on its own line
        "[INFO|trainer.py:2501] 2025-02-07 16:00:00,001 >> ",
        "",
        "Training completed. Do not forget to share your model on huggingface.co/models =)",
        "",
        "",
        "{'train_runtime': 1234.5678, 'train_samples_per_second': 8.1, 'train_steps_per_second':"
        " 1.62, 'train_loss': 2.1, 'epoch': 3.0}",
    ]) + "\n"
    rows, _, acct = parse(JobLogParser, text, PATH)
    assert pick(rows, ("ts", "host", "kind", "job_id", "code", "iteration", "value")) == [
        {"ts": "2024-05-01T12:00:00.123000Z", "host": "gpu-worker-3", "kind": "train_start",
         "job_id": "555", "code": None, "iteration": None, "value": None},
        {"ts": "2024-05-01T12:00:00.125000Z", "host": "gpu-worker-3", "kind": "ckpt_load",
         "job_id": "555", "code": None, "iteration": 500, "value": None},
        {"ts": "2024-05-01T12:00:00.125000Z", "host": "gpu-worker-3", "kind": "hf_log",
         "job_id": "555", "code": None, "iteration": None, "value": 2.3456},
        # the eval dict is an eval row (value = eval_loss), its time inherited like hf_log's
        {"ts": "2024-05-01T12:00:00.125000Z", "host": "gpu-worker-3", "kind": "eval",
         "job_id": "555", "code": None, "iteration": None, "value": 0.7353992462158203},
        {"ts": "2025-02-07T15:29:09.695000Z", "host": "gpu-worker-3", "kind": "ckpt_save_start",
         "job_id": "555", "code": None, "iteration": 600, "value": None},
        {"ts": "2025-02-07T15:30:09.695000Z", "host": "gpu-worker-3", "kind": "ckpt_save_start",
         "job_id": "555", "code": None, "iteration": None, "value": None},
        {"ts": "2025-02-07T16:00:00.001000Z", "host": "gpu-worker-3", "kind": "train_end",
         "job_id": "555", "code": "completed", "iteration": None, "value": None},
        {"ts": "2025-02-07T16:00:00.001000Z", "host": "gpu-worker-3", "kind": "train_end",
         "job_id": "555", "code": "train_runtime", "iteration": None, "value": 1234.5678},
    ]
    assert [r["ts_flag"] for r in rows] == ["assumed_tz", "assumed_tz", "inherited",
                                            "inherited", "assumed_tz", "assumed_tz",
                                            "inherited", "inherited"]
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (15, 8, 7, 0)


def test_tqdm_carriage_returns() -> None:
    # tqdm redraws the bar with \r; a log dict written by tqdm.write can share the line
    bar = "\r".join([
        "  5%|▌         | 100/2000 [01:23<26:15,  1.21it/s]",
        "  5%|▌         | 101/2000 [01:24<26:14,  1.21it/s]",
        "{'loss': 1.9, 'grad_norm': 0.8, 'learning_rate': 4e-05, 'epoch': 0.15}",
        "  5%|▌         | 102/2000 [01:25<26:13,  1.21it/s]",
    ])
    text = bar + "\n" + "\r".join([
        " 10%|█         | 200/2000 [02:46<24:55,  1.20it/s]",
        " 10%|█         | 201/2000 [02:47<24:54,  1.20it/s]",
    ]) + "\n" + "Map: 100%|██████████| 1000/1000 [00:00<00:00, 9000.00 examples/s]\n"
    rows, _, acct = parse(JobLogParser, text, PATH)
    # every carriage-return part is judged: each bar redraw is a progress_bar row (iteration =
    # n, value = total, code = the bar's description), the log dict between them an hf_log row
    assert pick(rows, ("kind", "code", "iteration", "value", "line_no")) == [
        {"kind": "progress_bar", "code": None, "iteration": 100, "value": 2000.0, "line_no": 1},
        {"kind": "progress_bar", "code": None, "iteration": 101, "value": 2000.0, "line_no": 1},
        {"kind": "hf_log", "code": None, "iteration": None, "value": 1.9, "line_no": 1},
        {"kind": "progress_bar", "code": None, "iteration": 102, "value": 2000.0, "line_no": 1},
        {"kind": "progress_bar", "code": None, "iteration": 200, "value": 2000.0, "line_no": 2},
        {"kind": "progress_bar", "code": None, "iteration": 201, "value": 2000.0, "line_no": 2},
        {"kind": "progress_bar", "code": "Map", "iteration": 1000, "value": 1000.0, "line_no": 3},
    ]
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (3, 3, 0, 0)
