"""Reading files as chunks of zero-copy lines: every line once, in order, whatever the chunk
boundaries, and a chunk a caller still holds is never overwritten by buffer reuse."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from parsers.reader import iter_line_chunks, lines_series


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
