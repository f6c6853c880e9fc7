"""Lines of a job's stdout/stderr (``jobs/slurm-<id>.out``, pod logs): Megatron-LM progress and
checkpoint lines, PyTorch/NCCL failure output, torch elastic and srun/slurmstepd messages.

Formats and sources (each line is produced exactly as the cited code prints it):

* Megatron-LM (core_r0.9-era ``megatron/training/training.py`` ``training_log``): `` [%Y-%m-%d
  %H:%M:%S] iteration {:8d}/{:8d} | consumed samples: {:12d} | elapsed time per iteration (ms):
  {:.1f} | learning rate: {:.6E} | global batch size: {:5d} | lm loss: {:.6E} | loss scale:
  {:.1f} | grad norm: {:.3f} | number of skipped iterations: {:3d} | number of nan iterations:
  {:3d} |``. The elapsed time is the interval timer divided by the iterations since the last
  log; ``save_checkpoint_and_time`` stops that timer during a save ("exclude checkpointing
  duration"), so saves are not in it.
* Megatron-LM ``checkpointing.py``: ``saving checkpoint at iteration {:7d} to {} in {} format``,
  ``  successfully saved checkpoint from iteration {:7d} to {}``, ``  successfully loaded
  checkpoint from {} [ t {}, p {} ] at iteration {}``, ``WARNING: could not find the metadata
  file {} `` + ``    will not load any checkpoints and will start from random``.
  ``megatron/core/timers.py``: ``(min, max) time across ranks (ms):`` and
  ``    {name + ' ' ljust(48, '.')}: ({:.2f}, {:.2f})``. ``print_datetime``:
  ``[before the start of training step] datetime: %Y-%m-%d %H:%M:%S `` (trailing space).
* PyTorch 2.3 ``ProcessGroupNCCL.cpp`` (lines 563/577/583 as in real 2.3 logs):
  ``[rankN]:[E ProcessGroupNCCL.cpp:563] [Rank N] Watchdog caught collective operation timeout:
  WorkNCCL(SeqNum=.., OpType=ALLREDUCE, NumelIn=.., NumelOut=.., Timeout(ms)=600000) ran for ..
  milliseconds before timing out.`` and the two follow-up lines.
* torch ``distributed/elastic/multiprocessing/errors/__init__.py``: ChildFailedError message
  (``_MSG_FORMAT_TEMPLATE`` / ``_FAILURE_FORMAT_TEMPLATE``, width capped at 60).
* NCCL ``net_ib.cc``: ``host:pid:tid [dev] NCCL WARN NET/IB : Got completion from peer
  ip<port> with error 12, opcode 0, len 0, vendor err 129 (Recv)``.
* Slurm ``slurmstepd`` (src/slurmd/slurmstepd/req.c): ``*** JOB %u ON %s CANCELLED AT %s DUE TO
  TIME LIMIT ***`` (also ``DUE TO PREEMPTION``, ``DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR
  DETAILS``, and the plain ``CANCELLED AT %s ***`` of scancel); srun: ``srun: error: %s: task
  %d: Exited with exit code %d``.
* Python tracebacks of a worker carry torch's ``[rankN]:`` prefix.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from pipeline.simulate.params import Settings
from pipeline.simulate.records import Attempt
from pipeline.simulate.timefmt import Clock

SCRIPT = "/workspace/Megatron-LM/pretrain_gpt.py"
SITE = "/usr/local/lib/python3.10/dist-packages"
MAX_LR, MIN_LR, WARMUP = 3.0e-4, 3.0e-5, 2000


def timer_block(name: str, lo_ms: float, hi_ms: float) -> list[str]:
    return ["(min, max) time across ranks (ms):",
            "    {}: ({:.2f}, {:.2f})".format((name + " ").ljust(48, "."), lo_ms, hi_ms)]


class MegatronLog:
    """Progress/checkpoint lines of one attempt; keeps the interval-timer state."""

    def __init__(self, s: Settings, clock: Clock, target: int, rng: np.random.Generator) -> None:
        self.s, self.clock, self.target, self.rng = s, clock, target, rng
        self.acc_s = 0.0
        self.acc_n = 0

    def start(self, a: Attempt) -> list[str]:
        self.acc_s, self.acc_n = 0.0, 0
        if not a.loaded_checkpoint:
            return [f"WARNING: could not find the metadata file {self.s.ckpt_dir}/"
                    "latest_checkpointed_iteration.txt ",
                    "    will not load any checkpoints and will start from random"]
        ms = 1000.0 * min(a.planned_startup_s * 0.5, 60.0)
        return [f"  successfully loaded checkpoint from {self.s.ckpt_dir} [ t 0, p 0 ] "
                f"at iteration {a.start_iteration}",
                *timer_block("load-checkpoint", ms * 0.98, ms)]

    def begin(self, t: float) -> str:
        return f"[before the start of training step] datetime: {self.clock.megatron(t)} "

    def done(self, t: float) -> str:
        return f"[after training is done] datetime: {self.clock.megatron(t)} "

    def iterations(self, iters: np.ndarray, ends: np.ndarray, durs: np.ndarray) -> Iterator[str]:
        k = self.s.log_interval
        gbs = self.s.global_batch_size
        csum = np.cumsum(durs)
        logged = np.nonzero(iters % k == 0)[0]
        prev_c, prev_i = 0.0, 0
        noise = self.rng.standard_normal(len(logged))
        gn = self.rng.lognormal(0.0, 0.15, len(logged))
        for j, li in enumerate(logged):
            c = float(csum[li])
            n = self.acc_n + int(li + 1 - prev_i)
            el = (self.acc_s + c - prev_c) / n
            self.acc_s, self.acc_n = 0.0, 0
            prev_c, prev_i = c, int(li + 1)
            it = int(iters[li])
            yield (f" [{self.clock.megatron(float(ends[li]))}] iteration {it:8d}/{self.target:8d}"
                   f" | consumed samples: {it * gbs:12d} | elapsed time per iteration (ms): "
                   f"{el * 1000.0:.1f} | learning rate: {lr(it, self.target):.6E} | global batch"
                   f" size: {gbs:5d} | lm loss: {loss(it, float(noise[j])):.6E} | loss scale: 1.0"
                   f" | grad norm: {0.9 * float(gn[j]):.3f} | number of skipped iterations: "
                   f"{0:3d} | number of nan iterations: {0:3d} |")
        self.acc_s += float(csum[-1]) - prev_c if len(csum) else 0.0
        self.acc_n += len(iters) - prev_i

    def save(self, iteration: int, dur_s: float | None, timed: bool) -> list[str]:
        out = [f"saving checkpoint at iteration {iteration:7d} to {self.s.ckpt_dir} in "
               f"{self.s.ckpt_format} format"]
        if dur_s is None:
            return out
        out.append(f"  successfully saved checkpoint from iteration {iteration:7d} to "
                   f"{self.s.ckpt_dir}")
        if timed:
            ms = dur_s * 1000.0
            out += timer_block("save-checkpoint", ms * float(self.rng.uniform(0.995, 0.9999)), ms)
        return out


def lr(it: int, total: int) -> float:
    if it < WARMUP:
        return MAX_LR * it / WARMUP
    frac = min(1.0, (it - WARMUP) / max(1, total - WARMUP))
    return MIN_LR + 0.5 * (MAX_LR - MIN_LR) * (1.0 + math.cos(math.pi * frac))


def loss(it: int, z: float) -> float:
    return 1.9 + 9.0 * math.exp(-it / 1500.0) + 0.35 * (1000.0 / (it + 1000.0)) + 0.02 * z


# --- failure output -----------------------------------------------------------------------

def watchdog(rank: int, seq: int, ran_ms: int, timeout_ms: int, numel: int) -> list[str]:
    p = f"[rank{rank}]:[E ProcessGroupNCCL.cpp:"
    return [
        f"{p}563] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum="
        f"{seq}, OpType=ALLREDUCE, NumelIn={numel}, NumelOut={numel}, Timeout(ms)={timeout_ms})"
        f" ran for {ran_ms} milliseconds before timing out.",
        f"{p}577] [Rank {rank}] Some NCCL operations have failed or timed out. Due to the "
        "asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
        "corrupted/incomplete data.",
        f"{p}583] [Rank {rank}] To avoid data inconsistency, we are taking the entire process "
        "down.",
    ]


def worker_traceback(rank: int, last: str) -> list[str]:
    p = f"[rank{rank}]: "
    return [p + x for x in (
        "Traceback (most recent call last):",
        f'  File "{SCRIPT}", line 243, in <module>',
        "    pretrain(",
        '  File "/workspace/Megatron-LM/megatron/training/training.py", line 336, in pretrain',
        "    iteration, num_floating_point_operations_so_far = train(",
        '  File "/workspace/Megatron-LM/megatron/training/training.py", line 1210, in train',
        "    train_step(forward_step_func,",
        last)]


def child_failed(host: str, rank: int, local_rank: int, exitcode: int, pid: int,
                 when: str) -> list[str]:
    """torchrun's own traceback and the ChildFailedError report (one failed local rank)."""
    if exitcode < 0:
        msg = f"Signal {-exitcode} (SIGABRT) received by PID {pid}"
    else:
        msg = "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
    tb = [
        "Traceback (most recent call last):",
        '  File "/usr/local/bin/torchrun", line 8, in <module>',
        "    sys.exit(main())",
        f'  File "{SITE}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 347,'
        " in wrapper",
        "    return f(*args, **kwargs)",
        f'  File "{SITE}/torch/distributed/run.py", line 879, in main',
        "    run(args)",
        f'  File "{SITE}/torch/distributed/run.py", line 870, in run',
        "    elastic_launch(",
        f'  File "{SITE}/torch/distributed/launcher/api.py", line 132, in __call__',
        "    return launch_agent(self._config, self._entrypoint, list(args))",
        f'  File "{SITE}/torch/distributed/launcher/api.py", line 263, in launch_agent',
        "    raise ChildFailedError(",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    ]
    failure = [
        "[0]:",
        f"  time      : {when}",
        f"  host      : {host}",
        f"  rank      : {rank} (local_rank: {local_rank})",
        f"  exitcode  : {exitcode} (pid: {pid})",
        "  error_file: <N/A>",
        f"  traceback : {msg}",
    ]
    title = f"{SCRIPT} FAILED"
    width = min(60, max(len(title), *(len(x) for x in failure)))
    return [*tb, "=" * width, title, "-" * width, "Failures:", "  <NO_OTHER_FAILURES>",
            "-" * width, "Root Cause (first observed failure):", *failure, "=" * width]


def stepd(job_id: str, host: str, when: str, why: str) -> str:
    tail = f" DUE TO {why} ***" if why else " ***"
    return f"slurmstepd: error: *** JOB {job_id} ON {host} CANCELLED AT {when}{tail}"


def nccl_ib_warn(host: str, pid: int, tid: int, dev: int, peer: str, port: int) -> str:
    return (f"{host}:{pid}:{tid} [{dev}] NCCL WARN NET/IB : Got completion from peer "
            f"{peer}<{port}> with error 12, opcode 0, len 0, vendor err 129 (Recv)")


def exception_lines(category: str, rank: int, ckpt_dir: str, last_iteration: int) -> list[str]:
    """The traceback a failing rank prints for categories that end in a Python exception
    (ECC error surfacing through CUDA, a bug in the training code, a checkpoint I/O error);
    other categories print none."""
    if category == "gpu_memory":
        return worker_traceback(
            rank, "RuntimeError: CUDA error: uncorrectable ECC error encountered")
    if category == "user_code":
        return worker_traceback(
            rank, "ValueError: Expected input batch_size (8) to match target batch_size (4).")
    if category == "storage":
        return worker_traceback(
            rank, f"OSError: [Errno 5] Input/output error: '{ckpt_dir}/"
            f"iter_{last_iteration:07d}/__{rank}_0.distcp'")
    return []
