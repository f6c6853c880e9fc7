"""What the campaign process records (times are seconds since ``Settings.epoch``) and the sink
interface the log writers implement."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np


@dataclass
class Fault:
    time: float
    category: str
    node: str | None  #: faulty node (None: no single node at fault)
    gpu: int | None  #: local GPU index on that node
    rank: int | None  #: global rank of that GPU (or of the first rank of the node)
    state: str  #: scheduler end state (FAILED, NODE_FAIL, ...)
    exit_code: str  #: sacct ExitCode
    requeue: bool  #: the next attempt is a requeue of the same job id
    detect_s: float  #: fault -> attempt end (drawn from the category's hang distribution)
    in_startup: bool = False


@dataclass
class Attempt:
    index: int
    job_id: str
    restart: int  #: how many times this job id ran before (Slurm requeue count)
    submit: float
    start: float
    nodes: list[str]
    start_iteration: int  #: iteration loaded from the checkpoint (0: fresh start)
    loaded_checkpoint: bool
    planned_startup_s: float
    startup_s: float = 0.0
    train_begin: float | None = None  #: first iteration begins
    end: float = 0.0
    state: str = "RUNNING"
    exit_code: str = "0:0"
    last_iteration: int = 0
    last_iteration_end: float | None = None
    last_progress: float | None = None  #: last completed iteration or completed save
    iter_s: float = 0.0  #: completed iterations (surviving + lost)
    ckpt_save_s: float = 0.0  #: completed periodic saves
    saves: int = 0
    lost_s: float = 0.0
    lost_iterations: int = 0
    hang_s: float = 0.0
    tail_s: float = 0.0
    fault: Fault | None = None
    final: bool = False


@dataclass
class SlowEpisode:
    start: float
    end: float
    rho: float
    category: str
    node: str | None
    extra_s: float = 0.0  #: step time added by this episode (surviving or lost iterations)


@dataclass
class Totals:
    """Running sums for the decomposition (see truth.py for the definitions)."""

    survived_s: float = 0.0
    survived_slow_fs: float = 0.0  #: fail-slow part of surviving iterations' excess
    survived_jitter: float = 0.0  #: jitter part (base duration - t*)
    lost_s: float = 0.0
    ckpt_save_s: float = 0.0
    exposure_gpu_s: float = 0.0  #: GPU-seconds at risk (attempt start .. fault or training end)
    exposure_node_s: float = 0.0
    episodes: list[SlowEpisode] = field(default_factory=list)


class Sink(Protocol):
    """Receives the campaign as it happens (in time order); the log writers implement it."""

    def attempt_start(self, a: Attempt) -> None: ...

    def training_begin(self, a: Attempt, t: float) -> None: ...

    def iterations(self, a: Attempt, iters: np.ndarray, ends: np.ndarray,
                   durs: np.ndarray) -> None: ...

    def save(self, a: Attempt, iteration: int, start: float, end: float | None,
             final: bool) -> None: ...

    def attempt_end(self, a: Attempt) -> None: ...


class NullSink:
    """No logs: the campaign only computes its truth."""

    def attempt_start(self, a: Attempt) -> None:
        pass

    def training_begin(self, a: Attempt, t: float) -> None:
        pass

    def iterations(self, a: Attempt, iters: np.ndarray, ends: np.ndarray,
                   durs: np.ndarray) -> None:
        pass

    def save(self, a: Attempt, iteration: int, start: float, end: float | None,
             final: bool) -> None:
        pass

    def attempt_end(self, a: Attempt) -> None:
        pass
