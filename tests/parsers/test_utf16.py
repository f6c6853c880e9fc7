"""UTF-16 and UTF-32 logs are read as the text they hold (``parsers.utf16``).

A fault probe converted a job log with ``iconv -f utf-8 -t utf-16`` (a byte-order mark) and a
kern.log with ``-t utf-16le`` (none, as ``[System.Text.Encoding]::Unicode.GetBytes`` writes):
every line was counted unparsed, without a note, and the Xid 79 that ended job 1043 was lost
(the attempt's cause became an NCCL timeout, TOR 0.766 instead of 0.805). Windows PowerShell
5.1 writes UTF-16LE with a BOM for ``>`` and ``Out-File`` (about_Character_Encoding);
``Out-File -Encoding utf32`` and ``BigEndianUnicode`` write the others tested here.
"""

from __future__ import annotations

import codecs
import gzip
import shutil
from pathlib import Path

import pytest

from parsers import utf16
from parsers.reader import InputFile, ReadStats, expand_inputs, iter_line_chunks, open_binary
from pipeline.ingest.run import IngestResult, ingest

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"

#: how each encoding is written: (codec, byte-order mark)
WRITERS = {
    "UTF-16": ("utf-16-le", codecs.BOM_UTF16_LE),  # PowerShell 5.1 '>', iconv -t utf-16
    "UTF-16LE": ("utf-16-le", b""),  # iconv -t utf-16le
    "UTF-16BE": ("utf-16-be", b""),
    "UTF-16 (BE)": ("utf-16-be", codecs.BOM_UTF16_BE),  # Out-File -Encoding BigEndianUnicode
    "UTF-32": ("utf-32-le", codecs.BOM_UTF32_LE),  # Out-File -Encoding utf32
}


def _encoded(text: bytes, how: str) -> bytes:
    codec, bom = WRITERS[how]
    return bom + text.decode("utf-8").encode(codec)


def _rows(res: IngestResult, root: Path) -> dict[str, tuple[str, int, int, int, str | None]]:
    """(source, read, events, unparsed, note) by file name under ``root``."""
    return {str(Path(f.file).relative_to(root)):
            (f.source, f.acct.read, f.acct.events, f.acct.unparsed, f.note) for f in res.files}


def test_utf16_logs_are_read_as_their_utf8_text(tmp_path: Path) -> None:
    """Each of the demo's kernel logs with an Xid and a job log, written in one encoding
    each (one gzip-compressed), gives the same counts as in UTF-8, and a note that says so."""
    names = ["nodes/node003/kern.log", "nodes/node005/kern.log", "nodes/node008/kern.log",
             "nodes/node013/kern.log", "nodes/node015/kern.log", "jobs/slurm-1001.out"]
    hows = [*WRITERS, "UTF-16"]
    for root in ("utf8", "wide"):
        for name in names:
            (tmp_path / root / "in" / name).parent.mkdir(parents=True, exist_ok=True)
    for name, how in zip(names, hows, strict=True):
        shutil.copy(DEMO / name, tmp_path / "utf8" / "in" / name)
        data = _encoded((DEMO / name).read_bytes(), how)
        (tmp_path / "wide" / "in" / name).write_bytes(
            gzip.compress(data) if name.endswith(".out") else data)
    plain = ingest(expand_inputs([str(tmp_path / "utf8" / "in")]), tmp_path / "utf8" / "o")
    wide = ingest(expand_inputs([str(tmp_path / "wide" / "in")]), tmp_path / "wide" / "o")
    want = _rows(plain, tmp_path / "utf8" / "in")
    assert all(r[3] == 0 and r[2] > 0 and r[4] is None for r in want.values())
    for name, how in zip(names, hows, strict=True):  # the note says which encoding was read
        want[name] = (*want[name][:4], f"{how.split(' ')[0]} text, read re-encoded as UTF-8")
    assert _rows(wide, tmp_path / "wide" / "in") == want
    assert wide.events == plain.events


@pytest.mark.parametrize("head, name", [
    (codecs.BOM_UTF16_LE + "x".encode("utf-16-le"), "UTF-16"),
    (codecs.BOM_UTF16_BE + "x".encode("utf-16-be"), "UTF-16"),
    (codecs.BOM_UTF32_LE + "x".encode("utf-32-le"), "UTF-32"),
    (codecs.BOM_UTF32_BE + "x".encode("utf-32-be"), "UTF-32"),
    ("May  1 node kernel: é\n".encode("utf-16-le"), "UTF-16LE"),
    ("May  1 node kernel: é\n".encode("utf-16-be"), "UTF-16BE"),
    ("ab".encode("utf-16-le"), "UTF-16LE"),
    (b"May  1 node kernel: plain UTF-8 \xc3\xa9\n", None),
    (b"\x00" * 700 + b"May  1 node kernel: after a crash\n" * 20, None),  # a syslog's NUL run
    (b"May  1 x\n" + b"\x00" * 2000, None),
    (b"\x00" * 4096, None),
    (b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + b"\x02\x00\x3e\x00", None),
    (b"a", None),
    (b"", None),
    ("日本語のログ".encode("utf-16-le"), None),  # no NULs: only a BOM would tell
])
def test_utf16_is_told_by_its_bom_or_its_nuls(head: bytes, name: str | None) -> None:
    assert utf16.detect(head) == name


def test_characters_cut_between_pieces_come_out_whole(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of an odd number of bytes cut code units and surrogate pairs; the incremental
    decoder carries them over. An odd last byte becomes U+FFFD, as invalid UTF-8 does."""
    monkeypatch.setattr(utf16, "PIECE", 7)
    text = "".join(f"{i} é 日本 \U0001f600 x\r\n" for i in range(300))
    p = tmp_path / "w.log"
    p.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le") + b"A")
    with open_binary(p) as fh:
        assert fh.read() == (text + "\ufffd").encode("utf-8")
    lines = [s for chunk, _, _ in iter_line_chunks(p, chunk_bytes=100) for s in chunk.to_list()]
    assert lines == [*text.split("\r\n")[:-1], "\ufffd"]
    with open_binary(p) as fh:  # line by line, as the root-cause tail reads a job's output
        assert list(fh)[:2] == [x.encode() + b"\n" for x in text.split("\n")[:2]]


def test_a_utf16_file_is_read_up_to_its_size_when_surveyed(tmp_path: Path) -> None:
    """The bound on a growing file is on its own bytes, not on the UTF-8 read from them."""
    lines = [f"line {i}\n" for i in range(1000)]
    p = tmp_path / "w.log"
    data = "".join(lines).encode("utf-16")
    p.write_bytes(data)
    size_then = len(codecs.BOM_UTF16_LE + "".join(lines[:600]).encode("utf-16-le"))
    st = ReadStats(limit=size_then)
    got = [s for chunk, _, _ in iter_line_chunks(InputFile(p, str(p)), stats=st)
           for s in chunk.to_list()]
    assert got == [x.rstrip("\n") for x in lines[:600]]
    assert st.encoding == "UTF-16" and st.bytes == len("".join(lines[:600]))


def test_utf16_files_alike_at_both_ends_are_told_apart_by_all_their_text(
        tmp_path: Path) -> None:
    """Files of one size whose ends match are hashed whole (``pipeline.ingest.dedup``): the
    bound is on the file's bytes, not on the UTF-8 read from them, which for CJK text is longer
    (a hash of that many UTF-8 bytes missed the text's last quarter)."""
    from pipeline.ingest.dedup import survey

    # 72 bytes a line in UTF-16, 96 in UTF-8: the file's size in UTF-8 is 3/4 of its text
    lines = [f"{i:04d} " + "日本語のログの行です" * 3 + "\n" for i in range(2000)]
    other = lines.copy()
    other[1800] = other[1800].replace("です\n", "した\n")  # past 3/4, 14 KiB before the end
    for name, text in (("a.log", lines), ("b.log", other), ("c.log", lines)):
        (tmp_path / name).write_bytes("".join(text).encode("utf-16"))
    files = [InputFile(tmp_path / n, str(tmp_path / n)) for n in ("a.log", "b.log", "c.log")]
    prints = survey(files).prints
    assert [prints[f.display].duplicate_of for f in files] == [None, None, files[0].display]


def test_compressed_and_utf16_files_are_read_line_by_line(tmp_path: Path) -> None:
    """The root-cause tail reads a job's output back line by line (``for raw in fh``): a
    compressed file's reader could not be iterated (TypeError) before UTF-16 came to use it."""
    text = (DEMO / "jobs" / "slurm-1001.out").read_bytes()
    for name, data in (("a.gz", gzip.compress(text)), ("b.log", _encoded(text, "UTF-16")),
                       ("c.gz", gzip.compress(_encoded(text, "UTF-16BE")))):
        (tmp_path / name).write_bytes(data)
        with open_binary(tmp_path / name) as fh:
            assert list(fh) == text.splitlines(keepends=True), name
