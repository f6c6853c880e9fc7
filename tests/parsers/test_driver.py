"""The driver's chunk pipeline: every chunk prepared exactly once and handed over in order,
whether the helper thread or the parsing thread (work stealing) prepared it."""

from __future__ import annotations

import threading
from datetime import UTC
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from parsers.base import FileContext, LineParser
from parsers.driver import _prepared_chunks


class _Recording(LineParser):
    name = "recording"

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.calls: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def prepare(self, lines: pl.Series) -> Any:
        first = lines[0]
        with self.lock:
            self.calls.append((first, threading.current_thread().name))
        return ("prepared", first, len(lines))


def test_every_chunk_prepared_once_and_in_order(tmp_path: Path) -> None:
    p = tmp_path / "x.log"
    p.write_text("".join(f"line {i:05d} " + "x" * 40 + "\n" for i in range(4000)))
    parser = _Recording(FileContext.for_path(str(p), UTC))
    got = list(_prepared_chunks(parser, p, chunk_bytes=4096))
    assert len(got) > 40
    firsts = [lines[0] for lines, _, _, _ in got]
    assert [prep for _, _, _, prep in got] == [("prepared", lines[0], len(lines))
                                               for lines, _, _, _ in got]
    assert [first for _, first, _, _ in got] == [
        1 + sum(len(lines) for lines, _, _, _ in got[:i]) for i in range(len(got))]
    assert sorted(c for c, _ in parser.calls) == sorted(firsts)  # once each
    assert sum(len(lines) for lines, _, _, _ in got) == 4000


def test_a_parser_without_prepare_gets_none(tmp_path: Path) -> None:
    p = tmp_path / "y.log"
    p.write_text("a\nb\n")

    class Plain(LineParser):
        name = "plain"

    got = list(_prepared_chunks(Plain(FileContext.for_path(str(p), UTC)), p))
    assert [(lines.to_list(), prep) for lines, _, _, prep in got] == [(["a", "b"], None)]


def test_both_threads_prepare_when_parsing_is_slow_or_fast(tmp_path: Path) -> None:
    # the helper thread prepares ahead; the parsing thread steals a chunk whose preparation
    # has not started. Over many chunks both happen, and the result is the same either way.
    import time

    p = tmp_path / "z.log"
    p.write_text("".join(f"{i}\n" for i in range(20000)))

    class Slow(_Recording):
        def prepare(self, lines: pl.Series) -> Any:
            time.sleep(0.002)
            return super().prepare(lines)

    parser = Slow(FileContext.for_path(str(p), UTC))
    got = list(_prepared_chunks(parser, p, chunk_bytes=1024))
    threads = {t for _, t in parser.calls}
    assert any(t.startswith("tormortem-prepare") for t in threads)
    assert [prep[1] for _, _, _, prep in got] == [lines[0] for lines, _, _, _ in got]


def test_chunks_read_before_a_failed_read_are_still_handed_over(tmp_path: Path) -> None:
    """A compressed file cut short fails in the reader after some chunks: those must reach
    the parser (prepared) before the error, not be dropped from the look-ahead window."""
    import gzip

    import pytest

    from parsers.compressed import CorruptInput

    p = tmp_path / "z.log.gz"
    text = "".join(f"line {i:05d} " + "x" * 40 + "\n" for i in range(20000)).encode()
    p.write_bytes(gzip.compress(text)[:40_000])  # cut inside the stream
    parser = _Recording(FileContext.for_path(str(p), UTC))
    got = []
    with pytest.raises(CorruptInput, match="truncated"):
        for lines, _, _, prep in _prepared_chunks(parser, p, chunk_bytes=4096):
            got.append((lines[0], prep))
    assert len(got) > 10
    assert [prep for _, prep in got] == [("prepared", first, prep[2]) for first, prep in got]
    # the last chunk read too: the line the cut ends in, as far as it goes ("line 158")
    assert len(got) == len(parser.calls)
    assert got[-1][0] == min(parser.calls, key=lambda c: len(c[0]))[0]
    assert len(got[-1][0]) < len(got[0][0]) and text.decode().find(got[-1][0]) > 0


def test_a_stolen_preparation_that_fails_fails_in_its_turn(tmp_path: Path) -> None:
    """The parsing thread steals chunk 2 while the helper thread is busy with chunk 1; chunk
    2's preparation raises: chunks 0 and 1 are still handed over first, as when the helper
    thread itself fails on chunk 2."""
    import time

    import pytest

    p = tmp_path / "s.log"
    p.write_text("".join(f"line {i:05d} " + "x" * 40 + "\n" for i in range(400)))

    class Failing(_Recording):
        def prepare(self, lines: pl.Series) -> Any:
            n = int(lines[0].split()[1])
            if 0 < n < 100:  # chunk 1, on the helper thread: slow, so chunk 2 is stolen
                time.sleep(0.6)
            elif 100 <= n < 200:
                raise ValueError("chunk 2")
            return super().prepare(lines)

    parser = Failing(FileContext.for_path(str(p), UTC))
    got = []
    with pytest.raises(ValueError, match="chunk 2"):
        for lines, _, _, _ in _prepared_chunks(parser, p, chunk_bytes=4096):
            got.append(lines[0])
            time.sleep(0.2)  # parsing chunk 0: the helper thread begins chunk 1
    assert got == ["line 00000 " + "x" * 40, "line 00078 " + "x" * 40]  # 78 lines a chunk


@pytest.mark.parametrize(("value", "want"), [("abc", 256), ("", 256), ("-1", 256), ("0", 0),
                                             ("64", 64), (" 12 ", 12)])
def test_a_junk_small_chunk_setting_is_its_default(monkeypatch: pytest.MonkeyPatch, value: str,
                                                   want: int) -> None:
    """TORMORTEM_SMALL_CHUNK=abc made every command an internal error at import (probe)."""
    from parsers.base import _small_chunk

    monkeypatch.setenv("TORMORTEM_SMALL_CHUNK", value)
    assert _small_chunk() == want
