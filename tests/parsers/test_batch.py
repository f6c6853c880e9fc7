"""Small files of one kind prepared together (``parsers.batch``): the same prepared values,
rows and counts as each file prepared alone.

The files are real kernel-log lines (``tests/data/formats/kernel.jsonl``: each group's
lines as users pasted them from dmesg, journalctl and rsyslog, the source cited per group),
each group repeated into a file of its own, beside an rsyslog file of healthy-node lines
("May  1 00:00:00 node0025 systemd[1]: ..." as rsyslog's RSYSLOG_TraditionalFileFormat
writes them), a file of so few lines that it is read line by line, and one with pdsh's
``host: `` labels (``pdsh -w ... dmesg``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from parsers import base, batch
from parsers.driver import open_parser
from parsers.kernel import KernelLogParser
from parsers.reader import InputFile, ReadStats, iter_line_chunks
from pipeline.ingest.run import ingest
from tests.pipeline.test_parallel import _same_outputs

FORMATS = Path(__file__).resolve().parents[1] / "data" / "formats" / "kernel.jsonl"
HEALTHY = [
    "May  1 00:00:00 node0025 systemd[1]: Starting sysstat-collect.service - system activity "
    "accounting tool...",
    "May  1 00:17:01 node0025 CRON[23493]: (root) CMD (   cd / && run-parts --report "
    "/etc/cron.hourly)",
    "May  1 04:11:27 node0025 kernel: [1882614.044410] cni0: port 4(vethc497730a) entered "
    "forwarding state",
]


def _groups() -> list[list[str]]:
    rows = [json.loads(x) for x in FORMATS.read_text().splitlines() if x.strip()]
    return [[ln["text"] for ln in r["lines"]] for r in rows
            if r["wrapper"] not in ("journalctl-json", "none") and r["lines"]]


def _files(tmp: Path) -> list[Path]:
    out = []
    for i, lines in enumerate(_groups()[:12]):
        p = tmp / f"node{i:03d}" / "kern.log"
        p.parent.mkdir()
        p.write_text("\n".join((lines * (300 // len(lines) + 1))[:300 + i]) + "\n")
        out.append(p)
    few = tmp / "node900" / "kern.log"
    few.parent.mkdir()
    few.write_text("\n".join(HEALTHY * 20) + "\n")  # 60 lines: read line by line
    healthy = tmp / "node901" / "syslog"
    healthy.parent.mkdir()
    healthy.write_text("\n".join(HEALTHY * 400) + "\n")
    labelled = tmp / "node902" / "pdsh-dmesg.txt"
    labelled.parent.mkdir()
    labelled.write_text("".join(f"gpu-{k % 7:02d}: {ln}\n" for k, ln in
                                enumerate(_groups()[3] * 60)))
    return [*out, few, healthy, labelled]


def _kernel(p: Path) -> bool:
    got = open_parser(InputFile(p, str(p)), ReadStats())
    return isinstance(got, tuple) and isinstance(got[0], KernelLogParser)


def test_kernel_masks_of_files_together_are_each_files(tmp_path: Path) -> None:
    files = [p for p in _files(tmp_path) if _kernel(p)]
    assert len(files) >= 10
    parsers, alone, lines = [], [], []
    for p in files:
        got = open_parser(InputFile(p, str(p)), ReadStats())
        assert isinstance(got, tuple) and isinstance(got[0], KernelLogParser)
        chunk = next(iter(iter_line_chunks(p)))[0]
        parsers.append(got[0])
        lines.append(chunk)
        alone.append(got[0].prepare(chunk))
    assert sum(a is None for a in alone) == 1  # the 60-line file
    import polars as pl

    together = parsers[0].prepare(pl.concat(lines))
    shares = parsers[0].split_prepared(together, [len(x) for x in lines])
    for p, a, s in zip(files, alone, shares, strict=True):
        if a is None:
            assert s is None
            continue
        assert s is not None and a[1].equals(s[1]), p
        assert a[0].keys() == s[0].keys()
        for k in a[0]:
            assert np.array_equal(a[0][k], s[0][k]), (p, k)


def ingest_together_and_alone(src: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Ingest ``src`` with runs of small files prepared together and with none (into
    ``out``/together and ``out``/alone), assert every output equal and that the second
    made no run; return how many files the first read from runs."""
    taken: list[object] = []
    real = batch.Lookahead.take

    def spy(self: batch.Lookahead, i: int) -> batch.Ready | batch.Opened | None:
        got = real(self, i)
        taken.append(got)
        return got

    monkeypatch.setattr(batch.Lookahead, "take", spy)
    from parsers.reader import expand_inputs

    inputs = expand_inputs([str(src)])
    ingest(inputs, out / "together", jobs=1)
    ready = sum(isinstance(t, batch.Ready) for t in taken)
    monkeypatch.setattr(batch, "SMALL_BYTES", -1)
    taken.clear()
    ingest(inputs, out / "alone", jobs=1)
    assert not any(isinstance(t, batch.Ready) for t in taken)
    _same_outputs(out / "together", out / "alone")
    return ready


def test_prepared_together_same_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                       ) -> None:
    """Ingest of the files with runs prepared together and with none: every output equal;
    the runs were used (``take`` gave files read ahead)."""
    src = tmp_path / "logs"
    src.mkdir()
    files = _files(src)
    ready = ingest_together_and_alone(src, tmp_path, monkeypatch)
    # every kernel log (some groups' wrappers are another parser's: they end a run)
    assert ready == sum(_kernel(p) for p in files) >= 10


def test_a_run_ends_at_another_kind(tmp_path: Path) -> None:
    """A job log between node logs ends a run (it is read as usual) and the next node log
    begins another."""
    src = _files(tmp_path)[:3]
    job = tmp_path / "slurm-77.out"
    # Megatron-LM's training_log line (megatron/training/training.py)
    job.write_text(" [2024-05-01 00:00:00] iteration        1/    1000 | consumed samples: "
                   "  512 | elapsed time per iteration (ms): 1234.5 | learning rate: "
                   "1.000E-04 | global batch size:   512 | lm loss: 1.0E+01 |\n" * 300)
    order = [src[0], src[1], job, src[2]]
    look = batch.Lookahead([InputFile(p, str(p)) for p in order],
                           [ReadStats() for _ in order], open_parser)
    got = [look.take(i) for i in range(len(order))]
    assert [type(g).__name__ for g in got] == ["Ready", "Ready", "Opened", "Ready"]
    assert len(got[0].lines) >= base.SMALL_CHUNK  # type: ignore[union-attr]
