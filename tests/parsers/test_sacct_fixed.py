"""Plain ``sacct`` (no ``-p``/``-P``): fixed-width columns, as users paste it.

The layout is src/common/print_fields.c (print_fields_header, print_fields_str): every
field printed ``%*.*s `` (right-justified) or ``%-*.*s `` (a negative width: left), one
space after each, the header names cut to the width, a line of dashes under them, and a
value longer than its width cut to it with ``+`` as its last character. ``_fixed`` below
prints rows that way; the widths are sacct's defaults (src/sacct/sacct.c fields[]: JobID
-12, JobName 10, State 10, ExitCode 8, Start/End/Submit 19, NNodes 8, NodeList -15) or
widened the way users widen them (``--format=NodeList%40``).
"""

from __future__ import annotations

from pathlib import Path

from parsers import registry
from parsers.driver import parse_file
from parsers.reader import InputFile
from parsers.sacct import SacctTextParser
from tests.parsers.test_sacct import HEADER, ROWS_REAL1, recs
from tests.parsers.util import parse

DEFAULT = {"jobid": -12, "jobidraw": -12, "jobname": 10, "state": 10, "exitcode": 8,
           "derivedexitcode": 11, "submit": 19, "eligible": 19, "start": 19, "end": 19,
           "elapsed": 10, "nnodes": 8, "nodelist": -15, "alloctres": 10, "reason": 10}


def _field(value: str, width: int) -> str:
    n = abs(width)
    v = value if len(value) <= n else value[:n - 1] + "+"
    return (f"{v:>{n}.{n}} " if width > 0 else f"{v:<{n}.{n}} ") if v else " " * n + " "


def _fixed(header: str, rows: list[str], widths: dict[str, int]) -> str:
    names = header.split("|")
    w = [widths[n.lower()] for n in names]
    head = "".join(f"{n:>{abs(k)}.{abs(k)}} " if k > 0 else f"{n:<{abs(k)}.{abs(k)}} "
                   for n, k in zip(names, w, strict=True))
    dashes = "".join("-" * abs(k) + " " for k in w)
    body = ["".join(_field(v, k) for v, k in zip(r.split("|"), w, strict=True)) for r in rows]
    return "\n".join([head, dashes, *body]) + "\n"


WIDE = {**DEFAULT, "state": 16, "alloctres": 45}


def test_fixed_width_rows_are_the_parsable2_records() -> None:
    text = _fixed(HEADER, ROWS_REAL1, WIDE)
    assert "CANCELLED by 0" in text and "-" * 45 in text
    assert registry.detect(text, "sacct.txt")[0] is SacctTextParser
    _, want, _ = parse(SacctTextParser, "\n".join([HEADER, *ROWS_REAL1]) + "\n", "a.psv")
    events, got, acct = parse(SacctTextParser, text, "sacct.txt")
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (7, 5, 2, 0)
    assert recs(got) == recs(want) and len(events) == 3


def test_cut_node_lists_are_unread_and_said(tmp_path: Path) -> None:
    """sacct's default NodeList width (15) cuts a 16-node list: those rows are not data (a
    cut node list is a different set of nodes); the file's note names the column and how to
    print it whole."""
    rows = [r.replace("|n4|", "|gpu-node[001-016]|") for r in ROWS_REAL1]
    text = _fixed(HEADER, rows, {**WIDE, "nodelist": -15})
    assert "gpu-node[001-0+" in text
    _, got, acct = parse(SacctTextParser, text, "sacct.txt")
    assert acct.unparsed == 2 and [r["job_id"] for r in got] == ["7", "7", "7"]
    f = tmp_path / "sacct.txt"
    f.write_text(text)
    res = parse_file(InputFile(f, "sacct.txt"), lambda b: None, lambda b: None)
    assert res.source == "sacct" and res.note is not None
    assert "nodelist (2 rows)" in res.note and "--parsable2" in res.note


def test_cut_job_names_are_kept_as_printed() -> None:
    rows = [r.replace("|nodefail|", "|llama-pretrain-70b|") for r in ROWS_REAL1]
    text = _fixed(HEADER, rows, WIDE)
    _, got, acct = parse(SacctTextParser, text, "sacct.txt")
    assert acct.unparsed == 0
    assert {r["name"] for r in got if r["job_id"] == "7" and r["step"] is None} == {
        "llama-pre+"}


def test_default_widths_cut_state_and_tres_but_keep_the_rows() -> None:
    """sacct's default State (10) and AllocTRES (10) widths: ``CANCELLED+`` is CANCELLED,
    ``OUT_OF_ME+`` OUT_OF_MEMORY; a cut TRES gives no GPU count (not a wrong one)."""
    rows = [r.replace("|NODE_FAIL|", "|OUT_OF_MEMORY|") for r in ROWS_REAL1]
    text = _fixed(HEADER, rows, DEFAULT)
    assert "CANCELLED+" in text and "OUT_OF_ME+" in text and "billing=1+" in text
    _, got, acct = parse(SacctTextParser, text, "sacct.txt")
    assert acct.unparsed == 0
    assert [(r["job_id"], r["step"], r["state"], r["gpus"]) for r in got] == [
        ("6", None, "CANCELLED", None), ("6", "batch", "CANCELLED", None),
        ("7", None, "OUT_OF_MEMORY", None), ("7", "batch", "CANCELLED", None),
        ("7", None, "COMPLETED", None)]
