"""File-level checks around a parse (driver.py): binary or text, a head that cannot be read,
and the notes that say what reading found. Kept apart from the driver's line handling."""

from __future__ import annotations

from parsers.base import Accounting
from parsers.reader import MAX_LINE_BYTES, CorruptInput, InputFile, ReadStats, decode, read_head

#: control bytes that do not occur in text (tab, LF, VT, FF, CR, backspace and ESC do)
_CONTROL = bytes(b for b in range(32) if b not in (8, 9, 10, 11, 12, 13, 27))


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes of an input are not text.

    NUL bytes alone do not decide: a log whose writer crashed often holds a run of NULs
    (syslog after an unclean shutdown), and one NUL must not lose a kernel log. The NULs are
    set aside and the rest judged: binary if nothing else is there, or if more than 10% of it
    is control characters (other than tab, newline, CR, form feed, backspace, escape) or
    invalid UTF-8. ELF, Parquet, images and undecodable compressed data fail that by far."""
    if not head:
        return False
    rest = head.replace(b"\x00", b"")
    if len(rest) < len(head) // 20:  # >95% NUL: nothing to read
        return True
    ctrl = len(rest) - len(rest.translate(None, _CONTROL))
    bad = ctrl + rest.decode("utf-8", errors="replace").count("\ufffd")
    return bad > len(rest) // 10


#: how to check a compressed file by hand, per format
TEST_CMD = {"gzip": "gzip -t", "bzip2": "bzip2 -t", "xz": "xz -t", "zstd": "zstd -t"}


def read_head_or_note(f: InputFile, stats: ReadStats) -> bytes | str:
    """The file's head, or a note saying why it cannot be read (it is then counted, named)."""
    try:
        return read_head(f)
    except CorruptInput as e:
        stats.compression = e.kind
        return f"quarantined: {e.detail}; check it with `{TEST_CMD[e.kind]} FILE`"
    except OSError as e:
        return f"unreadable: {e.strerror or e}; skipped"


def with_notes(note: str | None, st: ReadStats) -> str | None:
    """The file's note with what reading found (growth, cut lines) appended."""
    extra = []
    if st.encoding:
        extra.append(f"{st.encoding} text, read re-encoded as UTF-8")
    if st.grew:
        extra.append(f"grew while read: read up to its size when opened ({st.limit:,} bytes)")
    if st.shrank:
        extra.append(f"cut while read: {st.bytes:,} of its {st.expected:,} bytes were there to "
                     "read (truncated in place, as logrotate's copytruncate does); the rest is "
                     "missing: read the rotated copy too")
    if st.cut_lines:
        extra.append(f"{st.cut_lines:,} line(s) longer than {MAX_LINE_BYTES >> 20} MiB cut "
                     f"({st.cut_bytes:,} bytes not parsed: a line's end, or the middle of a "
                     "line of \\r redraws)")
    return "; ".join([*([note] if note else []), *extra]) or None


def unparsed_lines(data: bytes) -> Accounting:
    """Every line of ``data`` counted unparsed, the first 40 kept as samples (a stream that was
    read whole for a document parser and turned out not to be one)."""
    acct = Accounting()
    for i, text in enumerate(decode(data).splitlines(), start=1):
        if i <= 40:
            acct.note(2, i, text)
        else:
            acct.read += 1
            acct.unparsed += 1
    return acct


class DocumentError(ValueError):
    """A document not what its parser reads (invalid YAML ...): quarantined with this
    message, like invalid JSON (``driver.DOCUMENT_ERRORS``)."""
