"""Reading an input as chunks of lines, with bounded memory.

Lines are returned per chunk (``CHUNK_BYTES``, cut at a newline) as a polars String Series
built without copying the text: the chunk's bytes stay one buffer and each line is an Arrow
string view into it. ``\\n`` and a ``\\r`` before it are not part of a line. Invalid UTF-8 is
replaced (U+FFFD) rather than rejected, so no line is lost to its encoding; UTF-16/32 text
arrives re-encoded as UTF-8 (``parsers.utf16``, ``ReadStats.encoding``).

Choices that keep a run finite and bounded (what ``ReadStats`` reports back):

* A plain file is read up to its size when it was first opened (``ReadStats.limit``, else
  ``fstat`` at opening): a live log that keeps growing is read as it was then, not chased
  (``grew`` says it changed). A URL (``parsers.remote``) is read up to ``limit`` if given
  (its size when surveyed), else to its end.
* A line is cut once more than ``MAX_LINE_BYTES`` of it have been read without a newline: the
  first ``MAX_LINE_BYTES`` stay one line, the rest of it up to the next newline is counted in
  ``cut_bytes`` and not kept (a 400 MB file without newlines is read in bounded memory). A
  line of ``\r`` redraws (a tqdm bar never closed: Lightning resets one bar every epoch, so a
  whole run can be one line) keeps its first and its last ``MAX_LINE_BYTES / 2``, cut at
  ``\r``: the last redraws, which say how far the run got, are read; the middle is counted.
* The content hash (SHA-256 of the bytes read, after decompression) is computed while reading
  when asked (``ReadStats.hash``): one pass over the data, on the reader thread.

Finding inputs is ``parsers.inputs``; opening (decompression, streams) ``parsers.compressed``.
"""

from __future__ import annotations

import hashlib
import os
import queue
import threading
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import polars as pl
import pyarrow as pa

from parsers import utf16
from parsers.compressed import (
    CorruptInput,
    Decompressed,
    compression,
    decompress_head,
    open_binary,
    read_full,
)
from parsers.inputs import InputError, InputFile, Inputs, expand_inputs, find_inputs
from parsers.utf16 import Transcoded

__all__ = ["CHUNK_BYTES", "CorruptInput", "InputError", "InputFile", "Inputs", "ReadStats",
           "compression", "expand_inputs", "find_inputs", "iter_line_chunks", "lines_series",
           "open_binary", "prefetch", "read_head"]

CHUNK_BYTES = 8 << 20
MAX_LINE_BYTES = 16 << 20  #: longer lines are cut here (the rest counted, not kept)
T = TypeVar("T")
SNIFF_BYTES = 64 << 10


@dataclass
class ReadStats:
    """What reading one input found; filled by ``iter_line_chunks`` (on the reader thread)."""

    limit: int | None = None  #: read at most this many bytes of a plain file (None: its size)
    hash: bool = False  #: compute ``sha256`` while reading
    sha256: str | None = None  #: of the bytes read (decompressed)
    bytes: int = 0  #: bytes read (decompressed)
    grew: bool = False  #: the file was longer after reading than when opened
    #: the file ended before the size it had when surveyed or opened (cut in place while read:
    #: logrotate's copytruncate): ``bytes`` of ``expected`` were read
    shrank: bool = False
    expected: int = 0
    cut_lines: int = 0  #: lines cut at MAX_LINE_BYTES
    cut_bytes: int = 0  #: bytes of those lines not kept
    compression: str | None = None
    encoding: str | None = None  #: UTF-16/32 text read re-encoded as UTF-8 (``utf16``)


UTF8_BOM = b"\xef\xbb\xbf"

def read_head(src: Path | InputFile) -> bytes:
    """The first ``SNIFF_BYTES`` (decompressed) of an input; a stream keeps them for its read.
    A compressed input of which nothing can be decompressed raises ``CorruptInput``; one cut
    later gives what comes before the damage (the parse reads it, then names the rest lost).
    """
    f = src if isinstance(src, InputFile) else InputFile(src, str(src))
    if f.stream is not None:
        raw = f.stream.peek(SNIFF_BYTES)
        if compression(raw) is not None:
            # a compressed stream: decompress what was peeked (the stream is read later)
            raw = decompress_head(raw, f.display, SNIFF_BYTES)
        return utf16.decode_head(raw).removeprefix(UTF8_BOM)
    with open_binary(f) as fh:
        head = read_full(fh, SNIFF_BYTES, keep=True)  # a file cut after its head is read to the cut
        if not head:
            read_full(fh, 1)  # raises the ``CorruptInput`` again if nothing could be decompressed
        return head.removeprefix(UTF8_BOM)


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _valid_utf8(data: bytes | bytearray) -> bytes | bytearray:
    """``data`` if it is valid UTF-8, else a copy with invalid bytes replaced (U+FFFD).

    ASCII is checked by numpy (~1 ms per 8 MiB, without the GIL, where ``bytes.isascii``
    holds it: the parsing thread would wait); other text by Arrow's UTF-8 validation (~1 ms
    per 8 MiB against ~7 for ``bytes.decode``; the same verdict as Python's strict decoder on
    surrogates, overlong forms and code points past U+10FFFF: ``test_reader``)."""
    if len(data) < 4096 and data.isascii():
        return data
    if len(data) >= 4096 and int(np.frombuffer(data, np.uint8).max(initial=0)) < 128:
        return data
    if utf8_valid(data):
        return data
    return data.decode("utf-8", errors="replace").encode("utf-8")


def utf8_valid(data: bytes | bytearray) -> bool:
    """Whether ``data`` is valid UTF-8 (Arrow's validator over the bytes, not copied)."""
    offsets = pa.py_buffer(np.array([0, len(data)], np.int64))
    arr = pa.Array.from_buffers(pa.large_string(), 1, [None, offsets, pa.py_buffer(data)])
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


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


class _Tail:
    """A line of ``\r`` parts longer than ``MAX_LINE_BYTES``, being read: its head (up to a
    ``\r``), then only the last ``keep`` bytes of the rest."""

    def __init__(self, head: bytes, keep: int) -> None:
        self.head, self.keep = head, keep
        self.tail = b""
        self.length = 0  #: bytes of the line after the head, read so far

    def add(self, buf: bytearray, begin: int, end: int) -> None:
        self.length += end - begin
        self.tail = (self.tail + bytes(buf[max(begin, end - self.keep):end]))[-self.keep:]

    def line(self, st: ReadStats) -> tuple[bytes, int]:
        """The line as kept (head, then the tail from its first ``\r``) with its newline, and
        the bytes it took; the rest counted in ``st``."""
        k = self.tail.find(b"\r")
        tail = self.tail[k:] if k >= 0 else b""
        st.cut_lines += 1
        st.cut_bytes += self.length - len(tail)
        return self.head + tail + b"\n", len(self.head) + self.length + 1


def iter_line_chunks(src: Path | InputFile, chunk_bytes: int = CHUNK_BYTES,
                     stats: ReadStats | None = None) -> Iterator[tuple[pl.Series, int, int]]:
    """Yield (lines, first line number (1-based), bytes consumed) for a text input.

    Each chunk is read into a buffer after the previous chunk's unfinished last line, so the
    text is copied once (by the read) and the lines are views into that buffer. Buffers are
    reused once no Series views them any more (``_buffer``), which saves the kernel zeroing
    fresh pages for every chunk. ``stats`` (if given) bounds the read and receives what it
    found (see ``ReadStats``)."""
    st = stats if stats is not None else ReadStats()
    f = src if isinstance(src, InputFile) else InputFile(src, str(src))
    hasher = hashlib.sha256() if st.hash else None
    line_no = 1
    rest = b""
    skipping = False  #: inside a line already cut at MAX_LINE_BYTES: drop up to its newline
    tailing: _Tail | None = None  #: inside such a line of ``\r`` parts: keeping its end
    pool: list[bytearray] = []
    failed: CorruptInput | None = None
    with open_binary(f) as fh:
        st.compression = fh.kind if isinstance(fh, Decompressed | Transcoded) else None
        st.encoding = fh.encoding if isinstance(fh, Transcoded) else None
        plain = f.stream is None and f.url is None and st.compression is None
        left: int | None = None
        if f.url is not None and st.compression is None:
            left = st.limit  # the size ``info`` gave when the inputs were surveyed
        if plain:
            opened = os.fstat(fh.fileno()).st_size
            st.expected = opened if st.limit is None else st.limit
            left = opened if st.limit is None else min(st.limit, opened)
            st.limit = left
        if isinstance(fh, Transcoded):  # the bound is on the file's bytes, not the UTF-8's
            fh.left, left = left, None
        fill = _Filler(fh)
        while left is None or left > 0:
            want = chunk_bytes if left is None else min(chunk_bytes, left)
            buf = _buffer(pool, len(rest) + want)
            buf[: len(rest)] = rest
            try:
                got = fill.read(memoryview(buf)[len(rest):])
            except CorruptInput as e:  # the line cut by the damage is read, as zcat prints it
                failed, got = e, 0
            if not got:
                pool.append(buf)
                break
            if hasher is not None:
                hasher.update(memoryview(buf)[len(rest): len(rest) + got])
            st.bytes += got
            if left is not None:
                left -= got
            size, start = len(rest) + got, 0
            if line_no == 1 and st.bytes == got and buf.startswith(UTF8_BOM):
                start = 3  # a UTF-8 byte-order mark (Notepad, PowerShell's utf8) is no text
            if tailing is not None:  # rest is empty here
                nl = buf.find(b"\n", 0, size)
                tailing.add(buf, 0, size if nl < 0 else nl)
                if nl < 0:
                    pool.append(buf)
                    continue
                line, nbytes = tailing.line(st)
                yield lines_series(_valid_utf8(line)), line_no, nbytes
                line_no += 1
                tailing, start = None, nl + 1
            if skipping:  # rest is empty here
                nl = buf.find(b"\n", 0, size)
                st.cut_bytes += size if nl < 0 else nl
                if nl < 0:
                    pool.append(buf)
                    continue
                skipping, start = False, nl + 1
            cut = buf.rfind(b"\n", start, size)
            if cut < 0:
                half = MAX_LINE_BYTES // 2
                at = buf.rfind(b"\r", start + 1, start + half) if size - start > MAX_LINE_BYTES \
                    else -1
                if at > 0:  # a line of redraws: keep its head, then its last ``half``
                    tailing = _Tail(bytes(buf[start:at]), half)
                    tailing.add(buf, at, size)
                    rest = b""
                    pool.append(buf)
                    continue
                if size - start > MAX_LINE_BYTES:  # cut the line; count and drop the rest
                    line = bytes(buf[start: start + MAX_LINE_BYTES]) + b"\n"
                    st.cut_lines += 1
                    st.cut_bytes += size - start - MAX_LINE_BYTES
                    skipping, rest = True, b""
                    pool.append(buf)
                    yield lines_series(_valid_utf8(line)), line_no, size - start
                    line_no += 1
                    continue
                rest = bytes(buf[start:size])
                pool.append(buf)
                continue
            rest = bytes(buf[cut + 1: size])
            del buf[cut + 1:]
            if start:
                del buf[:start]
            s = lines_series(_valid_utf8(buf))
            pool.append(buf)
            yield s, line_no, cut + 1 - start + (start if start else 0)
            line_no += len(s)
        if plain:
            st.grew = os.fstat(fh.fileno()).st_size > (st.limit or 0)
            # (UTF-16 text counts its UTF-8 bytes: its file's bytes are not compared)
            st.shrank = st.bytes < st.expected and not isinstance(fh, Transcoded)
    if tailing is not None:
        line, nbytes = tailing.line(st)
        yield lines_series(_valid_utf8(line)), line_no, nbytes - 1
    if rest:
        s = lines_series(_valid_utf8(rest + b"\n"))
        yield s, line_no, len(rest)
    if hasher is not None:
        st.sha256 = hasher.hexdigest()
    if failed is not None:
        raise failed


class _Filler:
    """``readinto`` until the buffer is full or the input ends. A URL's stream may return
    fewer bytes than asked (as they arrive), and a chunk's bounds must not depend on that:
    they decide the order of a chunk's rows (per-line rows before vectorised ones), so the
    same file read from its path and from ``http://`` gave the same rows in another order.
    A read that fails after some bytes returns those; its error is raised by the next one
    (the lines before a damaged spot are kept, and a stream that would say nothing more
    after its error cannot end the input early)."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.failed: BaseException | None = None

    def read(self, view: memoryview) -> int:
        if self.failed is not None:
            raise self.failed
        n = 0
        while n < len(view):
            try:
                got = self.fh.readinto(view[n:])
            except Exception as e:
                if not n:
                    raise
                self.failed = _without_frames(e)
                break
            if not got:
                break
            n += got
        return n


def _without_frames(e: BaseException) -> BaseException:
    """``e`` kept without its traceback, nor those of the errors it was raised from or while
    handling (``__cause__``, ``__context__``): a traceback holds this frame and those it
    called, and so ``view``, whose export would keep the chunk's buffer from being cut
    (``BufferError``). A URL's reader raises its error while handling the backend's, whose
    traceback reaches the ``readinto`` filling ``view``: a chunk with a newline in the bytes
    read before the error could not be cut."""
    todo, seen = [e], set()
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        x.__traceback__ = None
        todo += [c for c in (x.__cause__, x.__context__) if c is not None]
    return e


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

    def put(item: object) -> bool:
        """Hand ``item`` over unless the consumer gave up (then False): the end mark too, or
        a consumer that stopped on an error of its own waited 5 s for this thread."""
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for item in it:
                if not put(item):
                    return
            put(_END)
        except BaseException as e:  # handed to the consumer, raised there
            put(_Failure(e))

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
