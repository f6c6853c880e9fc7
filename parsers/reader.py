"""Finding input files and reading them as chunks of lines, with bounded memory.

Inputs: files, directories (recursive, sorted), shell-style globs; gzip is detected by its magic
bytes, whatever the name. Lines are returned per chunk (``CHUNK_BYTES``, cut at a newline) as a
polars String Series built without copying the text: the chunk's bytes stay one buffer and each
line is an Arrow string view into it. ``\\n`` and a ``\\r`` before it are not part of a line.
Invalid UTF-8 is replaced (U+FFFD) rather than rejected, so no line is lost to its encoding.
"""

from __future__ import annotations

import glob
import gzip
import os
import queue
import threading
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeVar

import numpy as np
import polars as pl
import pyarrow as pa

CHUNK_BYTES = 8 << 20
T = TypeVar("T")
SNIFF_BYTES = 64 << 10
_SKIP_DIRS = {".git", "__pycache__", ".venv", "node_modules"}
_SKIP_SUFFIXES = {".parquet", ".duckdb", ".wal", ".png", ".pdf", ".html", ".pyc"}
#: documentation beside logs (a sample's NOTES.md); skipped inside directories and counted
_DOC_SUFFIXES = {".md", ".rst"}


class InputError(ValueError):
    """An input path that cannot be read; the message says what to do."""


@dataclass(frozen=True)
class InputFile:
    path: Path
    display: str  #: the path as shown to the user and stored in ``file`` columns


def expand_inputs(paths: list[str], skipped: list[str] | None = None) -> list[InputFile]:
    """Files named by ``paths`` (files, directories, globs), sorted, without duplicates.

    Inside directories, our own outputs (Parquet, DuckDB, reports) and documentation files
    (``*.md``, ``*.rst``) are not logs: they are left out and appended to ``skipped`` so the
    caller can say so. A file named explicitly is always read."""
    out: list[InputFile] = []
    seen: set[Path] = set()
    for given in paths:
        candidates: list[Path]
        if os.path.exists(given):
            candidates = [Path(given)]
        else:
            matches = sorted(glob.glob(given, recursive=True))
            if not matches:
                raise InputError(f"no such file, directory or glob match: {given!r}; "
                                 "give log files, directories or a quoted glob")
            candidates = [Path(m) for m in matches]
        for c in candidates:
            for f in _walk(c, skipped if skipped is not None else []):
                key = f.resolve()
                if key not in seen:
                    seen.add(key)
                    out.append(InputFile(f, str(f)))
    return out


def _walk(p: Path, skipped: list[str]) -> Iterator[Path]:
    if p.is_dir():
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
            for name in sorted(files):
                f = Path(root) / name
                if f.suffix.lower() in _SKIP_SUFFIXES or f.suffix.lower() in _DOC_SUFFIXES:
                    skipped.append(str(f))
                else:
                    yield f
    elif p.is_file():
        yield p
    else:
        raise InputError(f"{str(p)!r} is neither a file nor a directory")


def open_binary(path: Path) -> BinaryIO:
    """Open a file, transparently decompressing gzip (detected by magic bytes)."""
    f = open(path, "rb")  # noqa: SIM115 - returned to the caller
    magic = f.read(2)
    f.seek(0)
    if magic == b"\x1f\x8b":
        f.close()
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return f


def read_head(path: Path) -> bytes:
    with open_binary(path) as f:
        return f.read(SNIFF_BYTES)


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _valid_utf8(data: bytes | bytearray) -> bytes | bytearray:
    """``data`` if it is valid UTF-8, else a copy with invalid bytes replaced (U+FFFD).

    ASCII is checked by numpy (~1 ms per 8 MiB, without the GIL, where ``bytes.isascii``
    holds it: the parsing thread would wait)."""
    if len(data) < 4096 and data.isascii():
        return data
    if len(data) >= 4096 and int(np.frombuffer(data, np.uint8).max(initial=0)) < 128:
        return data
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace").encode("utf-8")


def lines_series(data: bytes | bytearray | memoryview) -> pl.Series:
    """Split ``data`` (ends with ``\\n``, valid UTF-8) into a zero-copy Series of lines."""
    a = np.frombuffer(data, np.uint8)
    nl = np.flatnonzero(a == 10)
    n = len(nl)
    if n == 0:
        return pl.Series("line", [], dtype=pl.String)
    starts = np.empty(n, np.int64)
    starts[0] = 0
    starts[1:] = nl[:-1] + 1
    ends = nl
    prev = a[np.maximum(ends - 1, 0)]
    cr = (prev == 13) & (ends > starts)
    if cr.any():
        ends = ends - cr
    lens = ends - starts
    # every line as a long one (length, 4-byte prefix, buffer 0, offset), then the short ones
    # (<= 12 bytes) overwritten with their bytes inline
    views = np.empty((n, 4), np.int32)
    views[:, 0] = lens
    if len(a) >= 4:  # the prefix: the int32 at each start (an unaligned view, stride 1)
        words = np.ndarray(shape=(len(a) - 3,), dtype="<i4", buffer=a, strides=(1,))
        views[:, 1] = words[np.minimum(starts, len(a) - 4)]
    views[:, 2] = 0
    views[:, 3] = starts
    short = np.flatnonzero(lens <= 12)
    if short.size:
        vb = views.view(np.uint8)
        padded = np.concatenate([a, np.zeros(16, np.uint8)])
        inline = padded[starts[short][:, None] + np.arange(12)[None, :]]
        inline *= (np.arange(12)[None, :] < lens[short][:, None]).astype(np.uint8)
        vb[short, 4:16] = inline
    arr = pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(views),
                                                      pa.py_buffer(data)])
    s = pl.from_arrow(arr)
    assert isinstance(s, pl.Series)
    return s.alias("line")


def iter_line_chunks(path: Path, chunk_bytes: int = CHUNK_BYTES
                     ) -> Iterator[tuple[pl.Series, int, int]]:
    """Yield (lines, first line number (1-based), bytes in chunk) for a text file.

    Each chunk is read into a buffer after the previous chunk's unfinished last line, so the
    text is copied once (by the read) and the lines are views into that buffer. Buffers are
    reused once no Series views them any more (``_buffer``), which saves the kernel zeroing
    fresh pages for every chunk."""
    line_no = 1
    rest = b""
    pool: list[bytearray] = []
    with open_binary(path) as f:
        left = None if isinstance(f, gzip.GzipFile) else os.fstat(f.fileno()).st_size
        while True:
            want = chunk_bytes if left is None else max(1, min(chunk_bytes, left))
            buf = _buffer(pool, len(rest) + want)
            buf[: len(rest)] = rest
            got = f.readinto(memoryview(buf)[len(rest):])  # type: ignore[attr-defined]
            if not got:
                break
            if left is not None:
                left -= got
            size = len(rest) + got
            cut = buf.rfind(b"\n", 0, size)
            if cut < 0:
                rest = bytes(buf[:size])
                pool.append(buf)
                continue
            rest = bytes(buf[cut + 1: size])
            del buf[cut + 1:]
            s = lines_series(_valid_utf8(buf))
            pool.append(buf)
            yield s, line_no, cut + 1
            line_no += len(s)
    if rest:
        s = lines_series(_valid_utf8(rest + b"\n"))
        yield s, line_no, len(rest)


_POOL = 6  #: buffers kept for reuse (prefetch depth + the chunk being parsed + slack)


def _buffer(pool: list[bytearray], size: int) -> bytearray:
    """A bytearray of ``size`` bytes: a pooled one that nothing views any more, else a new one.

    Safe by construction: CPython refuses to resize a bytearray while a buffer export (the
    Arrow buffer under a chunk's Series) is alive, so the probing resize raises BufferError
    for a buffer still in use and only a free one is handed out."""
    for i, buf in enumerate(pool):
        try:
            buf.append(0)
        except BufferError:
            continue
        if len(buf) < size:
            buf.extend(bytes(size - len(buf)))
        else:
            del buf[size:]
        return pool.pop(i)
    while len(pool) >= _POOL:
        pool.pop(0)
    return bytearray(size)


_END = object()


def prefetch(it: Iterator[T], depth: int = 2) -> Generator[T, None, None]:
    """Run ``it`` in a background thread, ``depth`` items ahead: reading and splitting the next
    chunk (numpy and file I/O release the GIL) overlaps with parsing the current one."""
    q: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def run() -> None:
        try:
            for item in it:
                while not stop.is_set():
                    try:
                        q.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(_END)
        except BaseException as e:  # handed to the consumer, raised there
            q.put(_Failure(e))

    t = threading.Thread(target=run, name="tormortem-reader", daemon=True)
    t.start()
    try:
        while True:
            item = q.get()
            if item is _END:
                return
            if isinstance(item, _Failure):
                raise item.error
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        t.join(timeout=5)


@dataclass
class _Failure:
    error: BaseException
