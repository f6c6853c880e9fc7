"""DeepSpeed engine progress and checkpoint lines inside a job's output: ``DeepSpeedMatcher``.

DeepSpeed logs through ``[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s]
%(message)s`` (deepspeed/utils/logging.py); ``log_dist`` adds ``[Rank N] ``. The job-log
parser strips the envelope (and takes its time); the matcher sees the message:

* ``[Rank 0] step=100, skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]`` (engine.py
  ``_report_progress``; old versions ``rank:0 step=...`` via logging.info) -> ``iteration``
  (iteration = step, value null: the line carries no step time).
* ``epoch=0/micro_step=40/global_step=10, RunningAvgSamplesPerSec=..., CurrSamplesPerSec=...``
  (utils/timer.py ThroughputTimer; old: ``0/20, RunningAvgSamplesPerSec=...``) -> NOISE.
  Decision: it repeats the step line's progress, and samples/s cannot become ms/iteration
  without the batch size, so it adds no row.
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
* Loss-scale overflow messages, ``[Torch] Saving/Saved/Loaded`` per-file lines and activation
  checkpointing info are NOISE.
"""

from __future__ import annotations

import re

from parsers.base import EVENT, NOISE, Emit

_STEP = re.compile(r"^(?:\[Rank (-?\d+)\] |rank:(\d+) )step=(\d+), skipped=\d+")
_GLOBAL_STEP = re.compile(r"global_step(\d+)")
_RANK = re.compile(r"^\[Rank (-?\d+)\] ")
_NOISE_HINTS = (
    "RunningAvgSamplesPerSec=", "[Torch] Saving ", "[Torch] Saved ", "[Torch] Loaded checkpoint",
    "[Torch] End Load checkpoint",
    "Overflow detected. Skipping step.", "OVERFLOW! Rank", "Grad overflow on iteration",
    "Reducing dynamic loss scale from", "Activation Checkpointing Information",
    "----Partition Activations", "----contiguous Memory Checkpointing",
    "----Synchronization", "----Profiling time in checkpointing",
)


class DeepSpeedMatcher:
    """Recognises DeepSpeed engine lines (see module docstring)."""

    format = "deepspeed"

    def match(self, text: str, line_no: int, emit: Emit) -> int | None:
        """EVENT/NOISE for a DeepSpeed line, None for anything else."""
        s = text.lstrip()
        if "step=" in s:
            m = _STEP.match(s)
            if m is not None:
                r = m.group(1) or m.group(2)
                rank = int(r) if r is not None and int(r) >= 0 else None
                emit(kind="iteration", iteration=int(m.group(3)), rank=rank, format=self.format)
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
            if s.endswith(("is about to be saved!", "is begin to save!")):
                kind = "ckpt_save_start"
            elif s.endswith("is ready now!"):
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
