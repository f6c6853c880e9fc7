"""Property-based fuzzing of every parser (parsers.registry.ALL, line and document parsers)
with hypothesis, on random text and on real lines mutated (issue 15, section 6).

Properties, per case: no exception (a document parser may refuse a document that is not JSON,
or JSON of another shape than its source writes: ``parsers.driver.DOCUMENT_ERRORS``, which the
driver turns into a file counted unparsed, with the reason, and no rows); the rows fit the
Arrow schemas; and the line accounting holds: every line given is read
once, and read = events + irrelevant + unparsed.

Real lines come from sample_logs/ (every file but the notes) and from the string literals of
tests/parsers/ (the real-format lines the parser tests cite). The quick run tries
``QUICK`` cases per parser; the slow run (``-m "slow and not slurm"``) ``SLOW`` per parser
(``TORMORTEM_FUZZ_CASES``, 1,000 by default so that ``.ci/run`` stays well inside its 30
minutes: 14 parsers at 10,000 cases took ~20 of them on 2 cores, and at 3,000 ~8 minutes
of a 29-minute run on 2026-12-02's slower machine) and asserts that many ran.
Run by hand with ``-s`` to see the counts, and ``TORMORTEM_FUZZ_CASES=10000`` for the long run.
"""

from __future__ import annotations

import ast
import json
import os
from collections import Counter
from datetime import UTC, datetime
from functools import cache

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsers import progress_batch
from parsers.base import DocumentParser, FileContext, LineParser, Parser
from parsers.driver import DOCUMENT_ERRORS
from parsers.reader import _valid_utf8, lines_series
from parsers.registry import ALL
from parsers.schema import ATTEMPTS, EVENTS
from tests.reliability.conftest import ROOT

QUICK, SLOW = 150, int(os.environ.get("TORMORTEM_FUZZ_CASES", "1000"))
RAN: Counter[str] = Counter()
PATHS = ["nodes/node017/kern.log", "jobs/slurm-4242.out", "slurm/slurmctld.log",
         "slurmd-n4.log", "sacct.txt", "k8s/events.json", "logs/x.log"]


@cache
def real_lines() -> list[str]:
    lines: list[str] = []
    for p in sorted((ROOT / "sample_logs").rglob("*")):
        if p.is_file() and p.suffix not in (".md",) and p.stat().st_size < 2_000_000:
            lines += p.read_text(errors="replace").splitlines()[:400]
    for p in sorted((ROOT / "tests" / "parsers").glob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    len(node.value) > 15:
                lines += node.value.splitlines()
    return sorted(set(ln for ln in lines if ln.strip()))


@cache
def real_documents() -> list[bytes]:
    """The JSON documents of sample_logs/, each with its lists cut to two items (the same
    shapes, small enough to mutate 10,000 times in seconds)."""
    docs = [p.read_bytes() for p in sorted((ROOT / "sample_logs").rglob("*.json"))]
    return docs + [json.dumps(_two(json.loads(d))).encode() for d in docs]


def _two(doc: object) -> object:
    if isinstance(doc, dict):
        return {k: _two(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_two(v) for v in doc[:2]]
    return doc


@cache
def small_documents() -> list[bytes]:
    return real_documents()[len(real_documents()) // 2:]


_NASTY = ["\x00", "\ufffd", "\r", "\t", "\x1b[31m", "é", "🙂", " " * 40, "9" * 40, "-1", "0",
          "2024-13-45T25:61:61", "10000-01-01T00:00:00", "[", "]", "(", ")", "{", "}", "|",
          ":", "=", ",", "'", '"', "\\", "nan", "inf", "1e309", "Xid", "NCCL", "iteration"]


@st.composite
def mutated_line(draw: st.DrawFn) -> str:
    line = draw(st.sampled_from(real_lines()))
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(line)))
        j = draw(st.integers(i, min(len(line), i + 30)))
        op = draw(st.integers(0, 5))
        if op == 0:
            line = line[:i] + line[j:]  # delete
        elif op == 1:
            line = line[:i] + draw(st.sampled_from(_NASTY)) + line[i:]  # insert a nasty bit
        elif op == 2:
            line = line[:i] + draw(st.text(max_size=12)) + line[j:]  # replace by random text
        elif op == 3:
            line = line[:j] + line[i:j] + line[j:]  # duplicate a slice
        elif op == 4:
            line = line[:i]  # truncate
        else:  # another number where a digit was
            k = next((m for m in range(i, len(line)) if line[m].isdigit()), None)
            if k is not None:
                line = line[:k] + str(draw(st.integers(-10**20, 10**20))) + line[k + 1:]
    return line.replace("\n", " ")


lines_strategy = st.lists(st.one_of(mutated_line(), mutated_line(),
                                    st.text(max_size=80).map(lambda s: s.replace("\n", " "))),
                          min_size=1, max_size=12)


def _json_values() -> st.SearchStrategy[object]:
    return st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20)
                        | st.floats(allow_nan=False) | st.text(max_size=20),
                        lambda kids: st.lists(kids, max_size=3)
                        | st.dictionaries(st.text(max_size=8), kids, max_size=3), max_leaves=6)


@st.composite
def mutated_document(draw: st.DrawFn) -> bytes:
    raw = draw(st.sampled_from(small_documents()))
    if draw(st.integers(0, 5)) == 0:  # byte-level damage: mostly not JSON any more
        i = draw(st.integers(0, len(raw)))
        return raw[:i] + draw(st.binary(max_size=20)) + raw[i + draw(st.integers(0, 50)):]
    doc = json.loads(raw)
    for _ in range(draw(st.integers(1, 6))):
        doc = _mutate(doc, draw)
    return json.dumps(doc).encode()


def _mutate(doc: object, draw: st.DrawFn) -> object:
    """Replace or delete one value somewhere in ``doc`` (a walk down random keys)."""
    if isinstance(doc, dict) and doc:
        k = draw(st.sampled_from(sorted(doc, key=str)))
        op = draw(st.integers(0, 3))
        if op == 0:
            return {kk: v for kk, v in doc.items() if kk != k}
        if op == 1:
            return {**doc, k: draw(_json_values())}
        return {**doc, k: _mutate(doc[k], draw)}
    if isinstance(doc, list) and doc:
        i = draw(st.integers(0, len(doc) - 1))
        op = draw(st.integers(0, 3))
        if op == 0:
            return doc[:i] + doc[i + 1:]
        if op == 1:
            return [*doc[:i], draw(_json_values()), *doc[i + 1:]]
        return [*doc[:i], _mutate(doc[i], draw), *doc[i + 1:]]
    return draw(_json_values())


def _ctx(path: str) -> FileContext:
    return FileContext.for_path(path, UTC, datetime(2024, 5, 3, tzinfo=UTC), None)


def _check_rows(p: Parser) -> None:
    for b in p.events.drain():
        if progress_batch.is_progress(b):
            b = progress_batch.to_events(b)
        assert b.schema.equals(EVENTS, check_metadata=False), b.schema
        pa.Table.from_batches([b], EVENTS).validate(full=True)
    for b in p.records.drain():
        assert b.schema.equals(ATTEMPTS, check_metadata=False), b.schema


def run_lines(cls: type[Parser], lines: list[str], path: str, cut: int) -> None:
    p = cls(_ctx(path))
    assert isinstance(p, LineParser)
    data = ("\n".join(lines) + "\n").encode("utf-8", errors="surrogatepass")
    # two chunks, cut at a line boundary: state carried across chunks is exercised too
    parts = data.split(b"\n")[:-1]
    cut = min(cut, len(parts))
    first = 1
    for chunk in (parts[:cut], parts[cut:]):
        if not chunk:
            continue
        s = lines_series(_valid_utf8(b"\n".join(chunk) + b"\n"))
        p.parse_chunk(s, first, p.prepare(s))
        first += len(s)
        _check_rows(p)
    p.finish()
    _check_rows(p)
    a = p.acct
    assert a.read == len(parts), (a.read, len(parts))
    assert a.read == a.events + a.irrelevant + a.unparsed


def run_document(cls: type[Parser], data: bytes, path: str) -> None:
    p = cls(_ctx(path))
    assert isinstance(p, DocumentParser)
    try:
        p.parse_document(data)
    except DOCUMENT_ERRORS:  # not JSON, or not the shape of its source: the driver counts
        return  # the file's lines unparsed, with the reason, and keeps none of its rows
    _check_rows(p)
    a = p.acct
    assert a.read == a.events + a.irrelevant + a.unparsed


LINE = [c for c in ALL if issubclass(c, LineParser)]
DOCS = [c for c in ALL if issubclass(c, DocumentParser)]


def _line_test(n: int):  # type: ignore[no-untyped-def]
    @settings(max_examples=n, deadline=None, database=None, derandomize=n == QUICK,
              suppress_health_check=list(HealthCheck))
    @given(lines=lines_strategy, path=st.sampled_from(PATHS), cut=st.integers(0, 12))
    def check(cls: type[Parser], lines: list[str], path: str, cut: int) -> None:
        RAN[cls.name] += 1
        run_lines(cls, lines, path, cut)
    return check


def _doc_test(n: int):  # type: ignore[no-untyped-def]
    @settings(max_examples=n, deadline=None, database=None, derandomize=n == QUICK,
              suppress_health_check=list(HealthCheck))
    @given(data=st.one_of(mutated_document(), mutated_document(), st.binary(max_size=200),
                          _json_values().map(lambda v: json.dumps(v).encode())),
           path=st.sampled_from(PATHS))
    def check(cls: type[Parser], data: bytes, path: str) -> None:
        RAN[cls.name] += 1
        run_document(cls, data, path)
    return check


@pytest.mark.parametrize("cls", LINE, ids=lambda c: c.name)
def test_line_parsers_quick(cls: type[Parser]) -> None:
    _line_test(QUICK)(cls)


@pytest.mark.parametrize("cls", DOCS, ids=lambda c: c.name)
def test_document_parsers_quick(cls: type[Parser]) -> None:
    _doc_test(QUICK)(cls)


@pytest.mark.slow
@pytest.mark.parametrize("cls", LINE, ids=lambda c: c.name)
def test_line_parsers_10k(cls: type[Parser]) -> None:
    before = RAN[cls.name]
    _line_test(SLOW)(cls)
    print(f"{cls.name}: {RAN[cls.name] - before} cases, 0 crashes")
    assert RAN[cls.name] - before >= SLOW


@pytest.mark.slow
@pytest.mark.parametrize("cls", DOCS, ids=lambda c: c.name)
def test_document_parsers_10k(cls: type[Parser]) -> None:
    before = RAN[cls.name]
    _doc_test(SLOW)(cls)
    print(f"{cls.name}: {RAN[cls.name] - before} cases, 0 crashes")
    assert RAN[cls.name] - before >= SLOW


def test_the_corpus_is_real_and_large() -> None:
    assert len(real_lines()) > 1000 and len(real_documents()) >= 6
    assert {c.name for c in ALL} == {c.name for c in LINE} | {c.name for c in DOCS}


def test_what_the_fuzzer_found() -> None:
    """The crashes the 10,000-case runs found, kept as plain regression cases."""
    from parsers.joblog import JobLogParser
    from parsers.own import OwnDocumentParser
    from parsers.sacct import SacctJsonParser

    # Megatron-LM's iteration line with an iteration past 2**63 - 1: OverflowError in Arrow
    run_lines(JobLogParser, [
        " [2024-05-01 02:47:15] iteration      9223372036854775808/   10800 | consumed "
        "samples:       110592 | elapsed time per iteration (ms): 23367.1 | learning rate: "
        "1.620000E-05 | global batch size:  1024 | lm loss: 1.056936E+01 | loss scale: 1.0 | "
        "grad norm: 0.890 | number of skipped iterations:   0 | number of nan iterations:   0 |"],
        "jobs/slurm-4242.out", 0)
    # sacct --json (Slurm 22.05) with an end time whose microseconds do not fit in int64
    doc = json.loads((ROOT / "sample_logs/real_formats/slurm/run1/sacct.json").read_text())
    doc["jobs"][0]["time"]["end"] = 17951795981953
    run_document(SacctJsonParser, json.dumps(doc).encode(), "sacct.json")
    # sacct --json with a job state that is not an object (true): AttributeError, now the
    # file counted unparsed "not the structure sacct_json has"
    doc = json.loads((ROOT / "sample_logs/real_formats/slurm/run1/sacct.json").read_text())
    doc["jobs"][0]["state"] = True
    run_document(SacctJsonParser, json.dumps(doc).encode(), "sacct.json")
    # sacct --json with a job name that is not a string (true): ArrowTypeError
    doc = json.loads((ROOT / "sample_logs/real_formats/slurm/run1/sacct.json").read_text())
    doc["jobs"][0]["name"] = True
    run_document(SacctJsonParser, json.dumps(doc).encode(), "sacct.json")
    # a Megatron timer line whose number is a lone ".": float('.') raised ValueError
    run_lines(JobLogParser, ["    save-checkpoint ....: ."], "jobs/slurm-4242.out", 0)
    # --source tormortem on JSON that is not an object
    for data in (b"0", b"[1, 2]", b"null", b'"x"'):
        run_document(OwnDocumentParser, data, "x.json")
