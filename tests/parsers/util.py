"""Helpers for parser tests: parse a text in memory, get rows as plain dicts."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from parsers.base import Accounting, Matcher, Parser
from parsers.driver import parse_text
from parsers.reader import InputFile

#: the recognition corpus: real-format lines, grouped, with what each must become
CORPUS = Path(__file__).resolve().parents[1] / "data" / "formats"


def corpus_groups() -> list[dict[str, Any]]:
    """Every group of the corpus, file by file in name order."""
    groups = []
    for f in sorted(CORPUS.glob("*.jsonl")):
        groups += [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines()
                   if line.strip()]
    return groups


def corpus_lines(signal_only: bool = False) -> list[str]:
    """Every line of the corpus (``signal_only``: those marked as signals), in order."""
    return [x["text"] for g in corpus_groups() for x in g["lines"]
            if not signal_only or x.get("signal")]


# Columns compared by default in parser tests (file/source/format are checked separately).
KEY = ("ts", "host", "kind", "job_id", "rank", "code", "iteration", "value", "device")


def parse(cls: type[Parser], text: str, path: str = "test.log", **kw: Any
          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Accounting]:
    events, records, acct = parse_text(cls, text, path, **kw)
    assert acct.read == acct.events + acct.irrelevant + acct.unparsed
    return events.to_pylist(), records.to_pylist(), acct


def pick(rows: list[dict[str, Any]], keys: tuple[str, ...] = KEY) -> list[dict[str, Any]]:
    """Rows reduced to ``keys``, timestamps as ISO strings: easy to compare with literals."""
    out = []
    for r in rows:
        d = {}
        for k in keys:
            v = r.get(k)
            if isinstance(v, datetime):
                v = v.isoformat().replace("+00:00", "Z")
            d[k] = v
        out.append(d)
    return out


def run_matcher(m: Matcher, lines: list[str]
                ) -> tuple[list[int | None], list[dict[str, Any]]]:
    """Feed ``lines`` to a job-output matcher: its status per line and the rows it emitted."""
    rows: list[dict[str, Any]] = []

    def emit(**kw: Any) -> None:
        rows.append(kw)

    statuses = [m.match(t, i, emit) for i, t in enumerate(lines, 1)]
    m.finish(emit)
    return statuses, rows


def explain_rows(tmp_path: Path, name: str, lines: list[str]) -> dict[int, list[tuple[str, ...]]]:
    """``lines`` written to ``tmp_path/name`` and explained (``tormortem explain``): per line
    number, its rows' (kind, code, category)."""
    from datetime import UTC

    from pipeline.ingest.explain import explain_files

    f = tmp_path / name
    f.write_text("".join(t + "\n" for t in lines), encoding="utf-8")
    out: dict[int, list[tuple[str, ...]]] = {}
    for r in explain_files([InputFile(f, name)], tz=UTC, year=2024):
        out.setdefault(r["line_no"], []).append((r["kind"], str(r["code"]), r["category"]))
    return out


def assert_pasted(tmp_path: Path, name: str, table: list[tuple[str, str, str, str]]) -> None:
    """Each (line, kind, code, category) of ``table`` gives that row, the lines in one file
    named ``name``, then each alone in a file named as nothing in particular."""
    got = explain_rows(tmp_path, name, [t[0] for t in table])
    for i, (text, kind, code, category) in enumerate(table, 1):
        assert (kind, code, category) in got.get(i, []), (text, got.get(i))
    alone = explain_alone(tmp_path, [t[0] for t in table])
    for i, (text, kind, code, category) in enumerate(table):
        assert (kind, code, category) in alone[i], (text, alone[i])


def explain_alone(tmp_path: Path, lines: list[str]) -> list[list[tuple[str, ...]]]:
    """Each line alone in a file of its own (named as nothing in particular), the files
    explained in one call (one set-up, not one a line): per line, its rows' (kind, code,
    category)."""
    from datetime import UTC

    from pipeline.ingest.explain import explain_files

    files = []
    for i, text in enumerate(lines):
        f = tmp_path / f"paste{i}.txt"
        f.write_text(text + "\n", encoding="utf-8")
        files.append(InputFile(f, f.name))
    out: list[list[tuple[str, ...]]] = [[] for _ in lines]
    for r in explain_files(files, tz=UTC, year=2024):
        assert r["line_no"] == 1, r
        out[int(r["file"][5:-4])].append((r["kind"], str(r["code"]), r["category"]))
    return out


def assert_steps(table: list[tuple[Any, ...]], name: str) -> None:
    """Each line of ``table`` ((line, kind, code, category, step)), in one job output file
    ``name``, gives one row of that kind carrying that step."""
    from parsers.joblog import JobLogParser

    rows, _, acct = parse(JobLogParser, "".join(t[0] + "\n" for t in table), name)
    by_line = {r["line_no"]: r for r in rows}
    for i, (line, kind, _code, _cat, step) in enumerate(table, 1):
        assert (by_line[i]["kind"], by_line[i]["iteration"]) == (kind, step), line
    assert acct.events == len(table)
