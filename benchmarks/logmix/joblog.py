"""Training-job output mixes: megatron, kubectl-stamped, tqdm, lightning, unknown (and fleet-dir's
jobs).

Formats:

* Megatron-LM iteration line, core_r0.9 ``megatron/training/training.py`` ``training_log``
  (`` [%Y-%m-%d %H:%M:%S] iteration {:8d}/{:8d} | consumed samples: ...``), checkpoint lines of
  ``checkpointing.py`` (``saving checkpoint at iteration {:7d} to {}``, ``  successfully saved
  checkpoint at iteration {:7d} to {}``); NCCL INFO/WARN envelope ``host:pid:tid [dev] NCCL ...``
  (NCCL src/debug.cc) with the net_ib.cc completion-error text; torch 2.3 ProcessGroupNCCL
  watchdog line; see sample_logs/real_formats/training and nccl_torch, NOTES.md there.
* NCCL INFO start-up of every rank: ``pipeline.simulate.noise_nccl`` (NCCL 2.21.5, cited there).
* ``kubectl logs --timestamps``: Go ``time.RFC3339Nano`` before every line (trailing zeros of
  the nanoseconds trimmed), kubectl/pkg/cmd/logs; tests/data/formats wrapper
  ``kubectl-timestamps``.
* Python warnings (``warnings.formatwarning``: ``%s:%s: %s: %s\\n  %s``): torch 2.1
  ``torch/utils/checkpoint.py:429`` use_reentrant UserWarning.
* tqdm 4.66.6 ``format_meter`` (``{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}
  [{elapsed}<{remaining}, {rate_fmt}{postfix}]``, Unicode bar ``" ▏▎▍▌▋▊▉█"``), redrawn with
  ``\\r`` in a file (``status_printer``), ``tqdm.write`` = ``clear()`` (``\\r`` + spaces +
  ``\\r``), the message and ``\\n``; HF Trainer (transformers 4.4x ``trainer.py``, examples'
  log format ``[%(levelname)s|%(filename)s:%(lineno)s] %(asctime)s >> %(message)s``;
  ``ProgressCallback.on_log`` writes ``str(logs)`` through ``tqdm.write``); see
  sample_logs/real_formats/training/gpu-worker-3/job-555.out and progress.jsonl ``tqdm-cr``.
* Lightning 2.x TQDMProgressBar (lightning/pytorch/callbacks/progress/tqdm_progress.py):
  one training bar, ``reset`` at every epoch and never closed (``leave=False``), described
  ``Epoch {current_epoch}``, ``bar_format`` ``{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<
  {remaining}, {rate_noinv_fmt}{postfix}]`` with ``set_postfix``'s ``v_num=0, train_loss=2.31``
  (tqdm's ``format_num``, ``.3g``); a ``Validation DataLoader 0`` bar closed with
  ``leave=False`` (``\r`` + spaces + ``\r``); ModelCheckpoint's verbose ``rank_zero_info``
  (``Epoch {epoch:d}, global step {step:d}: {monitor!r} reached {current:0.5f} (best
  {best:0.5f}), saving model to {filepath!r} as top {k}``, lightning's
  callbacks/model_checkpoint.py) ends the physical line: one line per epoch.
* unknown: a custom trainer's own ``print()`` lines (``[rank3] step 1200 | loss 2.31 | 410
  ms/it``, as in issue 14): by definition no program's documented format, and no recogniser
  claims them.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from logmix.common import Sized, iso, rfc3339nano
from pipeline.simulate.noise_nccl import job_startup

ITER = (" [{ts}] iteration {it:>8d}/ 1000000 | consumed samples: {cs:>12d} | elapsed time per "
        "iteration (ms): {ms:.1f} | learning rate: 1.499999E-04 | global batch size:  1024 | "
        "lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: 0.{gn:03d} | number of skipped "
        "iterations:   0 | number of nan iterations:   0 |\n")
OTHER = [
    "node017:2210:2263 [3] NCCL INFO Channel 00/32 :    0   1   2   3   4   5   6   7\n",
    "saving checkpoint at iteration {it:>7d} to /ckpt/llama-70b\n",
    "  successfully saved checkpoint at iteration {it:>7d} to /ckpt/llama-70b\n",
    "node017:2210:2263 [3] NCCL WARN NET/IB : Got completion from peer 10.3.2.17<52431> with "
    "error 12, opcode 0, len 0, vendor err 129 (Recv)\n",
    "[rank5]:[E ProcessGroupNCCL.cpp:563] [Rank 5] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=123456, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
    "Timeout(ms)=600000) ran for 600046 milliseconds before timing out.\n",
    "my own debug print: batch shapes look fine\n",
]
WARN = ["/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:429: UserWarning: "
        "torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False "
        "explicitly. The default value of use_reentrant will be updated to be False in the "
        "future. To maintain current behavior, pass use_reentrant=True. It is recommended that "
        "you use use_reentrant=False. Refer to docs for more details on the differences "
        "between the two variants.", "  warnings.warn("]


def _iter_line(it: int) -> str:
    ts = (datetime(2024, 5, 1) + timedelta(seconds=it * 2)).strftime("%Y-%m-%d %H:%M:%S")
    return ITER.format(ts=ts, it=it, cs=it * 1024, ms=2000.0 + (it % 97) / 10,
                       loss=2.5 + (it % 13) / 100, gn=it % 1000)


def megatron(out: Path, size: int, seed: int) -> tuple[list[Path], list[Path]]:
    """The original benchmark log: ~99% Megatron iteration lines, every 100th iteration one of
    ``OTHER`` (NCCL, checkpoint, watchdog, an unparsed print)."""
    path = out / "slurm-4242.out"
    written, it = 0, 0
    with open(path, "w", buffering=1 << 22) as f:
        while written < size:
            it += 1
            line = _iter_line(it)
            if it % 100 == 0:
                line += OTHER[it // 100 % len(OTHER)].format(it=it)
            f.write(line)
            written += len(line)
    return [path], [path]


def megatron_job(path: Path, size: int, seed: int, hosts: list[str]) -> None:
    """A job's output: every rank's NCCL INFO start-up, then Megatron iterations with a
    checkpoint every 500."""
    rng = np.random.default_rng(seed)
    with Sized(path, size) as w:
        for block in job_startup(hosts, 8, rng):
            w.write(block)
        it = 0
        while not w.full:
            lines = []
            for _ in range(500):
                it += 1
                lines.append(_iter_line(it)[:-1])
            lines += [OTHER[1].format(it=it)[:-1], OTHER[2].format(it=it)[:-1]]
            w.write(lines)


def kubectl_stamped(out: Path, size: int, seed: int) -> tuple[list[Path], list[Path]]:
    """``kubectl logs --timestamps`` of a Megatron master pod: at each container start its 8
    ranks' NCCL INFO, then iterations (a warning pair every 250, a checkpoint every 1000); the
    container restarts every ~20,000 iterations after a watchdog timeout."""
    rng = np.random.default_rng(seed)
    path = out / "llama-pretrain-master-0.log"
    hosts = [f"node{k:03d}" for k in range(1, 129)]
    t, it = 0.0, 0
    with Sized(path, size) as w:
        while not w.full:
            block = next(job_startup(hosts, 8, rng))
            w.write(f"{rfc3339nano(t + 0.001 * k, k * 7919)} {x}" for k, x in enumerate(block))
            t += 120.0
            for _ in range(int(rng.integers(15_000, 25_000)) // 250):
                lines = []
                for _ in range(250):
                    it += 1
                    t += 2.0 + float(rng.random()) * 0.01
                    stamp = rfc3339nano(t, int(rng.integers(0, 1000)))
                    lines.append(f"{stamp} {_iter_line(it)[:-1]}")
                    if it % 1000 == 0:
                        lines += [f"{stamp} {x.format(it=it)[:-1]}" for x in OTHER[1:3]]
                lines += [f"{rfc3339nano(t + 0.5, 0)} {x}" for x in WARN]
                w.write(lines)
                if w.full:
                    break
            w.write([f"{rfc3339nano(t + 600.0, 0)} {OTHER[4][:-1]}"])
            t += 900.0
    return [path], [path]


BAR = " ▏▎▍▌▋▊▉█"


def _bar(frac: float) -> str:
    """tqdm's 10-character Unicode bar."""
    cells = frac * 10
    full = int(cells)
    part = int((cells - full) * 8)
    s = "█" * full + (BAR[part] if full < 10 else "")
    return s.ljust(10)


def _hms(s: float) -> str:
    s = int(s)
    h, m = divmod(s, 3600)
    m, sec = divmod(m, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m:02d}:{sec:02d}"


def tqdm_bars(out: Path, size: int, seed: int) -> tuple[list[Path], list[Path]]:
    """HF Trainer output: the bar redrawn with ``\\r`` at every step, a loss dict every 10
    steps (``tqdm.write``: the dict ends the physical line), a checkpoint every 500."""
    rng = np.random.default_rng(seed)
    path = out / "job-555.out"
    total = 100_000
    with Sized(path, size) as w:
        w.write(["[INFO|trainer.py:2078] 2024-05-01 12:00:00,123 >> ***** Running training *****",
                 "[INFO|trainer.py:2079] 2024-05-01 12:00:00,123 >>   Num examples = 6,400,000",
                 f"[INFO|trainer.py:2086] 2024-05-01 12:00:00,124 >>   Total optimization steps"
                 f" = {total:,}"])
        step, el = 0, 0.0
        while not w.full:
            parts = []
            for _ in range(10):
                step = step % total + 1
                el += 0.8 + float(rng.random()) * 0.05
                rate = step / el
                parts.append(f"{100 * step / total:3.0f}%|{_bar(step / total)}| {step}/{total} "
                             f"[{_hms(el)}<{_hms((total - step) / rate)}, {rate:5.2f}it/s]")
            loss = 2.5 - step / total + float(rng.random()) * 0.05
            clear = "\r" + " " * len(parts[-1]) + "\r"  # tqdm.write: clear(), then the message
            w.write(["\r" + "\r".join(parts) + clear + f"{{'loss': {loss:.4f}, 'grad_norm': "
                     f"{0.5 + float(rng.random()):.4f}, 'learning_rate': 1.9e-05, 'epoch': "
                     f"{step / total:.2f}}}"])
            if step % 500 == 0:
                stamp = iso(el, 3).replace("T", " ").replace(".", ",")
                w.write([f"[INFO|trainer.py:3850] {stamp} >> Saving model checkpoint to "
                         f"out/checkpoint-{step}",
                         f"[INFO|configuration_utils.py:420] {stamp} >> Configuration saved in"
                         f" out/checkpoint-{step}/config.json"])
    return [path], [path]


def lightning(out: Path, size: int, seed: int) -> tuple[list[Path], list[Path]]:
    """A Lightning job's output: per epoch, 1,000 redraws of the described training bar with
    its postfix and 50 of the validation bar in one physical line, then the checkpoint
    message (see the module docstring)."""
    rng = np.random.default_rng(seed)
    path = out / "lightning-77.out"
    steps, epoch, loss = 1000, 0, 2.5
    with Sized(path, size) as w:
        while not w.full:
            parts, el = [], 0.0
            for s in range(1, steps + 1):
                el += 0.18 + float(rng.random()) * 0.01
                rate = s / el
                loss *= 0.99995
                parts.append(f"Epoch {epoch}: {100 * s / steps:3.0f}%|{_bar(s / steps)}| "
                             f"{s}/{steps} [{_hms(el)}<{_hms((steps - s) / rate)}, "
                             f"{rate:.2f}it/s, v_num=0, train_loss={loss:.3g}]")
            for v in range(1, 51):
                parts.append(f"Validation DataLoader 0: {100 * v / 50:3.0f}%|{_bar(v / 50)}| "
                             f"{v}/50 [00:{v // 20:02d}<00:{(50 - v) // 20:02d}, "
                             f"{20 + float(rng.random()):.2f}it/s]")
            step = steps * (epoch + 1)
            w.write(["\r" + "\r".join(parts) + "\r" + " " * 80 + "\r",
                     f"Epoch {epoch}, global step {step}: 'val_loss' reached {loss:0.5f} (best "
                     f"{loss:0.5f}), saving model to '/ckpt/epoch={epoch}-step={step}.ckpt' as "
                     "top 1"])
            epoch += 1
    return [path], [path]


def unknown(out: Path, size: int, seed: int) -> tuple[list[Path], list[Path]]:
    """A custom trainer's own prints that no recogniser claims: iteration-like lines with a
    ``[rankN]`` prefix, eval and data-loader lines."""
    rng = np.random.default_rng(seed)
    path = out / "train-custom.log"
    step = 0
    with Sized(path, size) as w:
        while not w.full:
            lines = []
            for _ in range(64):
                step += 1
                for r in range(8):
                    loss = 3.0 - step / 1e6 + float(rng.random()) * 0.1
                    lines.append(f"[rank{r}] step {step} | loss {loss:.2f} | "
                                 f"{400 + int(rng.integers(0, 30))} ms/it")
                if step % 16 == 0:
                    lines.append(f"[rank0] dataloader: {1024} samples in "
                                 f"{0.7 + float(rng.random()) * 0.2:.2f} s (shard {step % 64}/64)")
            lines.append(f"[rank0] eval step {step} | val_loss {2.9 - step / 1e6:.2f} | "
                         f"ppl {float(np.exp(2.9 - step / 1e6)):.2f}")
            w.write(lines)
    return [path], [path]
