"""Hugging Face Trainer lines inside a job's output: ``HfTrainerMatcher``.

transformers' ``Trainer`` (src/transformers/trainer.py, trainer_callback.py) prints:

* the ``logs`` dict of ``Trainer.log`` through ``ProgressCallback.on_log`` as ``str(dict)``:
  ``{'loss': 2.3456, 'grad_norm': 1.23, 'learning_rate': 4.5e-05, 'epoch': 0.12}`` ->
  ``hf_log`` (value = loss; the dict has no step, so iteration is null, unless a fork put
  one in: PaddleNLP's ``'global_step': N``, ms-swift's ``'global_step/max_steps': 'N/M'``);
  the final
  ``{'train_runtime': 1234.5, 'train_samples_per_second': ..., 'train_loss': ..., 'epoch': 3.0}``
  -> ``train_end`` (code ``train_runtime``, value = train_runtime seconds).
* ``Saving model checkpoint to out/checkpoint-500`` (logger.info) -> ``ckpt_save_start``
  (iteration from ``checkpoint-N``; newer versions may save to ``tmp-checkpoint-xxxx`` first:
  iteration null).
* ``  Continuing training from global step 500`` -> ``ckpt_load`` (iteration 500).
* ``Training completed. Do not forget to share your model ...`` -> ``train_end`` (code
  ``completed``).
* ``***** Running training *****`` and its ``  Num examples = ...`` lines, ``***** Running
  Evaluation *****``, files written inside a checkpoint -> NOISE.
* tqdm bars (``  5%|▌         | 100/2000 [01:23<26:15,  1.21it/s]``, tqdm/std.py
  ``format_meter``; Lightning and NeMo put ``Epoch 3: `` before them) -> ``progress_bar``
  (iteration = n, value = total, code = the bar's description; no message, like an
  iteration row: the redraws are the bulk of the log). Decision: a kind of its own,
  not ``iteration``: the Trainer's training and evaluation bars are both description-less and
  carry no timestamp, so the decomposition does not read them. tqdm redraws with ``\\r`` and
  the job-log parser splits such lines and judges each update.
* ``Model weights saved in <dir>/checkpoint-N/...`` -> ``ckpt_save_end`` (code ``weights``);
  eval dicts (``{'eval_loss': ...}``) -> ``eval``.
"""

from __future__ import annotations

import re
from typing import ClassVar

from parsers.base import EVENT, NOISE, Emit, never_open

_NUM = r"(?:np\.float\d+\()?'?(-?[0-9.]+(?:[eE][-+]?\d+)?|nan|inf|-inf)"
_LOSS = re.compile(r"^\{'loss': " + _NUM)
#: the step some Trainer forks put in the logged dict: PaddleNLP's ``'global_step': 150``,
#: ms-swift's ``'global_step/max_steps': '12/94'`` (transformers' own dict has none)
_DICT_STEP = re.compile(r"'global_step(?:': |/max_steps': ')(\d+)\b")
_RUNTIME = re.compile(r"^\{'train_runtime': " + _NUM)
_CKPT_STEP = re.compile(r"checkpoint-(\d+)")
_CONTINUE = re.compile(r"^\s*Continuing training from global step (\d+)")
_EVAL = re.compile(r"^\{'eval_(?:loss|runtime|[a-z_]+)': " + _NUM)
#: tqdm's format_meter (tqdm/std.py): ``[desc: ]NN%|bar| n/total [elapsed<remaining, rate]``
TQDM_FIELDS = re.compile(r"(?:^|\s|:)(\d{1,3})%\|[^|]*\|\s*(\d+(?:\.\d+)?)([kMGT]?)/"
                         r"(\d+(?:\.\d+)?)[kMGT]? \[")
TQDM = re.compile(r"^(?:[^|]*?: ?)?\s*\d{1,3}%\|[^|]*\|\s*[\d.]+[kMGT]?/[\d.]+[kMGT]? \[")
_NOISE_STARTS = (
    "***** Running ", "  Num examples = ", "  Num Epochs = ", "  Instantaneous batch size",
    "  Total train batch size", "  Gradient Accumulation steps = ", "  Total optimization steps",
    "  Number of trainable parameters = ", "  Batch size = ", "  Continuing training from",
    "  Will skip the first ", "Configuration saved in ", "Model weights saved in ",
    "tokenizer config file saved in ", "Special tokens file saved in ",
    "Deleting older checkpoint [", "chat template saved in ", "Generation config file saved in ",
    "Saving model checkpoint to ", "Training completed.",
)


_SCALE = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def _bar_desc(text: str, end: int) -> str | None:
    """A bar's description (``Epoch 3``, ``Validation DataLoader 0``), if it has one."""
    d = text[:end].strip().rstrip(":").strip()
    return d[:80] or None


def _float(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


class HfTrainerMatcher:
    """Recognises Hugging Face Trainer lines (see module docstring)."""

    SIGNAL: ClassVar[tuple[str, ...]] = (
        "{'loss': ", "{'train_runtime': ", "{'eval_", "Saving model checkpoint to ",
        "Model weights saved in ", "Training completed.", "Continuing training from",
        "%|", *(p.strip() for p in _NOISE_STARTS))
    SIGNAL_RE: ClassVar[tuple[str, ...]] = ()

    is_open = never_open

    format = "hf_trainer"

    def match(self, text: str, line_no: int, emit: Emit) -> int | None:
        """EVENT/NOISE for a Trainer line, None for anything else."""
        c = text[:1]
        if c == "{":
            m = _LOSS.match(text)
            if m is not None:
                st = _DICT_STEP.search(text)
                emit(kind="hf_log", value=_float(m.group(1)),
                     iteration=int(st.group(1)) if st else None, format=self.format)
                return EVENT
            m = _RUNTIME.match(text)
            if m is not None:
                emit(kind="train_end", code="train_runtime", value=_float(m.group(1)),
                     format=self.format)
                return EVENT
            m = _EVAL.match(text)
            if m is not None:
                emit(kind="eval", value=_float(m.group(1)), format=self.format)
                return EVENT
        if text.startswith("Saving model checkpoint to "):
            g = _CKPT_STEP.search(text)
            emit(kind="ckpt_save_start", iteration=int(g.group(1)) if g else None,
                 format=self.format)
            return EVENT
        if text.startswith("Model weights saved in "):
            g = _CKPT_STEP.search(text)
            emit(kind="ckpt_save_end", code="weights", iteration=int(g.group(1)) if g else None,
                 format=self.format)
            return EVENT
        if text.startswith("Training completed."):
            emit(kind="train_end", code="completed", format=self.format)
            return EVENT
        if "Continuing training from global step" in text:
            m = _CONTINUE.match(text)
            if m is not None:
                emit(kind="ckpt_load", iteration=int(m.group(1)), format=self.format)
                return EVENT
        if text.startswith(_NOISE_STARTS):
            return NOISE
        if "%|" in text:
            t = TQDM_FIELDS.search(text)
            if t is not None:
                n = float(t.group(2)) * _SCALE.get(t.group(3), 1)
                emit(kind="progress_bar", iteration=int(n), value=float(t.group(4)),
                     code=_bar_desc(text, t.start()), format="tqdm")
                return EVENT
        return None

    def finish(self, emit: Emit) -> None:
        """No multi-line state."""
