"""Small job logs prepared together (``parsers.batch``, ``parsers.joblog_batch``): each file's
prepared value is what ``JobLogParser.prepare`` of that file alone gives, and the ingest's
outputs are those of each file prepared alone.

The files are real job-output lines (``tests/data/formats``: progress.jsonl -- Megatron-LM's
``training_log`` lines behind srun/torchrun/mpirun/kubectl wrappers, tqdm bars, HF and
DeepSpeed lines --, checkpoint.jsonl and torch.jsonl; each group's source is cited in the
file), groups mixed and repeated into files of 20 to 700 lines: below and above the 65
lines ``prepare`` needs to read iteration lines vectorised and the 256 lines it needs to
plan a chunk without them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from parsers import batch
from parsers.driver import open_parser
from parsers.joblog import JobLogParser
from parsers.joblog_fast import FastIterations
from parsers.reader import InputFile, ReadStats, iter_line_chunks
from tests.parsers.test_batch import ingest_together_and_alone

FORMATS = Path(__file__).resolve().parents[1] / "data" / "formats"
SIZES = [20, 70, 150, 300, 700, 64, 65, 256]


def _groups(name: str) -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in (FORMATS / f"{name}.jsonl").read_text().splitlines()
            if x.strip()]
    return [r for r in rows if r["lines"]]


def _texts(group: dict[str, Any]) -> list[str]:
    return [ln["text"] for ln in group["lines"]]


def _files(tmp: Path) -> list[Path]:
    progress = _groups("progress")
    iters = [g for g in progress if "megatron" in g["format"]
             and any("elapsed time per iteration (ms):" in t for t in _texts(g))]
    others = [g for g in progress if g not in iters]
    ckpt, torch = _groups("checkpoint"), _groups("torch")
    out = []
    for k in range(40):
        lines = _texts(iters[(5 * k) % len(iters)]) + _texts(ckpt[(7 * k) % len(ckpt)])
        if k % 3 == 0:
            lines += _texts(torch[(11 * k) % len(torch)])
        if k % 8 == 7:  # no iteration line at all (tqdm bars, HF, DeepSpeed)
            lines = _texts(others[k % len(others)]) + _texts(others[(k + 9) % len(others)])
        n = SIZES[k % len(SIZES)]
        p = tmp / f"slurm-{1000 + k}.out"
        p.write_text("\n".join((lines * (n // len(lines) + 1))[:n]) + "\n")
        out.append(p)
    # every line behind its own ``kubectl logs --timestamps`` stamp (RFC3339Nano, UTC): more
    # distinct prefixes than ``fast_prefix`` tabulates, so ``prepare`` plans around them
    kube = next(g for g in iters if g["wrapper"] == "kubectl-timestamps")
    msgs = [t.split("Z", 1)[1] for t in _texts(kube)] + ["[after training is done] datetime: "
                                                        "2023-09-04 10:00:00 "]
    p = tmp / "slurm-2000.out"
    p.write_text("".join(f"2023-09-04T09:{k // 6000 % 60:02d}:{k // 100 % 60:02d}."
                         f"{k:09d}Z{msgs[k % len(msgs)]}\n" for k in range(5000)))
    return [*out, p]


def _joblog(p: Path) -> JobLogParser | None:
    got = open_parser(InputFile(p, str(p)), ReadStats())
    return got[0] if isinstance(got, tuple) and isinstance(got[0], JobLogParser) else None


def _same(a: Any, b: Any, where: str) -> None:
    if isinstance(a, FastIterations):
        assert isinstance(b, FastIterations), where
        for f in ("rows", "iteration", "value", "stamp_s", "msg_start", "prefix_end", "lens"):
            assert np.array_equal(getattr(a, f), getattr(b, f), equal_nan=f == "value"), \
                (where, f)
        text_a = [bytes(a.data[s: s + n]) for s, n in zip(a.starts, a.lens, strict=True)]
        text_b = [bytes(b.data[s: s + n]) for s, n in zip(b.starts, b.lens, strict=True)]
        assert text_a == text_b, where
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            if f.name != "shapes":  # the shapes of the plan of the fast rows' rest: unread
                _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype, where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    elif isinstance(a, tuple | list):
        assert isinstance(b, type(a)) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k}]")
    elif isinstance(a, pl.Series):
        assert isinstance(b, pl.Series) and a.equals(b), where
    else:
        assert a == b, (where, a, b)


def test_job_logs_prepared_together_are_each_files(tmp_path: Path) -> None:
    files = [p for p in _files(tmp_path) if _joblog(p) is not None]
    assert len(files) >= 30
    parsers, parts, alone = [], [], []
    for p in files:
        parser = _joblog(p)
        assert parser is not None
        lines = next(iter(iter_line_chunks(p)))[0]
        parsers.append(parser)
        parts.append(lines)
        alone.append(parser.prepare(lines))
    # every branch of ``prepare`` is met: no fast path (few lines), fast rows with their
    # rest planned, no iteration line (the whole chunk planned), kubectl's stamps
    assert any(a.fast is None for a in alone)
    assert sum(a.plan is not None for a in alone) >= 10
    assert any(a.whole is not None for a in alone)
    assert any(a.kube is not None for a in alone)
    together = batch.prepare_run(parsers, parts)
    for p, a, t in zip(files, alone, together, strict=True):
        _same(a, t, p.name)


def test_job_logs_together_same_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ingest with runs of job logs prepared together and with none: every output equal."""
    src = tmp_path / "jobs"
    src.mkdir()
    files = _files(src)
    ready = ingest_together_and_alone(src, tmp_path, monkeypatch)
    assert ready == sum(_joblog(p) is not None for p in files) >= 30


def test_a_chunk_of_several_buffers_reads_as_its_files(tmp_path: Path) -> None:
    """``megatron_iterations`` of files concatenated (one data buffer each) finds each
    file's rows at the same lines, with the same text, as each file alone."""
    from parsers.joblog_fast import megatron_iterations

    files = [p for p in _files(tmp_path) if p.stat().st_size and len(p.read_text()) > 0]
    parts = [next(iter(iter_line_chunks(p)))[0] for p in files]
    both = pl.concat(parts)
    found = megatron_iterations(both)
    assert found is not None and len(found.rows) > 1000
    at = 0
    for p, part in zip(files, parts, strict=True):
        alone = megatron_iterations(part)
        share = found.lines_between(at, at + len(part))
        at += len(part)
        if alone is None:
            assert len(share.rows) == 0, p.name
        else:
            _same(alone, share, p.name)
