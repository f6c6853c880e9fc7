"""Opening an input for reading: plain, or decompressed by its magic bytes, whatever its name.

gzip (``\\x1f\\x8b``), bzip2 (``BZh``), xz (``\\xfd7zXZ\\x00``) and Zstandard
(``\\x28\\xb5\\x2f\\xfd``) are what logrotate writes (``compresscmd``). gzip, bzip2 and xz come
with Python; Zstandard needs the ``zstandard`` package (the reference binding of the zstd
library, imported only when a .zst file is met). Multi-member gzip and multi-frame zstd
files (``cat a.gz b.gz``) are read whole.

A decompression error (truncated file, bad CRC, not the format its magic says) is raised as
``CorruptInput`` with what went wrong and how far the reading got, so the caller can
quarantine the file and go on.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from pathlib import Path
from typing import Any

from parsers import remote
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


class Decompressed:
    """A decompressing reader (``read``/``readinto``) whose errors become ``CorruptInput``."""

    def __init__(self, inner: Any, display: str, kind: str) -> None:
        self.inner, self.display, self.kind = inner, display, kind
        self.out = 0  #: bytes decompressed so far
        self.errors = _errors()
        self.failed: CorruptInput | None = None

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            out = bytearray()
            while piece := self.read(PIECE):
                out += piece
            return bytes(out)
        b = bytearray(n)
        got = self.readinto(memoryview(b))
        return bytes(b[:got])

    def readinto(self, b: memoryview) -> int:
        """Fills ``b`` in pieces, so that the data before a damaged spot is returned (the
        error is raised by the next call)."""
        if self.failed is not None:
            raise self.failed
        got = 0
        while got < len(b):
            try:
                n: int = self.inner.readinto(b[got: got + PIECE])
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

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> Decompressed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_binary(src: Path | InputFile) -> Any:
    """Open ``src`` for reading bytes: decompressed if its magic says so. A stream (stdin, a
    FIFO) is opened once, its sniffed head replayed first."""
    f = src if isinstance(src, InputFile) else InputFile(src, str(src))
    if f.stream is not None:
        raw: Any = f.stream.open()
        magic = f.stream.peek(6)
    elif f.url is not None:  # read once, its head kept: no seek (an HTTP stream has none)
        stream = Stream(remote.open_raw(f.url), owned=True)
        magic = stream.peek(6)
        raw = stream.open()
    else:
        raw = open(f.path, "rb")  # noqa: SIM115 - returned to the caller
        magic = raw.read(6)
        raw.seek(0)
    kind = compression(magic)
    if kind is None:
        return raw
    inner = decompressor(kind, raw)
    return Closing(Decompressed(inner, f.display, kind), raw)


def decompressor(kind: str, raw: Any) -> Any:
    """A reader of ``raw``'s decompressed bytes (not yet guarded: see ``Decompressed``)."""
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "bzip2":
        return bz2.BZ2File(raw)
    if kind == "xz":
        return lzma.LZMAFile(raw)
    import zstandard

    return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)


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
