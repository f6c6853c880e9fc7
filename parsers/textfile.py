"""Text the user hands the CLI: a rates or analysis JSON, a ``--run-map`` or ``--rules`` CSV,
SQL on standard input.

Read as UTF-8, with or without a byte-order mark, or as UTF-16 or UTF-32 when the text starts
with that encoding's mark (Notepad's "Unicode" and PowerShell 5's ``>`` write UTF-16 with
one). Anything else is ``NotText``, whose message names the file, the line and the byte, and
says to save it as UTF-8: read with ``encoding="utf-8"``, such a file stopped the command with
"internal error (UnicodeDecodeError ...)". Here, at the bottom of the stages, so that every
stage may use it; it imports nothing of the project.
"""

from __future__ import annotations

import codecs
from pathlib import Path

#: byte-order marks and their encodings; UTF-32-LE's mark begins with UTF-16-LE's, so first
BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"))


class NotText(ValueError):
    """Bytes that are not text in an encoding read here; the message says what to do."""


def decode(data: bytes, name: str, fix: str = "save the file as UTF-8") -> str:
    """``data`` as text (see the module docstring); ``name`` (the file) and ``fix`` (what to
    do) are for the message."""
    enc = next((e for bom, e in BOMS if data.startswith(bom)), "utf-8")
    try:
        return data.decode(enc)
    except UnicodeDecodeError as e:
        if enc.startswith("utf-8"):
            line = data.count(b"\n", 0, e.start) + 1
            raise NotText(f"{name} line {line}: not UTF-8 text (byte 0x{data[e.start]:02x}); "
                          f"{fix}") from None
        raise NotText(f"{name}: starts with the {enc.upper()} byte-order mark but is not "
                      f"{enc.upper()} text; {fix}") from None


def read_text(path: str | Path) -> str:
    """The text of the file at ``path`` (``OSError`` as ``open`` raises it)."""
    return decode(Path(path).read_bytes(), str(path))
