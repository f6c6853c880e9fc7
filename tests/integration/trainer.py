"""Stand-in for a Megatron-LM pretraining process (stdlib only; run by the job script).

It trains nothing: each iteration sleeps ``--iter-ms`` (+-10 %). Rank 0 prints Megatron-LM's
own lines (megatron/training/training.py ``training_log`` with the ``[%Y-%m-%d %H:%M:%S]``
stamp, megatron/training/checkpointing.py save/load lines, megatron/core/timers.py timer
blocks, ``print_datetime``), exactly as parsers/megatron.py and the simulator
(pipeline/simulate/writers_joblog.py) read them. It saves a real checkpoint directory every
``--save-interval`` iterations (``iter_0000020/`` + ``latest_checkpointed_iteration.txt``) and
resumes from the last one when the job is requeued or resubmitted.

Ground truth for the tests goes to ``--truth DIR/<jobid>.jsonl`` (never into the logs under
test): start (iteration loaded), every iteration, every completed save, with wall times
(with ``--all-ranks`` the other ranks' iterations go to ``<jobid>.rank<N>.jsonl``).

``--all-ranks``: every rank prints (under ``srun --label`` each line then comes once per
rank, ``0: ...``, ``1: ...``); the rank is ``RANK`` (a torchrun-style launcher) or
``SLURM_PROCID``.

Failures are injected by the harness dropping ``<inject-dir>/<jobid>.<mode>`` (rank 0 checks
after every iteration): ``exit`` (RuntimeError: CUDA illegal memory access, exit 1), ``segv``
(SIGSEGV, faulthandler prints ``Fatal Python error: Segmentation fault``), ``oom`` (grows its
memory by 256 MiB per iteration until the cgroup OOM killer stops it).
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import math
import os
import random
import signal
import sys
import time
from datetime import datetime
from typing import Any


def stamp() -> str:
    return datetime.now().strftime("%Y-%m-%d %H:%M:%S")


class Trainer:
    def __init__(self, a: argparse.Namespace) -> None:
        self.a = a
        self.rank = int(os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0")))
        self.job = os.environ.get("SLURM_JOB_ID", "0")
        self.restart = int(os.environ.get("SLURM_RESTART_COUNT", "0") or 0)
        self.tracker = os.path.join(a.save, "latest_checkpointed_iteration.txt")
        self.rnd = random.Random(f"{self.job}.{self.restart}.{self.rank}")
        self.hog: list[bytes] = []

    def say(self, msg: str, err: bool = False) -> None:
        if self.rank == 0 or self.a.all_ranks:
            print(msg, file=sys.stderr if err else sys.stdout, flush=True)

    def truth(self, event: str, **kw: Any) -> None:
        if (self.rank != 0 and not self.a.all_ranks) or not self.a.truth:
            return
        rec = {"time": time.time(), "event": event, "job_id": self.job,
               "restart": self.restart, **kw}
        name = f"{self.job}.jsonl" if self.rank == 0 else f"{self.job}.rank{self.rank}.jsonl"
        with open(os.path.join(self.a.truth, name), "a") as fh:
            fh.write(json.dumps(rec) + "\n")

    def timer(self, name: str, ms: float) -> None:
        self.say("(min, max) time across ranks (ms):")
        self.say("    {}: ({:.2f}, {:.2f})".format((name + " ").ljust(48, "."), ms * 0.98, ms))

    def load(self) -> int:
        if not os.path.exists(self.tracker):
            self.say(f"WARNING: could not find the metadata file {self.tracker} ")
            self.say("    will not load any checkpoints and will start from random")
            return 0
        with open(self.tracker) as fh:
            it = int(fh.read().strip())
        t0 = time.time()
        self.say(f" loading checkpoint from {self.a.load} at iteration {it}")
        time.sleep(0.2)
        self.say(f"  successfully loaded checkpoint from {self.a.load} [ t 1/1, p 1/1 ] "
                 f"at iteration {it}")
        self.timer("load-checkpoint", (time.time() - t0) * 1000.0)
        return it

    def save(self, it: int) -> None:
        if self.rank != 0:
            return
        t0 = time.time()
        self.say(f"saving checkpoint at iteration {it:7d} to {self.a.save} in torch_dist format")
        d = os.path.join(self.a.save, f"iter_{it:07d}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "model_optim_rng.pt"), "w") as fh:
            fh.write(f"fake checkpoint at iteration {it}\n")
        time.sleep(self.a.save_ms / 1000.0)
        with open(self.tracker + ".tmp", "w") as fh:
            fh.write(str(it))
        os.replace(self.tracker + ".tmp", self.tracker)
        self.say(f"  successfully saved checkpoint from iteration {it:7d} to {self.a.save} "
                 "[ t 1/1, p 1/1 ]")
        self.timer("save-checkpoint", (time.time() - t0) * 1000.0)
        self.truth("saved", iteration=it, start=t0)

    def injected(self) -> str | None:
        if self.rank != 0 or not self.a.inject_dir:
            return None
        for mode in ("exit", "segv", "oom"):
            trig = os.path.join(self.a.inject_dir, f"{self.job}.{mode}")
            if os.path.exists(trig):
                os.remove(trig)
                return mode
        return None

    def run(self) -> int:
        a = self.a
        world = int(os.environ.get("SLURM_NTASKS", "1")) * 4
        self.say(f"using world size: {world}, data-parallel size: {world}, "
                 "context-parallel size: 1, tensor-model-parallel size: 1, "
                 "pipeline-model-parallel size: 1 ")
        self.say("> building GPT model ...")
        it = self.load()
        self.truth("start", iteration=it)
        self.say(f"[after model, optimizer, and learning rate scheduler are built] "
                 f"datetime: {stamp()} ")
        self.say("done with setup ...")
        self.say("training ...")
        self.say(f"[before the start of training step] datetime: {stamp()} ")
        acc_s, acc_n = 0.0, 0  # Megatron's interval timer: excludes checkpoint saves
        while it < a.train_iters:
            t0 = time.time()
            time.sleep(a.iter_ms / 1000.0 * self.rnd.uniform(0.9, 1.1))
            if self.hog:
                self.hog.append(b"\x01" * (256 << 20))
            it += 1
            acc_s += time.time() - t0
            acc_n += 1
            if it % a.log_interval == 0:
                loss = 10.8 * math.exp(-it / 180.0) + 2.1 + self.rnd.uniform(-0.05, 0.05)
                self.say(f" [{stamp()}] iteration {it:8d}/{a.train_iters:8d} | consumed "
                         f"samples: {it * a.global_batch_size:12d} | elapsed time per iteration "
                         f"(ms): {acc_s * 1000.0 / acc_n:.1f} | learning rate: "
                         f"{3.0e-4 * min(1.0, it / 50.0):.6E} | global batch size: "
                         f"{a.global_batch_size:5d} | lm loss: {loss:.6E} | loss scale: 1.0 | "
                         f"grad norm: {self.rnd.uniform(0.8, 2.5):.3f} | number of skipped "
                         f"iterations: {0:3d} | number of nan iterations: {0:3d} |")
                acc_s, acc_n = 0.0, 0
            self.truth("iteration", iteration=it)
            if it % a.save_interval == 0:
                self.save(it)
            mode = self.injected()
            if mode is not None:
                self.truth("inject", mode=mode, iteration=it)
            if mode == "exit":
                raise RuntimeError("CUDA error: an illegal memory access was encountered\n"
                                   "CUDA kernel errors might be asynchronously reported at some "
                                   "other API call, so the stacktrace below might be incorrect.")
            if mode == "segv":
                os.kill(os.getpid(), signal.SIGSEGV)
            if mode == "oom":
                self.say(f"[{stamp()}] rank 0: building pinned-memory prefetch buffer",
                         err=True)
                self.hog.append(b"\x01" * (256 << 20))
        self.say(f"[after training is done] datetime: {stamp()} ")
        self.truth("done", iteration=it)
        return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--save", required=True)
    p.add_argument("--load", required=True)
    p.add_argument("--train-iters", type=int, default=200)
    p.add_argument("--iter-ms", type=float, default=250.0)
    p.add_argument("--save-interval", type=int, default=20)
    p.add_argument("--save-ms", type=float, default=300.0)
    p.add_argument("--log-interval", type=int, default=2)
    p.add_argument("--global-batch-size", type=int, default=512)
    p.add_argument("--inject-dir", default="")
    p.add_argument("--truth", default="")
    p.add_argument("--all-ranks", action="store_true")
    a = p.parse_args(argv)
    os.makedirs(a.save, exist_ok=True)
    faulthandler.enable()
    return Trainer(a).run()


if __name__ == "__main__":
    sys.exit(main())
