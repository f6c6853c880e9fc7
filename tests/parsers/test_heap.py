"""``parsers.heap``: glibc's ``malloc_trim`` every ``TRIM_EVERY`` chunks of a file (what keeps
a 10 GiB syslog's ingest near 300 MiB of RSS: the function's docstring), and the mmap / trim
thresholds set once (what spares every chunk re-faulting its temporaries: the module's)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from parsers import driver, heap
from parsers.reader import InputFile


def test_glibc_is_found_on_linux() -> None:
    assert (heap._libc() is not None) == sys.platform.startswith("linux")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt only")
def test_thresholds_are_accepted() -> None:
    # mallopt returns 0 for a value it refuses, which would leave glibc's dynamic
    # thresholds in place without a word
    assert heap.tune()
    assert heap.MMAP_THRESHOLD <= 32 << 20  # the ceiling of glibc's own dynamic threshold


def test_trimmed_every_few_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a syslog of 20 chunks of 64 KiB (real rsyslog traditional format lines)
    line = ("May  1 00:00:00 node0025 systemd[1]: Starting sysstat-collect.service - system "
            "activity accounting tool...\n")
    log = tmp_path / "syslog"
    log.write_text(line * (20 * (64 << 10) // len(line)))
    calls: list[int] = []
    monkeypatch.setattr(heap, "_TRIM", calls.append)
    monkeypatch.setattr(driver, "CHUNK_BYTES", 64 << 10)
    chunks = 0
    real = driver._prepared_chunks

    def counted(*a: object, **kw: object) -> object:
        nonlocal chunks
        kw["chunk_bytes"] = 64 << 10
        for c in real(*a, **kw):  # type: ignore[arg-type]
            chunks += 1
            yield c

    monkeypatch.setattr(driver, "_prepared_chunks", counted)
    before = next(heap._chunks)
    res = driver.parse_file(InputFile(log, str(log)), lambda b: None, lambda b: None)
    assert res.acct.read == res.acct.irrelevant > 0
    assert chunks >= 19
    # one call per TRIM_EVERY chunks read, counted across files
    assert len(calls) == (before + chunks) // heap.TRIM_EVERY - before // heap.TRIM_EVERY
    assert calls and set(calls) == {0}
