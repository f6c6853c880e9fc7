"""Reading files as chunks of zero-copy lines: every line once, in order, whatever the chunk
boundaries, and a chunk a caller still holds is never overwritten by buffer reuse."""

from __future__ import annotations

import gzip
import random
from pathlib import Path
from typing import Any

import pytest

from parsers import reader
from parsers.reader import iter_line_chunks, lines_series

ROOT = Path(__file__).resolve().parents[2]


def _text(n: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        k = rng.choice([0, 1, 5, 12, 13, 40, 300])
        body = "".join(rng.choice("abcdé xyz|:") for _ in range(k))
        lines.append(f"{i} {body}" if k else "")
    return "\r\n".join(lines[:50]) + "\r\n" + "\n".join(lines[50:]) + "\n"


def test_lines_series_splits_exactly() -> None:
    text = "short\nexactly12byte\n\n1234567890123\r\nlast"
    s = lines_series((text + "\n").encode())
    assert s.to_list() == ["short", "exactly12byte", "", "1234567890123", "last"]


def test_chunks_held_by_the_caller_stay_intact(tmp_path: Path) -> None:
    text = _text(3000)
    p = tmp_path / "a.log"
    p.write_bytes(text.encode())
    want = text.replace("\r\n", "\n").split("\n")[:-1]
    # all chunks kept alive at once: no buffer may be reused under them
    held = list(iter_line_chunks(p, chunk_bytes=4096))
    assert len(held) > 20
    assert [line for s, _, _ in held for line in s.to_list()] == want
    assert [first for _, first, _ in held] == [
        1 + sum(len(s) for s, _, _ in held[:i]) for i in range(len(held))]
    assert sum(n for _, _, n in held) == len(text.encode())


def test_chunks_released_as_read_give_the_same_lines(tmp_path: Path) -> None:
    text = _text(3000, seed=1)
    p = tmp_path / "b.log.gz"
    p.write_bytes(gzip.compress(text.encode()))
    got: list[str] = []
    for s, _, _ in iter_line_chunks(p, chunk_bytes=2048):  # each chunk dropped after use
        got += s.to_list()
    assert got == text.replace("\r\n", "\n").split("\n")[:-1]


def test_a_series_pins_its_buffer_until_released() -> None:
    # what buffer reuse relies on: CPython refuses to resize a bytearray while the Arrow
    # buffer under a Series exports it, and allows it again once the Series is gone
    buf = bytearray(b"first line of the chunk\nsecond line of the chunk\n")
    s = lines_series(buf)
    with pytest.raises(BufferError):
        buf.append(0)
    assert s.to_list() == ["first line of the chunk", "second line of the chunk"]
    del s
    buf.append(0)


def test_utf8_check_agrees_with_python() -> None:
    """Arrow's validator decides as Python's strict decoder: on the forms UTF-8 forbids
    (surrogates, overlong forms, code points past U+10FFFF, truncated and stray bytes) and on
    random bytes; an invalid chunk is then decoded with replacement, as before."""
    from parsers.reader import _valid_utf8, utf8_valid

    def python(b: bytes) -> bool:
        try:
            b.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    cases = [b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xe0\x80\x80", b"\xc2",
             b"\x80", b"ok \xc3\xa9", b"\xef\xbf\xbd", b"\xf4\x8f\xbf\xbf", b"\xed\x9f\xbf"]
    rng = random.Random(3)
    cases += [bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))) for _ in range(20000)]
    for b in cases:
        assert utf8_valid(b) == python(b), b
    big = "█ 5%|▌ step\n".encode() * 1000  # >= 4096 bytes of valid UTF-8: kept as it is
    assert _valid_utf8(big) is big
    bad = big[:5000] + b"\xff" + big[5000:]
    assert _valid_utf8(bad) == bad.decode("utf-8", errors="replace").encode()


def test_prefetch_closes_at_once_after_the_reading_ended() -> None:
    """A consumer that stops early (an error of its own, Ctrl-C) while the reader thread is
    handing over its end mark to a full queue: closing returns at once, not after the
    thread's 5 s join timeout."""
    import time

    from parsers.reader import prefetch

    g = prefetch(iter([1, 2]), depth=1)
    assert next(g) == 1
    time.sleep(0.3)  # the thread has put 2 and waits to put the end mark
    t0 = time.monotonic()
    g.close()
    assert time.monotonic() - t0 < 1.0


class _Trickle:
    """A binary file whose ``readinto`` returns at most ``step`` bytes (as a URL's stream
    returns what has arrived), optionally failing once ``fail_at`` bytes were read."""

    def __init__(self, fh: Any, step: int, fail_at: int | None = None) -> None:
        self.fh, self.step, self.fail_at, self.pos = fh, step, fail_at, 0

    def readinto(self, b: memoryview) -> int:
        if self.fail_at is not None and self.pos >= self.fail_at:
            raise OSError("connection reset")
        n: int = self.fh.readinto(b[: self.step])
        self.pos += n
        return n

    def fileno(self) -> int:
        return int(self.fh.fileno())

    def __enter__(self) -> _Trickle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.fh.close()


def _chunks(path: Path, **kw: Any) -> list[tuple[list[str], int, int]]:
    return [(s.to_list(), first, n) for s, first, n in reader.iter_line_chunks(path, **kw)]


def test_short_reads_give_the_same_chunks(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The chunks' bounds do not depend on how the bytes arrive (they decide the order of a
    chunk's rows: the demo's job log read over http:// once gave its rows in another order)."""
    log = ROOT / "sample_logs" / "demo" / "jobs" / "slurm-1002.out"
    whole = _chunks(log, chunk_bytes=4096)
    assert len(whole) > 3
    real = reader.open_binary
    monkeypatch.setattr(reader, "open_binary", lambda f: _Trickle(real(f), 777))
    assert _chunks(log, chunk_bytes=4096) == whole


def test_a_read_failing_part_way_keeps_the_lines_before(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "x.log"
    log.write_text("".join(f"line {i}\n" for i in range(2000)))
    real = reader.open_binary
    monkeypatch.setattr(reader, "open_binary", lambda f: _Trickle(real(f), 1000, 5000))
    got: list[str] = []
    with pytest.raises(OSError, match="connection reset"):
        for s, _first, _n in reader.iter_line_chunks(log, chunk_bytes=4096):
            got += s.to_list()
    # the first chunk (4,096 bytes asked, all arrived in five reads) and the lines of the one
    # read of 1,000 bytes of the second before the reset, up to its last newline
    data = log.read_bytes()[:5096]
    assert got == data[: data.rfind(b"\n")].decode().split("\n")


class _Reset(_Trickle):
    """Fails as a URL's reader does (``remote._Guarded``): its error raised while handling
    the backend's, whose traceback holds the frame with the buffer being filled."""

    def readinto(self, b: memoryview) -> int:
        if self.fail_at is not None and self.pos >= self.fail_at:
            try:
                self._backend(b)
            except ValueError:
                raise OSError("connection reset") from None
        return super().readinto(b)

    def _backend(self, b: memoryview) -> None:
        raise ValueError("Response payload is not completed")


def test_a_read_failing_while_handling_another_keeps_the_lines_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first bytes read hold newlines, so the chunk is cut before the error is raised: a
    traceback kept in the error's context held the buffer (``BufferError``, an "internal
    error" for a URL whose first KiB was replayed from the head looked at when opened)."""
    log = tmp_path / "x.log"
    log.write_text("".join(f"line {i}\n" for i in range(2000)))
    real = reader.open_binary
    monkeypatch.setattr(reader, "open_binary", lambda f: _Reset(real(f), 1000, 1000))
    got: list[str] = []
    with pytest.raises(OSError, match="connection reset"):
        for s, _first, _n in reader.iter_line_chunks(log, chunk_bytes=4096):
            got += s.to_list()
    data = log.read_bytes()[:1000]
    assert got == data[: data.rfind(b"\n")].decode().split("\n")


def _redraws(a: int, b: int, total: int = 100000) -> bytes:
    """tqdm's redraws of a bar never closed (tqdm/std.py status_printer: ``\\r`` + the bar),
    with Lightning's description and postfix (lightning/pytorch/callbacks/progress/
    tqdm_progress.py)."""
    return "".join(f"\rEpoch 0: {100 * n // total:3d}%|{'█' * (10 * n // total):10s}| "
                   f"{n}/{total} [00:{n % 60:02d}<01:00, 5.38it/s, v_num=0, train_loss=2.31]"
                   for n in range(a, b)).encode()


@pytest.mark.parametrize("newline", [True, False])
@pytest.mark.parametrize("chunk", [64 << 10, 300_000])
def test_a_line_of_redraws_past_the_limit_keeps_its_first_and_last(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, newline: bool, chunk: int) -> None:
    """A line of ``\\r`` parts longer than MAX_LINE_BYTES keeps its head and its last
    MAX_LINE_BYTES / 2, both cut at ``\\r``: whole redraws, the run's last one among them; the
    middle is counted in cut_bytes; every line is counted once."""
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 1 << 20)
    long = _redraws(1, 30001)  # ~3 MiB
    data = b"a\nb\nc\n" + long + (b"\nd\ne\n" if newline else b"")
    p = tmp_path / "lightning.out"
    p.write_bytes(data)
    stats = reader.ReadStats()
    got = [ln for s, _, _ in iter_line_chunks(p, chunk_bytes=chunk, stats=stats)
           for ln in s.to_list()]
    assert len(got) == (6 if newline else 4)
    assert got[:3] == ["a", "b", "c"] and got[4:] == (["d", "e"] if newline else [])
    kept = got[3].encode()
    parts = kept.split(b"\r")
    assert parts[0] == b"" and len(kept) <= 1 << 20
    assert parts[1] == _redraws(1, 2)[1:] and parts[-1] == _redraws(30000, 30001)[1:]
    whole = set(long.split(b"\r"))
    assert all(x in whole for x in parts)  # no redraw cut in two
    assert (stats.cut_lines, stats.cut_bytes) == (1, len(long) - len(kept))
    assert stats.bytes == len(data)


def test_the_last_redraw_of_a_long_line_gives_its_row(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import UTC

    from parsers.driver import parse_text
    from parsers.joblog import JobLogParser

    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 1 << 20)
    # longer than a chunk (CHUNK_BYTES, 8 MiB): only then is the limit met
    events, _, acct = parse_text(JobLogParser, (_redraws(1, 90001) + b"\n").decode(),
                                 "slurm-7.out", tz=UTC)
    its = events.column("iteration").to_pylist()
    assert acct.read == 1 and min(its) == 1 and max(its) == 90000
    assert 8000 < len(its) < 12000  # the middle's rows are the ones not read


def test_a_file_cut_while_read_says_so(tmp_path: Path) -> None:
    """logrotate's copytruncate empties a log in place while it is read: what was there is
    read, and the stats (so the file's note, then analyze's unread_input) say the rest is
    missing (fault probe K3: a TOR from half a job log, silently)."""
    from parsers.filecheck import with_notes

    f = tmp_path / "slurm-7.out"
    line = b"x" * 99 + b"\n"
    f.write_bytes(line * 40_000)  # 4 MB
    st = reader.ReadStats()
    chunks = iter_line_chunks(f, chunk_bytes=1 << 20, stats=st)
    n = len(next(chunks)[0])
    with open(f, "r+b") as fh:
        fh.truncate(1_500_000)
    n += sum(len(s) for s, _, _ in chunks)
    assert n == 15_000 and st.bytes == 1_500_000 and st.shrank and st.expected == 4_000_000
    note = with_notes(None, st)
    assert note is not None and "cut while read: 1,500,000 of its 4,000,000 bytes" in note
    whole = reader.ReadStats()
    assert sum(len(s) for s, _, _ in iter_line_chunks(f, stats=whole)) == 15_000
    assert not whole.shrank and with_notes(None, whole) is None
