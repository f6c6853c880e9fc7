"""UTF-16 (and UTF-32) text read as the UTF-8 the parsers expect, re-encoded while it is read.

Windows-side tools write UTF-16: Windows PowerShell 5.1's ``>`` and ``Out-File`` write
UTF-16LE with a byte-order mark (their documented default, "Unicode": PowerShell's
about_Character_Encoding), ``iconv -t utf-16`` writes a BOM and ``-t utf-16le`` none. Read
as UTF-8, every ASCII character of such a file is followed (or preceded) by a NUL byte: each
line was counted unparsed, without a note, and an Xid line in a UTF-16 kern.log was lost.

Such text is decoded rather than quarantined, because that is cheap and safe here:

* detection looks at the first bytes only (``HEAD``, 1 KiB): a byte-order mark (the Unicode
  Standard, section 3.10, "Unicode Encoding Schemes"; UTF-32's is tested first, as its
  little-endian mark begins with UTF-16's), or, without one, the pattern ASCII text has in
  UTF-16: a NUL in at least 3 of every 4 odd bytes (little-endian) or even bytes
  (big-endian) and almost none in the others. A UTF-8 log with a run of NULs after a crash
  has them in both (``filecheck.looks_binary``), so it is not taken for UTF-16;
* re-encoding is done in pieces (``PIECE`` bytes of the file at a time, Python's incremental
  codec, which carries a character cut between pieces over), so memory stays bounded as for
  any input, and the chunked reader's zero-copy lines are built from the UTF-8 as from any
  file. It costs one more copy: 42 ms per 100 MiB of text (measured, against 4 ms for a
  plain read), far below parsing. A UTF-8 file pays nothing but the look at its first KiB;
* undecodable data (an odd last byte, a lone surrogate) becomes U+FFFD, as invalid UTF-8
  does (``reader``): no line is lost to its encoding.

The file's note says which encoding was read (``filecheck.with_notes``), and the bytes
counted are the UTF-8 ones the parsers read.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from typing import Any

HEAD = 1 << 10  #: bytes looked at to tell UTF-16 without a byte-order mark
PIECE = 1 << 20  #: bytes of the file decoded per step
BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
        (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


def detect(head: bytes) -> str | None:
    """The codec name of text that is UTF-16/32 by its first bytes, else None.

    With a BOM: "UTF-16" or "UTF-32" (Python's codecs read the mark and drop it). Without one:
    "UTF-16LE" or "UTF-16BE" by where the NULs are."""
    for bom, name in BOMS:
        if head.startswith(bom):
            return name
    pairs = min(len(head), HEAD) // 2
    if pairs < 2:
        return None
    even, odd = head[0: 2 * pairs: 2].count(0), head[1: 2 * pairs: 2].count(0)
    if 4 * odd >= 3 * pairs and 16 * even <= pairs:
        return "UTF-16LE"
    if 4 * even >= 3 * pairs and 16 * odd <= pairs:
        return "UTF-16BE"
    return None


def decode_head(head: bytes) -> bytes:
    """``head`` (a file's first bytes) as UTF-8 if it is UTF-16/32 text, else as it is; a
    character cut at its end is left out."""
    name = detect(head)
    if name is None:
        return head
    dec = codecs.getincrementaldecoder(name)(errors="replace")
    return bytes(dec.decode(head, final=False).encode("utf-8"))


class ReadsInto:
    """``read`` from a class's ``readinto`` (``piece`` bytes at a time for a whole read)."""

    piece: int = PIECE

    def readinto(self, b: memoryview) -> int:
        raise NotImplementedError

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            out = bytearray()
            while piece := self.read(self.piece):
                out += piece
            return bytes(out)
        b = bytearray(n)
        got = self.readinto(memoryview(b))
        return bytes(b[:got])


class Transcoded(ReadsInto):
    """A reader (``read``/``readinto``) of ``inner``'s UTF-16/32 text as UTF-8 bytes.

    ``left`` bounds the bytes read from ``inner`` (a plain file's size when it was opened:
    ``reader.iter_line_chunks``), as the UTF-8 bytes' count differs. ``kind`` is that of a
    decompressing ``inner`` (``compressed.Decompressed``), else None."""

    def __init__(self, inner: Any, encoding: str) -> None:
        self.inner, self.encoding = inner, encoding
        self.kind: str | None = getattr(inner, "kind", None)
        self.left: int | None = None
        self._dec = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._out = memoryview(b"")
        self._ended = False

    def readinto(self, b: memoryview) -> int:
        while not self._out and not self._ended:
            want = PIECE if self.left is None else min(PIECE, self.left)
            raw: bytes = self.inner.read(want) if want else b""
            if self.left is not None:
                self.left -= len(raw)
            self._ended = not raw
            self._out = memoryview(self._dec.decode(raw, final=self._ended).encode("utf-8"))
        n = min(len(b), len(self._out))
        b[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def fileno(self) -> int:
        return int(self.inner.fileno())

    def __iter__(self) -> Iterator[bytes]:
        return iter_lines(self)

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> Transcoded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def iter_lines(fh: Any) -> Iterator[bytes]:
    """The lines of a reader with only ``read`` (ends kept), as a binary file gives them."""
    rest = b""
    while piece := fh.read(PIECE):
        lines = (rest + piece).split(b"\n")
        rest = lines.pop()
        yield from (line + b"\n" for line in lines)
    if rest:
        yield rest
