"""tqdm bars with a description (``Epoch 3: 45%|...``), read per chunk by their digit-zeroed
shape (parsers/joblog_preset.py ``_described``), against the per-line path
(``TORMORTEM_PREFILTER=0``): the same rows, codes and line counts, and most such lines taken
by the fast path.

Formats: tqdm/std.py ``format_meter`` (``l_bar`` = ``{desc}: {percentage:3.0f}%|``, ``r_bar`` =
``| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]``, every redraw begun with
``\\r`` by ``status_printer``); Lightning's TQDMProgressBar
(lightning/pytorch/callbacks/progress/tqdm_progress.py: ``Epoch {current_epoch}``,
``Validation DataLoader 0``, ``bar_format`` with ``{rate_noinv_fmt}{postfix}``, the postfix
``v_num=0, train_loss=2.310`` from ``set_postfix``); HF datasets' ``Map (num_proc=8)`` and
``Filter`` (datasets/arrow_dataset.py ``desc``, unit ``examples``).
"""

from __future__ import annotations

import random
from datetime import UTC

import numpy as np
import polars as pl
import pytest

from parsers.base import FileContext
from parsers.joblog import JobLogParser
from parsers.tqdm_parts import tqdm_lines
from tests.parsers.test_fast_paths import both_paths


def _bar(desc: str, n: int, total: int, post: str = "", unit: str = "it") -> str:
    pct = int(100 * n / total)
    fill = "█" * (10 * n // total)
    return (f"{desc}: {pct:3d}%|{fill:10s}| {n}/{total} [00:{n % 60:02d}<01:{n % 57:02d}, "
            f"{1 + n % 9}.{n % 97:02d}{unit}/s{post}]")


def _lightning(rng: random.Random, epoch: int, a: int, b: int) -> str:
    return "".join("\r" + _bar(f"Epoch {epoch}", n, 1000,
                               f", v_num=0, train_loss={rng.uniform(1, 3):.3f}")
                   for n in range(a, b))


#: what must stay per line, each for its reason (the rows must still be equal)
NEAR_MISSES = [
    # a stamp before the description: the line's own time (zeroed on the shape)
    "2024-05-01 12:00:07 Epoch 3:  45%|████▌     | 450/1000 [01:23<01:42,  5.38it/s]",
    # a rank prefix, srun --label's task number: prefix layers read them
    "[rank0]: Epoch 3:  45%|████▌     | 450/1000 [01:23<01:42,  5.38it/s]",
    "0: Epoch 3:  45%|████▌     | 450/1000 [01:23<01:42,  5.38it/s]",
    # pdsh/clush's host, Ray's worker: prefixes read with no rank
    "gpu-node-07: Epoch 3:  45%|████▌     | 450/1000 [01:23<01:42,  5.38it/s]",
    "(TrainWorker pid=4321) Epoch 3:  45%|████▌     | 450/1000 [01:23<01:42,  5.38it/s]",
    # a bar-like run inside the description: the per-line pattern reads the first one
    "Stage 45%|x| 450/1000 [a] 45%|████▌     | 450/1000 [01:23<01:42,  5.38it/s]",
    # a description that is not ASCII, a count with a unit prefix, text glued behind ``]``
    "Époque 3:  45%|████▌     | 450/1000 [01:23<01:42,  5.38it/s]",
    "Map:  45%|████▌     | 4.5k/10k [01:23<01:42,  54.2 examples/s]",
    "Epoch 3:  45%|████▌     | 450/1000 [01:23<01:42,  5.38it/s]{'loss': 2.31, 'epoch': 3.0}",
    "\rEpoch 3:  45%|████▌     | 450/1000 [01:23<01:42,  5.38it/s]\rEpoch 3:  45%|████▌     | "
    "451/1000 [01:23<01:42,  5.38it/s]{'loss': 2.31, 'epoch': 3.0}",
    # no separator before the percentage (TQDM_FIELDS wants ^, a space or a colon there)
    "Epoch3x45%|████▌     | 450/1000 [01:23<01:42,  5.38it/s]",
]


def _log(seed: int, lines: int) -> tuple[str, list[int]]:
    """A Lightning job's output; the line numbers (0-based) of the near misses."""
    rng = random.Random(seed)
    out = ["2024-05-01 12:00:00,123 - INFO - lightning.pytorch.utilities.rank_zero - "
           "GPU available: True (cuda), used: True"]
    misses = []
    n, epoch = 1, 0
    while len(out) < lines:
        k = rng.randint(1, 4)
        out.append(_lightning(rng, epoch, n, n + k))
        n += k
        r = rng.random()
        if r < 0.05:
            out.append("".join("\r" + _bar("Validation DataLoader 0", v, 50)
                               for v in range(1, rng.randint(2, 6))))
        elif r < 0.08:
            out.append("\r" + _bar("Map (num_proc=8)", rng.randint(1, 9999), 10000,
                                   unit=" examples"))
        elif r < 0.09:
            out.append("\r" + _bar("x" * 90, rng.randint(1, 99), 100))  # cut at 80
        elif r < 0.1:
            misses.append(len(out))
            out.append(rng.choice(NEAR_MISSES))
        elif r < 0.11:
            out.append(f"2024-05-01 12:{rng.randint(0, 59):02d}:00,001 - INFO - "
                       "lightning.pytorch.callbacks.model_checkpoint - Epoch "
                       f"{epoch}, global step {n}: 'val_loss' reached 2.31")
        if n >= 1000:
            n, epoch = 1, epoch + 1
    return "\n".join(out) + "\n", misses


@pytest.mark.parametrize("seed", [1, 2])
def test_described_bars_equal_per_line(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    text, misses = _log(seed, 6000)
    rows = both_paths(JobLogParser, text, "slurm-77.out", monkeypatch, ordered=False)
    codes = {r["code"] for r in rows if r["kind"] == "progress_bar"}
    assert {"Epoch 0", "Epoch 1", "Validation DataLoader 0", "Map (num_proc=8)",
            "x" * 80} <= codes
    lines = pl.Series(text.split("\n")[:-1])  # not splitlines: it splits at \r too
    p = JobLogParser(FileContext.for_path("slurm-77.out", UTC))
    got = tqdm_lines(lines, p)
    assert got is not None
    taken = set(got.lines.tolist())
    assert not taken & set(misses)  # each near miss went through parse_line
    assert len(taken) >= 0.85 * (len(lines) - len(misses))
    # without the parser, described bars are left to parse_line (the bare-bar contract)
    assert tqdm_lines(lines) is None


def test_each_near_miss_is_left_to_parse_line() -> None:
    p = JobLogParser(FileContext.for_path("slurm-77.out", UTC))
    good = _bar("Epoch 3", 450, 1000)
    lines = pl.Series([good] * 300 + NEAR_MISSES * 40)
    got = tqdm_lines(lines, p)
    assert got is not None and got.lines.tolist() == list(range(300))
    assert got.frame.get_column("code").unique().to_list() == ["Epoch 3"]


def test_redraws_of_whole_epochs_in_one_physical_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lightning resets one bar every epoch and never closes it: an epoch's 1,000 redraws are
    one physical line of ~90 KB, ended only by what else is printed (ModelCheckpoint's
    ``rank_zero_info``, lightning/pytorch/callbacks/model_checkpoint.py). Fewer lines than
    ``SMALL_CHUNK`` but many bytes: planned, and read per part."""
    from parsers.joblog import small_chunk

    rng = random.Random(5)
    out = []
    for epoch in range(24):
        out.append(_lightning(rng, epoch, 1, 1001) + "\r" + " " * 90 + "\r")
        out.append(f"Epoch {epoch}, global step {1000 * (epoch + 1)}: 'val_loss' reached "
                   f"{rng.uniform(1, 3):0.5f} (best 1.90000), saving model to "
                   f"'/ckpt/epoch={epoch}.ckpt' as top 1")
    text = "\n".join(out) + "\n"
    lines = pl.Series(text.split("\n")[:-1])
    assert not small_chunk(lines)
    got = tqdm_lines(lines, JobLogParser(FileContext.for_path("slurm-77.out", UTC)))
    assert got is not None and got.lines.tolist() == list(range(0, 48, 2))
    assert got.frame.height == 24_000
    rows = both_paths(JobLogParser, text, "slurm-77.out", monkeypatch, ordered=False)
    assert sum(r["kind"] == "progress_bar" for r in rows) == 24_000


@pytest.mark.parametrize("seed", [3, 4])
def test_per_line_shape_and_per_part_shape_agree(seed: int) -> None:
    """``tqdm_lines`` judges lines that repeat by shape per line shape, others per part
    shape: on the same lines both give the same ``TqdmRows``."""
    from parsers import dedupe
    from parsers.tqdm_parts import _rows_by_line, _rows_by_part

    text, _ = _log(seed, 3000)
    lines = pl.Series(text.split("\n")[:-1])
    lines = lines.filter(lines.str.contains("%|", literal=True))  # bars and near misses
    idx = np.arange(len(lines)) * 3 + 1  # chunk indices are passed through
    p = JobLogParser(FileContext.for_path("slurm-77.out", UTC))
    u = dedupe.shapes(lines)
    a = _rows_by_line(idx, lines, u.codes, u.keys.to_list(), p)
    b = _rows_by_part(idx, lines, p)
    assert a is not None and b is not None and len(a.lines) > 1000
    assert a.lines.tolist() == b.lines.tolist() and a.row_line.tolist() == b.row_line.tolist()
    assert a.frame.equals(b.frame)
