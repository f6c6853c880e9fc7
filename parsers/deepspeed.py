"""DeepSpeed engine progress and checkpoint lines inside a job's output: ``DeepSpeedMatcher``.

DeepSpeed logs through ``[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s]
%(message)s`` (deepspeed/utils/logging.py); ``log_dist`` adds ``[Rank N] ``. The job-log
parser strips the envelope (and takes its time); the matcher sees the message:

* ``[Rank 0] step=100, skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]`` (engine.py
  ``_report_progress``; old versions ``rank:0 step=...`` via logging.info) -> ``iteration``
  (iteration = step, value null: the line carries no step time).
* ``epoch=0/micro_step=40/global_step=10, RunningAvgSamplesPerSec=..., CurrSamplesPerSec=...``
  (utils/timer.py ThroughputTimer; old: ``0/20, RunningAvgSamplesPerSec=...``) ->
  ``progress_rate`` (iteration = global step, or the micro step of the old form: code says
  which; value = samples/s). Decision: a kind of its own, not ``iteration``: it repeats the
  step line's progress and the old form counts micro steps, so the decomposition keeps
  reading ``step=`` lines.
* Loss-scale overflow (``OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, ...``,
  ``Grad overflow on iteration N``) -> ``loss_scale_overflow`` (value = the scale tried): a
  skipped step, progress without a failure.
* Save: ``[Torch] Checkpoint global_step100 is about to be saved!`` (newer) / ``... is begin to
  save!`` (older, checkpoint_engine ``create``) and ``Saving model checkpoint: <path>``
  (engine ``_save_checkpoint``, the only start marker before the checkpoint engine existed)
  -> ``ckpt_save_start``; ``zero checkpoint saved <path>`` and ``[Torch] Checkpoint
  global_step100 is ready now!`` (``commit``) -> ``ckpt_save_end`` (code ``zero`` /
  ``commit``). One save may give several start and end rows: its span is the first start to
  the last end with the same iteration.
* Load: ``[Torch] Loading checkpoint from <path>...`` (newest: ``[Torch] Begin Load checkpoint
  from <path>...``) -> ``ckpt_load`` (one per file read).
* iteration comes from ``global_stepN`` in the tag or path (DeepSpeed's default tag), else null.
* ``[Torch] Saving/Saved/Loaded`` per-file lines and activation checkpointing info are NOISE.
"""

from __future__ import annotations

import re
from typing import ClassVar

from parsers.base import EVENT, NOISE, Emit, never_open

_STEP = re.compile(r"^(?:\[Rank (-?\d+)\] |rank:(\d+) )step=(\d+), skipped=\d+")
_GLOBAL_STEP = re.compile(r"global_step(\d+)")
_RANK = re.compile(r"^\[Rank (-?\d+)\] ")
#: utils/timer.py ThroughputTimer: ``epoch=0/micro_step=40/global_step=10, RunningAvg...``
#: (0.7+) and ``0/20, RunningAvgSamplesPerSec=`` / ``0/20, SamplesPerSec=`` (older)
_RATE = re.compile(r"(?:epoch=\d+/micro_step=(\d+)/global_step=(\d+)|^(\d+)/(\d+)), "
                   r"(?:RunningAvg)?SamplesPerSec=([0-9.]+)")
#: loss scaler (runtime/fp16/loss_scaler.py, zero/stage_1_and_2.py, stage3.py)
_OVERFLOW = ("OVERFLOW! Rank", "Overflow detected. Skipping step", "Grad overflow on iteration")
#: every line ``DeepSpeedMatcher._checkpoint`` claims holds one of these
_CKPT_TEXTS = tuple(re.escape(t) for t in (
    "[Torch] Checkpoint ", "Saving model checkpoint: ", "zero checkpoint saved ",
    "[Torch] Loading checkpoint from ", "[Torch] Begin Load checkpoint from "))
_OVERFLOW_SCALE = re.compile(r"Attempted loss scale: ([0-9.e+]+)")
_NOISE_HINTS = (
    "[Torch] Saving ", "[Torch] Saved ", "[Torch] Loaded checkpoint",
    "[Torch] End Load checkpoint",
    "Reducing dynamic loss scale from", "Activation Checkpointing Information",
    "----Partition Activations", "----contiguous Memory Checkpointing",
    "----Synchronization", "----Profiling time in checkpointing",
)


class DeepSpeedMatcher:
    """Recognises DeepSpeed engine lines (see module docstring)."""

    #: `` step=``: ``_STEP`` has a space before it (``[Rank 0] step=``, ``rank:0 step=``);
    #: ``step=`` alone let every ``global_step=`` / ``train/step=`` print into Python
    SIGNAL: ClassVar[tuple[str, ...]] = (
        " step=", "SamplesPerSec=", *_OVERFLOW, *_NOISE_HINTS)
    #: ``heckpoint`` makes a line a candidate only with one of the texts ``_checkpoint``
    #: tests for (parsers/relax.py)
    CHECKED: ClassVar[dict[str, tuple[str, ...]]] = {"heckpoint": _CKPT_TEXTS}
    SIGNAL_RE: ClassVar[tuple[str, ...]] = ()

    is_open = never_open

    format = "deepspeed"

    def match(self, text: str, line_no: int, emit: Emit) -> int | None:
        """EVENT/NOISE for a DeepSpeed line, None for anything else."""
        s = text.lstrip()
        if " step=" in s:
            m = _STEP.match(s)
            if m is not None:
                r = m.group(1) or m.group(2)
                rank = int(r) if r is not None and int(r) >= 0 else None
                emit(kind="iteration", iteration=int(m.group(3)), rank=rank, format=self.format)
                return EVENT
        if "SamplesPerSec=" in s:
            t = _RATE.search(s)
            if t is not None:
                gs, old = t.group(2), t.group(4)
                emit(kind="progress_rate", iteration=int(gs or old),
                     code="global_step" if gs else "micro_step", value=float(t.group(5)),
                     format=self.format)
                return EVENT
        if any(o in s for o in _OVERFLOW):
            sc = _OVERFLOW_SCALE.search(s)
            emit(kind="loss_scale_overflow", value=float(sc.group(1)) if sc else None,
                 format=self.format)
            return EVENT
        if "heckpoint" in s:
            r2 = self._checkpoint(s, emit)
            if r2 is not None:
                return r2
        if any(h in s for h in _NOISE_HINTS):
            return NOISE
        return None

    def finish(self, emit: Emit) -> None:
        """No multi-line state."""

    def _checkpoint(self, s: str, emit: Emit) -> int | None:
        kind = code = None
        if "[Torch] Checkpoint " in s:
            # rstrip: a pasted line can keep the spaces a terminal padded it with
            end = s.rstrip()
            if end.endswith(("is about to be saved!", "is begin to save!")):
                kind = "ckpt_save_start"
            elif end.endswith("is ready now!"):
                kind, code = "ckpt_save_end", "commit"
        elif "Saving model checkpoint: " in s:
            kind = "ckpt_save_start"
        elif s.startswith(("zero checkpoint saved ", "[Rank 0] zero checkpoint saved ")):
            kind, code = "ckpt_save_end", "zero"
        elif "[Torch] Loading checkpoint from " in s or "[Torch] Begin Load checkpoint from " in s:
            kind, code = "ckpt_load", "loading"
        if kind is None:
            return None
        g = _GLOBAL_STEP.search(s)
        rm = _RANK.match(s)
        rank = int(rm.group(1)) if rm is not None and int(rm.group(1)) >= 0 else None
        emit(kind=kind, code=code, iteration=int(g.group(1)) if g else None, rank=rank,
             format=self.format)
        return EVENT
