"""Signature rows' numbers: an iteration row's value is milliseconds per iteration.

NeMo 2's ProgressPrinter (NVIDIA/NeMo nemo/lightning/pytorch/callbacks/progress_printer.py,
``train_step_timing in s: 1.299``) and Megatron-DeepSpeed's pipeline engine
(microsoft/DeepSpeed deepspeed/runtime/pipe/engine.py, ``iter time (s): 2.704``) print
seconds; their signatures scale them (``value_scale = 1000``), so t* comes from the step time
the framework measured, not from stamps (a probe's NeMo lines, printed 1.5 ms apart, made
t* 0.002 s).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from parsers.joblog import JobLogParser
from parsers.signature_table import SignatureError, load_file
from tests.parsers.util import parse


def test_seconds_become_milliseconds() -> None:
    text = (
        # NeMo v2.4.0 progress_printer.py, behind kubectl logs --timestamps
        "2025-06-22T22:23:19.46104482Z Training epoch 0, iteration 652/999 | lr: 0.0003 | "
        "consumed_samples: 167168 | global_batch_size: 256 | global_step: 653 | "
        "reduced_train_loss: 2.586 | train_step_timing in s: 1.299\n"
        # the same printer when a metric is missing: no timing field, no value
        "2025-06-22T22:23:20.758114321Z Training epoch 0, iteration 653/999 | lr: 0.0003 | "
        "global_batch_size: 256 | global_step: 654 | reduced_train_loss: 2.619\n"
        # Megatron-DeepSpeed pipe engine
        "steps: 8200 loss: 5.3803 iter time (s): 2.704 samples/sec: 94.667\n")
    events, _, _ = parse(JobLogParser, text, "train.log")
    rows = [(e["kind"], e["iteration"], e["value"]) for e in events]
    # NeMo's global_step is the run's step ('iteration' restarts at 0 every epoch)
    assert rows == [("iteration", 653, pytest.approx(1299.0)), ("iteration", 654, None),
                    ("iteration", 8200, pytest.approx(2704.0))]


def test_nemo_progress_across_epochs_is_the_global_step() -> None:
    """NeMo 2's printer counts 'iteration' within the epoch (progress_printer.py); a second
    epoch's first line read as iteration 0 sent progress backwards (pasted in
    NVIDIA-NeMo threads: 'Training epoch 1, iteration 0/999 | ... | global_step: 19')."""
    text = ("Training epoch 0, iteration 18/19 | lr: 3e-05 | global_batch_size: 8 | "
            "global_step: 19 | reduced_train_loss: 2.1 | train_step_timing in s: 0.5\n"
            "Training epoch 1, iteration 0/19 | lr: 3e-05 | global_batch_size: 8 | "
            "global_step: 20 | reduced_train_loss: 2.0 | train_step_timing in s: 0.5\n")
    events, _, _ = parse(JobLogParser, text, "train.log")
    assert [e["iteration"] for e in events] == [19, 20]


def test_value_scale_must_be_a_positive_number(tmp_path: Path) -> None:
    f = tmp_path / "x.toml"
    f.write_text("[[signature]]\nid = 'a'\nkind = 'iteration'\npattern = 'step (?P<s>\\\\d+)'\n"
                 "value = 's'\nvalue_scale = 0\n")
    with pytest.raises(SignatureError, match="value_scale must be a positive number"):
        load_file(f, "x.toml")
