"""Unknown-line mining (pipeline/ingest/unknown.py, parsers/unknown.py) and rules of kind
text written from a mined template."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import duckdb
import polars as pl
import pytest

from parsers.reader import InputFile
from parsers.unknown import Forms, digit_keys, mask_line, mask_series
from pipeline.ingest.explain import explain_files
from pipeline.ingest.run import ingest
from pipeline.ingest.unknown import unknown_templates

# lines no recogniser knows: a site's own daemon (an error), and healthy chatter
LOG = "".join(
    [f"quotad[{900 + i}]: ERROR: project quota exhausted for /lustre/proj{i}, writes denied\n"
     for i in range(7)]
    + [f"heartbeat ok seq={i} peers=16\n" for i in range(30)]
    + ["NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off "
       "the bus.\n"])


def test_masking_is_the_same_vectorised_and_per_line() -> None:
    lines = [line for line in LOG.splitlines()] + ["id 5c8f48b6-8b92-a8c8-b480-f1499bb22974 "
                                                   "at 0x7f00 10.0.0.1:80 2024-05-01T12:00:00Z"]
    assert mask_series(pl.Series(lines)).to_list() == [mask_line(x) for x in lines]
    assert mask_line(lines[-1]) == "id <ID> at <ID> <N> <N>T<N>Z"


def _lines(n: int, seed: int = 5, odd: bool = False) -> list[str]:
    import random

    rnd = random.Random(seed)
    shapes = ["[rank{}] step {} | loss {}.{} | {} ms/it", "{}x{}", "  0x{}f at {} ", "5x{} {}",
              "id {}-{}", "\u0663{} \u00e9t\u00e9 {}", "{}abcdef0123{}", "x" * 320 + "{}{}",
              "\tseq={} peers={}", "", "{}"]
    if odd:  # separators Python's strip() removes and Rust's does not; other ASCII spaces
        shapes += ["\x1c{} sep {}\x1f", " \x0b{} vt {}\r"]
    lines = []
    for _ in range(n):
        shape = rnd.choice(shapes)
        lines.append(shape.format(*(rnd.choice(["0", "7", "10", "0x9", "2.5", "deadbeef00"])
                                    for _ in range(shape.count("{}")))))
    return lines


def _masked_one_by_one(lines: list[str], nos: list[int]) -> list[tuple[str, list[object]]]:
    want: dict[str, list[object]] = {}
    for line, no in zip(lines, nos, strict=True):
        form = mask_line(line)
        if form in want:
            want[form][0] = int(want[form][0]) + 1  # type: ignore[call-overload]
        else:
            want[form] = [1, no, line[:300]]
    return list(want.items())


def test_forms_of_a_chunk_are_those_of_masking_every_line() -> None:
    """add_chunk masks one line per digit key; the forms, counts, first lines and their order
    must be those of masking every line (the direct way, written out here)."""
    lines = _lines(3000)
    nos = pl.Series(range(100, 100 + len(lines)), dtype=pl.Int64)
    got = Forms()
    got.add_chunk(pl.Series(lines[:1700]), nos[:1700])
    got.add_chunk(pl.Series(lines[1700:]), nos[1700:])
    assert list(got.forms.items()) == _masked_one_by_one(lines, nos.to_list())
    keys = digit_keys(pl.Series(["0x5 29", "\u00e9 8"]).slice(1)).to_list()
    assert keys == ["\u00e9 1"]  # a sliced Series (an offset into its buffers) too


def test_forms_of_a_few_lines_are_those_of_masking_every_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """add_chunk of a few lines at a time (Python, ``_add_few``): the same forms, counts,
    first lines and order as the vectorised path, and (but for lines with ``\x1c``-``\x1f``,
    which the two paths strip differently) as masking every line; the lines ``mask_line``
    does not read (non-ASCII, ``\x1c``-``\x1f``) went to ``mask_series``."""
    import parsers.unknown as unknown

    lines = _lines(3000, seed=9, odd=True)
    nos = list(range(7, 7 + len(lines)))
    sent: list[str] = []
    real = unknown.mask_series

    def spy(s: pl.Series) -> pl.Series:
        sent.extend(s.to_list())
        return real(s)

    monkeypatch.setattr(unknown, "mask_series", spy)
    got = Forms()
    for at in range(0, len(lines), 250):
        got.add_chunk(pl.Series(lines[at:at + 250]), pl.Series(nos[at:at + 250], dtype=pl.Int64))
    plain = [k for k, t in enumerate(lines) if not any(c in t for c in "\x1c\x1d\x1e\x1f")]
    one = Forms()
    for at in range(0, len(plain), 250):
        cut = plain[at:at + 250]
        one.add_chunk(pl.Series([lines[k] for k in cut]), pl.Series([nos[k] for k in cut]))
    assert list(one.forms.items()) == _masked_one_by_one([lines[k] for k in plain],
                                                         [nos[k] for k in plain])
    assert sent and all(not t.isascii() or any(c in t for c in "\x1c\x1d\x1e\x1f")
                        for t in sent)
    assert any("\x1c" in t for t in sent) and any(not t.isascii() for t in sent)
    monkeypatch.setattr(unknown, "FEW_LINES", 0)
    vec = Forms()
    for at in range(0, len(lines), 250):
        vec.add_chunk(pl.Series(lines[at:at + 250]), pl.Series(nos[at:at + 250], dtype=pl.Int64))
    assert vec.forms == got.forms


def test_templates_with_exact_counts_trouble_first(tmp_path: Path) -> None:
    f = tmp_path / "site.log"
    f.write_text(LOG)
    t = unknown_templates([InputFile(f, "site.log")], tz=UTC)
    assert [x.count for x in t] == [7, 30]
    assert t[0].trouble and "quota exhausted" in t[0].template and not t[1].trouble
    assert t[0].first == ("site.log", 1, "quotad[900]: ERROR: project quota exhausted for "
                          "/lustre/proj0, writes denied")


def test_rule_of_kind_text_from_a_template(tmp_path: Path) -> None:
    f = tmp_path / "site.log"
    f.write_text(LOG)
    rules = tmp_path / "site.csv"
    rules.write_text("id,source,kind,code,pattern,category,mode,specificity,scales_with,note\n"
                     "site-quota,*,text,,project quota exhausted for \\S+,storage,fail-stop,"
                     "60,job,our quota daemon\n")
    rows = explain_files([InputFile(f, "site.log")], tz=UTC, extra_rules=[rules])
    quota = [r for r in rows if r["kind"] == "text"]
    assert [r["line_no"] for r in quota] == list(range(1, 8))
    assert {(r["category"], r["code"], r["rule"]) for r in quota} == {
        ("storage", "site-quota", "site-quota")}
    # and the mined templates no longer list them
    left = unknown_templates([InputFile(f, "site.log")], tz=UTC, extra_rules=[rules])
    assert [x.count for x in left] == [30]


def test_ingest_writes_the_templates_table(tmp_path: Path) -> None:
    f = tmp_path / "site.log"
    f.write_text(LOG)
    ingest([InputFile(f, "site.log")], tmp_path / "out", tz=UTC)
    con = duckdb.connect(str(tmp_path / "out" / "tormortem.duckdb"), read_only=True)
    got = con.execute("SELECT count, trouble, first_line_no FROM unknown_templates "
                      "ORDER BY count").fetchall()
    con.close()
    assert got == [(7, True, 1), (30, False, 8)]


def test_forms_by_shapes_are_those_of_digit_keys() -> None:
    """add_shapes groups unparsed lines by the chunk's digit-zeroed shapes (computed for the
    prefilter's masks); a shape with ``0x`` in it may hold lines of different forms (``0x9``
    and ``5x9``), so those go by digit keys. The result must equal add_chunk's, and masking
    every line's."""
    import random

    import numpy as np

    from parsers import dedupe
    from parsers.unknown import HEX_SENSITIVE, MASKS

    rnd = random.Random(11)
    shapes = ["{}x{} at {}", "  0x{}f {}", "id {}-{}", "\u0663{} \u00e9t\u00e9 {}",
              "{}abcdef0123{}", "x" * 320 + "{}{}", "[rank{}] step {} | loss {}", "", "{}"]
    lines = []
    for _ in range(4000):
        shape = rnd.choice(shapes)
        lines.append(shape.format(*(rnd.choice(["0", "5", "10", "0x9", "2.5", "deadbeef00"])
                                    for _ in range(shape.count("{}")))))
    series = pl.Series(lines)
    where = np.flatnonzero(np.array([rnd.random() < 0.7 for _ in lines]))
    by_keys, by_shapes = Forms(), Forms()
    by_keys.add_chunk(series.gather(where), pl.Series(where + 7, dtype=pl.Int64))
    by_shapes.add_shapes(series, where, 7, dedupe.shapes(series))
    assert list(by_shapes.forms.items()) == list(by_keys.forms.items())
    assert len(by_keys.forms) > 20
    # the masks tell a 0 from another digit only in HEX_SENSITIVE
    assert [dedupe.digit_blind(p) for p, _ in MASKS] == [False, True]
    assert dedupe.digit_blind(MASKS[0][0].replace(HEX_SENSITIVE, r"\dx"))
