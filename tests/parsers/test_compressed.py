"""A Zstandard input cut short is quarantined as a gzip one is (``parsers.compressed``).

The ``zstandard`` reader ends a truncated stream quietly: a fault probe's job log, cut at
30,000 bytes of its .zst, was read as a clean 872-line job log, and one cut before its first
whole block as a text file of 0 lines ("no known layout"), while the same cut .gz was
quarantined with a note to run ``gzip -t FILE``. The streams here are cut the way the probe
cut them (``zstd -c big.txt | head -c 30000``).
"""

from __future__ import annotations

import gzip
import io
import random
import zlib
from pathlib import Path

import pytest
import zstandard

from parsers.compressed import CorruptInput, ZstdFrames, open_binary
from parsers.inputs import Stream
from parsers.reader import InputFile, expand_inputs, iter_line_chunks
from pipeline.ingest.run import ingest

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"


def _job_log(repeat: int = 8) -> bytes:
    """Three of the demo's job logs, over and over (4.5 MB at 8: 35 zstd blocks)."""
    jobs = [(DEMO / "jobs" / f"slurm-10{n}.out").read_bytes() for n in ("01", "02", "03")]
    return b"".join(jobs) * repeat


def test_a_truncated_zstd_is_read_to_the_cut_like_a_truncated_gzip(tmp_path: Path) -> None:
    """A compressed file cut short is read up to the damage, as ``zcat`` reads it, and its
    note says the rest is lost; one of which nothing decompresses is quarantined whole. A
    .gz cut after its first 1 KiB was quarantined whole, and on stdin kept only that 1 KiB:
    the gzip module's buffered reader dropped what it had decompressed when the next read
    failed (fault probe 16: zcat recovered 94 lines)."""
    text = _job_log()
    d = tmp_path / "in"
    d.mkdir()
    cut = {"a.out.zst": zstandard.compress(text)[:30_000],  # some whole blocks
           "b.out.zst": zstandard.compress(text)[:200],  # inside the first block
           "c.out.zst": zstandard.compress(text)[:5],  # inside the frame header
           "d.out.gz": gzip.compress(text)[:30_000]}
    for name, data in cut.items():
        (d / name).write_bytes(data)
    # a whole stream of several frames, with checksums and a skippable frame, is read whole
    whole = (zstandard.ZstdCompressor(write_checksum=True).compress(text[:100_000])
             + b"\x50\x2a\x4d\x18" + (3).to_bytes(4, "little") + b"abc"
             + zstandard.ZstdCompressor(write_content_size=False).compress(text[100_000:]))
    (d / "e.out.zst").write_bytes(whole)
    res = ingest(expand_inputs([str(d)]), tmp_path / "out", jobs=1)
    rows = {Path(f.file).name: f for f in res.files}
    for name in ("a.out.zst", "b.out.zst", "c.out.zst", "d.out.gz"):
        kind, test = ("gzip", "gzip -t") if name.endswith(".gz") else ("zstd", "zstd -t")
        f = rows[name]
        if name in ("a.out.zst", "d.out.gz"):  # whole blocks before the cut: read as zcat does
            plain = (zlib.decompressobj(31) if kind == "gzip"  # what zcat / zstdcat print
                     else zstandard.ZstdDecompressor().decompressobj()).decompress(cut[name])
            assert plain and text.startswith(plain)
            assert (f.source, f.acct.read) == ("joblog", plain.count(b"\n") + 1), name
            assert f.nbytes == len(plain), name
            assert str(f.note).startswith(f"quarantined after {len(plain):,} bytes: "), f.note
        else:  # nothing decompresses
            assert (f.source, f.acct.read) == ("unknown", 0), name
            assert str(f.note).startswith(
                f"quarantined, not read: corrupt or truncated {kind} data"), (name, f.note)
        assert f"check it with `{test} FILE`" in str(f.note)
        assert str(d / name) in res.quarantined  # analyze warns on stderr about each
    assert (rows["e.out.zst"].source, rows["e.out.zst"].note) == ("joblog", None)
    assert rows["e.out.zst"].acct.read == text.count(b"\n")


def test_a_truncated_zstd_on_stdin_keeps_what_was_read() -> None:
    """Read once, a stream cannot be quarantined before it is parsed: the lines before the
    cut are handed over, then the error says the rest is lost (as for gzip)."""
    text = _job_log()
    data = zstandard.compress(text)[:30_000]
    f = InputFile(Path("-"), "-", Stream(io.BytesIO(data)))
    got: list[str] = []
    with pytest.raises(CorruptInput, match="truncated zstd data") as e:
        for lines, _first, _n in iter_line_chunks(f, chunk_bytes=64 << 10):
            got += lines.to_list()
    assert e.value.kind == "zstd" and e.value.after > 200_000
    assert len(got) > 800
    want = text.decode().split("\n")[: len(got)]
    assert got[:-1] == want[:-1]  # and the line the cut ends in is read as far as it goes
    assert want[-1].startswith(got[-1]) and len(got[-1]) < len(want[-1])


def test_zstd_frames_end_only_where_a_frame_ends(tmp_path: Path) -> None:
    """After every byte of a stream of varied frames, ``at_end`` is true exactly at the ends
    of its frames (RFC 8878, section 3.1): frames with and without a checksum and a content
    size, single-segment, skippable; compressed, raw (random bytes) and RLE (zeros) blocks."""
    rng = random.Random(5)
    noise = bytes(rng.getrandbits(8) for _ in range(140_000))
    text = _job_log(1)[:300_000]
    streaming = zstandard.ZstdCompressor().compressobj()
    frames = [zstandard.ZstdCompressor(write_checksum=True).compress(text),
              b"\x5f\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"\x28\xb5\x2f\xfd",
              zstandard.compress(noise),
              zstandard.compress(bytes(300_000)),
              zstandard.compress(b"x"),
              streaming.compress(text[:5000]) + streaming.flush(),
              zstandard.compress(b"")]
    stream = b"".join(frames)
    ends, pos = {0}, 0
    for fr in frames:
        pos += len(fr)
        ends.add(pos)
    walker = ZstdFrames()
    seen = {0}
    for i in range(len(stream)):
        walker.feed(stream[i: i + 1])
        if walker.at_end:
            seen.add(i + 1)
    assert seen == ends and not walker.lost
    # the same fed in pieces of random sizes
    walker, i = ZstdFrames(), 0
    while i < len(stream):
        k = rng.randint(1, 5000)
        walker.feed(stream[i: i + k])
        i += k
    assert walker.at_end
    # and the whole stream decompresses to what was compressed, without an error
    p = tmp_path / "frames.zst"
    p.write_bytes(stream)
    with open_binary(p) as fh:
        assert fh.read() == text + noise + bytes(300_000) + b"x" + text[:5000]
