"""Megatron-LM progress, checkpoint and NaN lines inside a job's output: ``MegatronMatcher``.

Formats (NVIDIA/Megatron-LM; old = megatron/training.py + megatron/checkpointing.py, new =
megatron/training/training.py + megatron/training/checkpointing.py, also Megatron-DeepSpeed):

* ``training_log``: ``[' [%Y-%m-%d %H:%M:%S]'] iteration {:8d}/{:8d} | consumed samples: ...
  | elapsed time per iteration (ms): {:.1f} | ...`` (the stamp only in newer versions) ->
  ``iteration`` (iteration, value = ms per iteration). The job-log parser takes the bulk of
  these lines vectorised (joblog_fast.py); this matcher handles the rest.
* ``save_checkpoint``: ``saving checkpoint at iteration {:7d} to {dir}[ in {fmt} format]``
  -> ``ckpt_save_start``; ``successfully saved checkpoint at|from iteration {:7d} to {dir}
  [ t 1/8, p 1/1 ]`` (and ``... saved local checkpoint from iteration``) -> ``ckpt_save_end``;
  ``scheduled an async checkpoint save at iteration {:7d}`` -> ``ckpt_save_scheduled`` (async
  saves: the blocking part ends here, the write finishes at ``successfully saved``).
* ``load_checkpoint``: `` loading checkpoint from {dir} at iteration {n}`` /
  `` loading release checkpoint from {dir}`` / ``successfully loaded checkpoint from {dir}
  [ t .., p .. ] at iteration {n}`` -> ``ckpt_load`` (code ``loading`` / ``loaded``).
* timers (megatron/core/timers.py): ``(min, max) time across ranks (ms):`` or ``max time
  across ranks (ms):`` then ``    name ....: (min, max)`` / ``: max``. ``save-checkpoint`` ->
  ``ckpt_save_time``, ``load-checkpoint`` -> ``ckpt_load_time``; value = the *max* across ranks
  in **seconds** (the printed ms / 1000: a save blocks until the slowest rank is done).
* ``print_datetime``: ``[before the start of training step] datetime: ...`` -> ``train_start``;
  ``[after training is done] datetime: ...`` -> ``train_end`` (code ``done``);
  ``[exiting program after receiving SIGTERM.]`` / ``[exiting program at iteration N]`` /
  ``[exiting program after M minutes]`` -> ``train_end`` (code ``exit_signal`` /
  ``exit_iteration`` / ``exit_duration``); other stamps are NOISE (the job-log parser takes
  their time as the line's timestamp).
* NaN/Inf checks: ``Rank 3: found NaN in local forward loss calculation. Device: 3, node: x``
  (and ``... grad norm in backward pass ...``), rerun state machine: ``Unexpected result nan on
  rank 3 at iteration #12 invocation #1 (message='found NaN in local forward loss
  calculation')`` and ``Rank 3, node x, device 3, iteration 12: Unexpected result nan
  (message='...')`` -> ``nan_loss`` (code NaN or Inf). When such text is an exception's last
  line (``AssertionError: ...``) the row is emitted and None returned, so the torch
  traceback matcher still sees the line -- except the grad-norm assert, which torch_dist
  itself turns into ``nan_loss`` (code ``nan_grad_norm``; one row, not two).
* ``validation loss at iteration N | ...`` -> ``eval`` (progress, not a training step);
  the old one-line timers ``time (ms) | ... | save-checkpoint: X`` -> ``ckpt_save_time`` /
  ``ckpt_load_time``; ``WARNING: could not find the metadata file <dir>/latest_checkpointed_
  iteration.txt`` -> ``ckpt_missing`` (benign at a first start; after a restart it means the
  run started over: the rule table gives it a weak storage hint).
* Setup / argument dump lines are NOISE (see ``_NOISE_*``).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from parsers.base import EVENT, NOISE, Emit, never_open

ITERATION = re.compile(r"^\s*iteration\s+(\d+)/\s*(\d+) \|")
ELAPSED = re.compile(r"elapsed time per iteration \(ms\): ([0-9]+(?:\.[0-9]+)?|nan|inf) \|")
_SAVE_START = re.compile(r"^\s*saving checkpoint at iteration\s+(\d+) to (\S+)")
_SAVE_END = re.compile(
    r"^\s*[Ss]uccessfully saved (?:local )?checkpoint (?:at|from) iteration\s+(\d+)")
_SAVE_SCHED = re.compile(r"^\s*scheduled an async checkpoint save at iteration\s+(\d+)")
_LOADING = re.compile(
    r"^\s*loading (?:release |distributed |local )?checkpoint from \S+(?: at iteration (\d+))?")
_LOADED = re.compile(r"^\s*successfully loaded checkpoint from .*? at iteration (\d+)")
_NUM = r"(?:\d+(?:\.\d*)?|\.\d+)"  # a number, not a lone "." (float() refuses it)
_TIMER = re.compile(rf"^\s+([\w/.\-]+(?: [\w/.\-]+)*) \.*: \(?({_NUM})(?:, ({_NUM})\))?\s*$")
_DATETIME = re.compile(r"^\[([^\]]+)\] datetime[:=] ?\d{4}-")
_ARG = re.compile(r"^\s+\w+ \.{3,} ")
#: old timers (megatron/timers.py before core): ``time (ms) | forward: 1.0 | save-checkpoint: 2.0``
_OLD_TIMER = re.compile(r"\| (save|load)-checkpoint: ([0-9.]+)")
_EVAL = re.compile(r"^\s*validation loss at (?:iteration (\d+)|the end of training)")
_EXIT_PLAIN = re.compile(r"^\s*exiting program at iteration (\d+)")
_MISSING = re.compile(r"could not find the metadata file (\S+)")
_NAN = re.compile(r"found (NaN|Inf) in local")
_UNEXPECTED = re.compile(r"Unexpected result (\S+?) (?:on rank (\d+) )?(?:at iteration #(\d+))?")
_RANK = re.compile(r"\bRank (\d+)\b")
_NODE = re.compile(r"\bnode:? ([^\s,]+?)(?:[,.]?\s|[,.]?$)")
_DEVICE = re.compile(r"\b[Dd]evice:? (\d+)")
_ITER_HASH = re.compile(r"\biteration #?(\d+)")
_EXC_PREFIX = re.compile(r"^\w+(?:Error|Exception): ")
_TARGET_SIZE = re.compile(r"^\s+(?:train|validation|test):\s+\d+$")

_NOISE_PREFIXES = (
    "(min, max) time across ranks (ms):", "max time across ranks (ms):",
    "time to initialize megatron (seconds):", "done with setup ...", "training ...",
    "using world size:", "using torch.", "setting number of micro-batches",
    "compiling and loading fused kernels", "done with compiling and loading fused kernels",
    "initializing torch distributed", "setting tensorboard", "checkpoint version",
    "could not find arguments in the checkpoint", "Evaluating on ",
    "Evaluating iter ", "setting training iterations to",
    "Overwriting rerun_state_machine.current_iteration", "Number of parameters in ",
    "skipping training (--skip-train is on)", "Storing distributed optimizer sharded state",
    "------------------------ arguments ------------------------",
    "-------------------- end of arguments ---------------------",
)
_NOISE_CONTAINS = ("] (after ", ") memory (MB) | allocated:")


class MegatronMatcher:
    """Recognises Megatron-LM lines (see module docstring)."""

    #: the literals of every line it claims, events and noise (parsers.message)
    SIGNAL: ClassVar[tuple[str, ...]] = (
        "iteration", "datetime", "(min, max)", "max time", "time (ms)",
        "validation loss", "exiting program", "could not find the metadata file",
        "will not load any checkpoints", "....", "..: ", "found NaN", "found Inf",
        "Unexpected result", "] (after ", ") memory (MB) | allocated:",
        *(p.strip() for p in _NOISE_PREFIXES))
    #: ``heckpoint`` makes a line a candidate only with one of ``_checkpoint``'s patterns
    #: (parsers/relax.py): a torch ``.../utils/checkpoint.py: UserWarning`` stays out of
    #: Python; every other rule here has an anchor of its own
    CHECKED: ClassVar[dict[str, tuple[str, ...]]] = {"heckpoint": tuple(
        p.pattern for p in (_SAVE_START, _SAVE_END, _SAVE_SCHED, _LOADED, _LOADING))}
    SIGNAL_RE: ClassVar[tuple[str, ...]] = (
        # "> building ..." at the start of the message (after a prefix ending in ':' or ']'),
        # not a shell redirection inside another program's line ("cmd > /dev/null")
        r"(?:^|[:\]])\s*> ", r"(?:^|[:\]])\s*>$", r"(?:^|[\s:\]])-+\s*$",
        r"(?:train|validation|test):\s+\d+\s*$")

    is_open = never_open

    format = "megatron"

    def match(self, text: str, line_no: int, emit: Emit) -> int | None:
        """EVENT/NOISE for a Megatron line, None for anything else."""
        s = text.lstrip()
        if not s:
            return None
        c = s[0]
        if c == "i" and s.startswith("iteration"):
            return self._iteration(s, emit)
        if "heckpoint" in s:
            r = self._checkpoint(s, emit)
            if r is not None:
                return r
        if c == "[":
            m = _DATETIME.match(s)
            if m is not None:
                return self._datetime(m.group(1), emit)
        if c == ">" or s.startswith(("(min, max)", "max time")):
            return NOISE
        if c == "t" and s.startswith("time (ms)"):
            t = _OLD_TIMER.search(s)
            if t is None:
                return NOISE
            kind = "ckpt_save_time" if t.group(1) == "save" else "ckpt_load_time"
            emit(kind=kind, value=round(float(t.group(2)) / 1000.0, 6),
                 code=t.group(1) + "-checkpoint", format=self.format)
            return EVENT
        if c == "v" and s.startswith("validation loss at "):
            e = _EVAL.match(s)
            if e is not None:
                emit(kind="eval", iteration=int(e.group(1)) if e.group(1) else None,
                     format=self.format)
                return EVENT
        if c == "e" and s.startswith("exiting program at iteration"):
            x = _EXIT_PLAIN.match(s)
            if x is not None:
                emit(kind="train_end", code="exit_iteration", iteration=int(x.group(1)),
                     format=self.format)
                return EVENT
        if s.startswith("will not load any checkpoints and will start from random"):
            emit(kind="ckpt_missing", code="metadata", format=self.format)
            return EVENT
        if "could not find the metadata file" in s:
            mm = _MISSING.search(s)
            emit(kind="ckpt_missing", code="metadata", device=mm.group(1) if mm else None,
                 format=self.format)
            return EVENT
        if text[:1] == " " and (" ...." in s or "..: " in s):
            m = _TIMER.match(text)
            if m is not None:
                return self._timer(m, emit)
            if _ARG.match(text):
                return NOISE
        if "found " in s and ("NaN" in s or "Inf" in s) and _NAN.search(s):
            return self._nan(s, emit, None)
        if "Unexpected result" in s:
            m2 = _UNEXPECTED.search(s)
            if m2 is not None:
                return self._nan(s, emit, m2)
        if s.startswith(_NOISE_PREFIXES) or any(x in s for x in _NOISE_CONTAINS):
            return NOISE
        if c == "-" and s.rstrip("-") == "":
            return NOISE
        if _TARGET_SIZE.match(text):
            return NOISE
        return None

    def finish(self, emit: Emit) -> None:
        """No multi-line state (timer lines are recognised on their own)."""

    def _iteration(self, s: str, emit: Emit) -> int | None:
        m = ITERATION.match(s)
        if m is None:
            return None
        v = ELAPSED.search(s)
        emit(kind="iteration", iteration=int(m.group(1)),
             value=float(v.group(1)) if v else None, message=s, format=self.format)
        return EVENT

    def _checkpoint(self, s: str, emit: Emit) -> int | None:
        f: dict[str, Any] = {"format": self.format}
        m = _SAVE_START.match(s)
        if m is not None:
            emit(kind="ckpt_save_start", iteration=int(m.group(1)), **f)
            return EVENT
        m = _SAVE_END.match(s)
        if m is not None:
            emit(kind="ckpt_save_end", iteration=int(m.group(1)), **f)
            return EVENT
        m = _SAVE_SCHED.match(s)
        if m is not None:
            emit(kind="ckpt_save_scheduled", iteration=int(m.group(1)), **f)
            return EVENT
        m = _LOADED.match(s)
        if m is not None:
            emit(kind="ckpt_load", iteration=int(m.group(1)), code="loaded", **f)
            return EVENT
        m = _LOADING.match(s)
        if m is not None:
            it = m.group(1)
            emit(kind="ckpt_load", iteration=int(it) if it else None,
                 code="loading" if it or "release" not in s else "release", **f)
            return EVENT
        return None

    def _datetime(self, label: str, emit: Emit) -> int:
        if label == "before the start of training step":
            emit(kind="train_start", format=self.format)
            return EVENT
        code = None
        if label == "after training is done":
            code = "done"
        elif label.startswith("exiting program after receiving SIG"):
            code = "exit_signal"
        elif label.startswith("exiting program at iteration"):
            code = "exit_iteration"
        elif label.startswith("exiting program after"):
            code = "exit_duration"
        if code is None:
            return NOISE
        it = _ITER_HASH.search(label)
        emit(kind="train_end", code=code, iteration=int(it.group(1)) if it else None,
             format=self.format)
        return EVENT

    def _timer(self, m: re.Match[str], emit: Emit) -> int:
        name = m.group(1)
        kind = {"save-checkpoint": "ckpt_save_time", "load-checkpoint": "ckpt_load_time"}.get(name)
        if kind is None:
            return NOISE
        mx = m.group(3) or m.group(2)
        emit(kind=kind, value=round(float(mx) / 1000.0, 6), code=name, format=self.format)
        return EVENT

    def _nan(self, s: str, emit: Emit, um: re.Match[str] | None) -> int | None:
        exc = _EXC_PREFIX.match(s) is not None
        if exc and "found NaN in local grad norm" in s:
            return None  # torch_dist's traceback matcher reads this one (torch_errors.py)
        if um is None and "Unexpected result" in s:
            um = _UNEXPECTED.search(s)
        fields: dict[str, Any] = {"kind": "nan_loss", "format": self.format}
        nm = _NAN.search(s)
        if nm is not None:
            fields["code"] = nm.group(1)
        elif um is not None:
            fields["code"] = "Inf" if "inf" in um.group(1).lower() else "NaN"
        rank = (um.group(2) if um is not None and um.group(2) else None)
        if rank is None:
            rm = _RANK.search(s)
            rank = rm.group(1) if rm else None
        if rank is not None:
            fields["rank"] = int(rank)
        it = um.group(3) if um is not None and um.group(3) else None
        if it is None:
            im = _ITER_HASH.search(s)
            it = im.group(1) if im else None
        if it is not None:
            fields["iteration"] = int(it)
        node = _NODE.search(s)
        if node is not None:
            fields["host"] = node.group(1)
        dev = _DEVICE.search(s)
        if dev is not None:
            fields["device"] = dev.group(1)
        emit(**fields)
        return None if exc else EVENT
