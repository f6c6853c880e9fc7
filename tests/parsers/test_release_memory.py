"""``driver._release_free_memory``: glibc's ``malloc_trim`` every ``TRIM_EVERY`` chunks of a
file (what keeps a 10 GiB syslog's ingest near 300 MiB of RSS: the function's docstring)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from parsers import driver
from parsers.reader import InputFile


def test_malloc_trim_is_found_on_linux() -> None:
    assert (driver._malloc_trim() is not None) == sys.platform.startswith("linux")


def test_trimmed_every_few_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a syslog of 20 chunks of 64 KiB (real rsyslog traditional format lines)
    line = ("May  1 00:00:00 node0025 systemd[1]: Starting sysstat-collect.service - system "
            "activity accounting tool...\n")
    log = tmp_path / "syslog"
    log.write_text(line * (20 * (64 << 10) // len(line)))
    calls: list[int] = []
    monkeypatch.setattr(driver, "_TRIM", calls.append)
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
    before = next(driver._chunks)
    res = driver.parse_file(InputFile(log, str(log)), lambda b: None, lambda b: None)
    assert res.acct.read == res.acct.irrelevant > 0
    assert chunks >= 19
    # one call per TRIM_EVERY chunks read, counted across files
    assert len(calls) == (before + chunks) // driver.TRIM_EVERY - before // driver.TRIM_EVERY
    assert calls and set(calls) == {0}
