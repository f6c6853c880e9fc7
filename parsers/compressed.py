"""Opening an input for reading: plain, or decompressed by its magic bytes, whatever its name.

gzip (``\\x1f\\x8b``), bzip2 (``BZh``), xz (``\\xfd7zXZ\\x00``) and Zstandard
(``\\x28\\xb5\\x2f\\xfd``) are what logrotate writes (``compresscmd``). gzip, bzip2 and xz come
with Python; Zstandard needs the ``zstandard`` package (the reference binding of the zstd
library, imported only when a .zst file is met). Multi-member gzip and multi-frame zstd
files (``cat a.gz b.gz``) are read whole.

A decompression error (truncated file, bad CRC, not the format its magic says) is raised as
``CorruptInput`` with what went wrong and how far the reading got, so the caller can
quarantine the file and go on. gzip, bzip2 and xz raise ``EOFError`` on a stream cut short;
the zstandard reader does not (it returns what it could decode, then nothing), so a .zst is
read through ``ZstdReader``, which follows the frame headers and raises the same error.

UTF-16/32 text is re-encoded as UTF-8 here too (``parsers.utf16``), after decompression.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from parsers import remote, utf16
from parsers.inputs import InputFile, Stream

PIECE = 64 << 10  #: bytes decompressed per call: what a damaged spot can take with it
MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"),
         (b"\x28\xb5\x2f\xfd", "zstd"))


class CorruptInput(Exception):
    """A compressed input that cannot be decompressed to its end."""

    def __init__(self, path: str, kind: str, why: str, after: int) -> None:
        where = f" after {after:,} bytes decompressed" if after else ""
        self.detail = f"corrupt or truncated {kind} data{where} ({why})"
        super().__init__(f"{path}: {self.detail}")
        self.kind, self.why, self.after = kind, why, after


def compression(magic: bytes) -> str | None:
    """The compression named by a file's first bytes, or None for plain data."""
    for m, name in MAGIC:
        if magic.startswith(m):
            return name
    return None


def _errors() -> tuple[type[BaseException], ...]:
    errs: list[type[BaseException]] = [EOFError, OSError, zlib.error, lzma.LZMAError]
    try:
        import zstandard

        errs.append(zstandard.ZstdError)
    except ImportError:  # pragma: no cover - a dependency; without it .zst is refused below
        pass
    return tuple(errs)


class Decompressed(utf16.ReadsInto):
    """A decompressing reader (``read``/``readinto``) whose errors become ``CorruptInput``."""

    piece = PIECE

    def __init__(self, inner: Any, display: str, kind: str) -> None:
        self.inner, self.display, self.kind = inner, display, kind
        self.out = 0  #: bytes decompressed so far
        self.errors = _errors()
        self.failed: CorruptInput | None = None
        self.pending = b""  #: bytes read ahead (``open_binary``'s look at the head), given first
        # gzip/bz2/lzma files read through an io.BufferedReader, whose ``readinto`` drops the
        # bytes it had buffered when the next decompression raises: a truncated .gz of 31,857
        # bytes gave 1,024 (what the head read took) where zcat gives all. ``readinto1`` hands
        # out what is buffered before it decompresses more, so the error comes after them.
        self.read_piece = getattr(inner, "readinto1", None) or inner.readinto

    def readinto(self, b: memoryview) -> int:
        """Fills ``b`` in pieces, so that the data before a damaged spot is returned (the
        error is raised by the next call)."""
        got = 0
        if self.pending:
            got = min(len(b), len(self.pending))
            b[:got] = self.pending[:got]
            self.pending = self.pending[got:]
            return got
        if self.failed is not None:
            raise self.failed
        while got < len(b):
            try:
                n: int = self.read_piece(b[got: got + PIECE])
            except self.errors as e:
                self.failed = CorruptInput(self.display, self.kind,
                                           str(e) or type(e).__name__, self.out + got)
                if got:
                    break
                raise self.failed from None
            if not n:
                break
            got += n
        self.out += got
        return got

    def __iter__(self) -> Iterator[bytes]:
        return utf16.iter_lines(self)

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> Decompressed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_binary(src: Path | InputFile) -> Any:
    """Open ``src`` for reading bytes: decompressed if its magic says so, and UTF-16/32 text
    re-encoded as UTF-8 (``utf16``: told by the first ``utf16.HEAD`` bytes, after
    decompression). A stream (stdin, a FIFO) is opened once, its sniffed head replayed
    first."""
    f = src if isinstance(src, InputFile) else InputFile(src, str(src))
    if f.stream is not None:
        raw: Any = f.stream.open()
        head = f.stream.peek(utf16.HEAD)
    elif f.url is not None:  # read once, its head kept: no seek (an HTTP stream has none)
        stream = Stream(remote.open_raw(f.url), owned=True)
        head = stream.peek(utf16.HEAD)
        raw = stream.open()
    else:
        raw = open(f.path, "rb")  # noqa: SIM115 - returned to the caller
        head = raw.read(utf16.HEAD)
        raw.seek(0)
    kind = compression(head)
    fh: Any = raw
    if kind is not None:
        fh = Closing(Decompressed(decompressor(kind, raw), f.display, kind), raw)
        fh.pending = head = read_full(fh, utf16.HEAD, keep=True)
    encoding = utf16.detect(head)
    return fh if encoding is None else utf16.Transcoded(fh, encoding)


def read_full(fh: Any, n: int, keep: bool = False) -> bytes:
    """Up to ``n`` bytes (fewer only at the end: a zstd reader may return short reads).
    ``keep``: a ``CorruptInput`` ends them (a ``Decompressed`` raises it again next read)."""
    out = bytearray()
    try:
        while len(out) < n and (got := fh.read(n - len(out))):
            out += got
    except CorruptInput:
        if not keep:
            raise
    return bytes(out)


def decompressor(kind: str, raw: Any) -> Any:
    """A reader of ``raw``'s decompressed bytes (not yet guarded: see ``Decompressed``)."""
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "bzip2":
        return bz2.BZ2File(raw)
    if kind == "xz":
        return lzma.LZMAFile(raw)
    return ZstdReader(raw)


class ZstdFrames:
    """Follows a Zstandard stream's frames by their headers, without decompressing, to tell
    whether the bytes seen so far end where a frame ends.

    The ``zstandard`` reader returns what it could decode and then ``b""`` when its input
    ends inside a frame, raising nothing (measured with zstandard 0.25: a 4.5 MB log cut at
    30,000 of its 52,758 compressed bytes read as 262,144 bytes, no error), where gzip, bz2
    and lzma raise ``EOFError``. Following the headers gives the verdict ``zstd -t`` gives
    ("premature end"), at the cost of reading 3 header bytes per block (a block holds up to
    128 KiB of text): 58 ms against 56 to decompress 427 MiB of job logs, measured.

    The layout is RFC 8878, section 3.1: a frame is the magic, a header (a descriptor byte
    saying which of window descriptor, dictionary ID and content size follow, and whether a
    4-byte checksum ends the frame), then blocks, each a 3-byte little-endian header (bit 0:
    last block, bits 1-2: type, bits 3-23: size) and its content (``size`` bytes; one byte
    for an RLE block). A skippable frame (magic 0x184D2A50-5F) is its magic, a 4-byte size
    and that many bytes. Anything else after a frame is left to the decompressor to judge
    (``lost``: no verdict from here)."""

    def __init__(self) -> None:
        self.state = "magic"  #: what the next header bytes are
        self.head = bytearray()  #: bytes of that header gathered so far
        self.skip = 0  #: content bytes to pass before the next header
        self.descriptor = 0  #: the current frame's header descriptor byte
        self.checksum = False  #: the current frame ends with a 4-byte checksum
        self.lost = False

    @property
    def at_end(self) -> bool:
        """Whether the bytes seen end a frame (or the layout was not followed)."""
        return self.lost or (self.state == "magic" and not self.head and not self.skip)

    def feed(self, data: bytes) -> None:
        i, n = 0, len(data)
        while i < n and not self.lost:
            if self.skip:
                k = min(self.skip, n - i)
                self.skip -= k
                i += k
                continue
            need = self._need()
            k = min(need - len(self.head), n - i)
            self.head += data[i: i + k]
            i += k
            if len(self.head) == need:
                self._header(bytes(self.head))
                self.head.clear()

    def _need(self) -> int:
        if self.state == "rest":
            d = self.descriptor
            single = d >> 5 & 1
            return (1 - single) + (0, 1, 2, 4)[d & 3] + (single, 2, 4, 8)[d >> 6]
        return {"descriptor": 1, "block": 3}.get(self.state, 4)

    def _header(self, h: bytes) -> None:
        if self.state == "magic":
            magic = int.from_bytes(h, "little")
            if magic == 0xFD2FB528:
                self.state = "descriptor"
            elif magic >> 4 == 0x184D2A5:
                self.state = "skippable"
            else:
                self.lost = True
        elif self.state == "skippable":
            self.skip, self.state = int.from_bytes(h, "little"), "magic"
        elif self.state == "descriptor":
            self.descriptor, self.checksum = h[0], bool(h[0] & 4)
            self.state = "rest"
        elif self.state == "rest":
            self.state = "block"
        elif self.state == "block":
            v = int.from_bytes(h, "little")
            kind, size = v >> 1 & 3, v >> 3
            if kind == 3:  # reserved: corrupt, the decompressor says so
                self.lost = True
            self.skip = 1 if kind == 1 else size
            if v & 1:
                self.state = "checksum" if self.checksum else "magic"
        else:  # the checksum
            self.state = "magic"


class _Fed:
    """``raw`` with every byte read also given to ``frames``."""

    def __init__(self, raw: Any, frames: ZstdFrames) -> None:
        self.raw, self.frames = raw, frames

    def read(self, n: int = -1) -> bytes:
        data: bytes = self.raw.read(n)
        self.frames.feed(data)
        return data

    def close(self) -> None:
        self.raw.close()


class ZstdReader:
    """The ``zstandard`` stream reader across frames, raising ``EOFError`` (as gzip, bz2 and
    lzma do) when its input ends inside a frame (``ZstdFrames``)."""

    def __init__(self, raw: Any) -> None:
        import zstandard

        self.frames = ZstdFrames()
        fed: Any = _Fed(raw, self.frames)  # a file object to ``stream_reader`` (it calls read)
        self.inner: Any = zstandard.ZstdDecompressor().stream_reader(
            fed, read_across_frames=True)

    def readinto(self, b: memoryview) -> int:
        n: int = self.inner.readinto(b)
        if not n and len(b) and not self.frames.at_end:
            raise EOFError("Compressed file ended before the end of a frame was reached")
        return n

    def close(self) -> None:
        self.inner.close()


class Closing(Decompressed):
    """Closes the underlying file too (gzip/bz2/xz over a file object leave it open)."""

    def __init__(self, d: Decompressed, raw: Any) -> None:
        super().__init__(d.inner, d.display, d.kind)
        self.raw = raw

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.raw.close()


def decompress_head(raw: bytes, display: str, limit: int) -> bytes:
    """Decompress what is available of a stream's head (a partial stream is not an error)."""
    import io

    kind = compression(raw)
    assert kind is not None
    tmp = io.BytesIO(raw)
    inner = decompressor(kind, tmp)
    out = bytearray()
    with Closing(Decompressed(inner, display, kind), tmp) as d:
        try:
            while len(out) < limit and (got := d.read(limit - len(out))):
                out += got
        except CorruptInput:
            pass  # the head was cut short, not the stream
    return bytes(out)
