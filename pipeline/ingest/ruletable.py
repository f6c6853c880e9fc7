"""The rule table: failure taxonomy as data (``pipeline/ingest/rules/*.csv`` plus user files).

See ``pipeline/ingest/rules/README.md`` for the columns and how a rule is chosen. Loading validates
every row (known category and mode, specificity 0-100, RE2-valid regular expressions) and
reports the first problem as ``RulesError`` with the file and row, so a user's rule file fails
with a message that says what to fix.
"""

from __future__ import annotations

import csv
import io
import re
from importlib import resources
from pathlib import Path

import duckdb
import pyarrow as pa

from parsers.textfile import NotText, read_text

CATEGORIES = (
    "gpu_hardware", "gpu_memory", "gpu_driver", "nvlink", "network", "nccl_error",
    "nccl_timeout", "node_failure", "storage", "oom_host", "oom_gpu", "user_code",
    "preemption", "scheduler", "progress", "checkpoint", "unknown", "none",
)
MODES = ("fail-stop", "fail-slow", "none")
SCALES = ("gpu", "node", "job", "none")
COLUMNS = ("id", "source", "kind", "code", "pattern", "category", "mode", "specificity",
           "scales_with", "note")

RULES_SCHEMA = pa.schema([
    ("id", pa.string()), ("source", pa.string()), ("kind", pa.string()), ("code", pa.string()),
    ("pattern", pa.string()), ("category", pa.string()), ("mode", pa.string()),
    ("specificity", pa.int32()), ("scales_with", pa.string()), ("note", pa.string()),
    ("ord", pa.int32()), ("n_conditions", pa.int32()), ("origin", pa.string()),
])


class RulesError(ValueError):
    """A rule file that cannot be used; the message names the file, row and fix."""


def builtin_files() -> list[Path]:
    folder = resources.files("pipeline.ingest.rules")
    return sorted(Path(str(p)) for p in folder.iterdir() if str(p).endswith(".csv"))


def _check(row: dict[str, str], where: str, regexes: list[tuple[str, str, str]]) -> None:
    missing = [c for c in ("id", "kind", "category") if not row.get(c)]
    if missing:
        raise RulesError(f"{where}: empty {', '.join(missing)}; every rule needs id, kind "
                         "and category")
    if row["category"] not in CATEGORIES:
        raise RulesError(f"{where}: unknown category {row['category']!r}; use one of "
                         f"{', '.join(CATEGORIES)}")
    if (row.get("mode") or "none") not in MODES:
        raise RulesError(f"{where}: unknown mode {row['mode']!r}; use one of {', '.join(MODES)}")
    if (row.get("scales_with") or "none") not in SCALES:
        raise RulesError(f"{where}: unknown scales_with {row['scales_with']!r}; use one of "
                         f"{', '.join(SCALES)}")
    spec = row.get("specificity") or "0"
    if not spec.isdigit() or not 0 <= int(spec) <= 100:
        raise RulesError(f"{where}: specificity {spec!r} must be a whole number 0-100")
    for col in ("code", "pattern"):
        if row.get(col):
            regexes.append((where, col, row[col]))


def _check_regexes(regexes: list[tuple[str, str, str]]) -> None:
    """Every pattern must compile in DuckDB (RE2). All in one query; only if that fails, one
    by one, to name the first bad one (one query each took ~0.5 ms, 80 ms at start-up)."""
    if not regexes:
        return
    con = duckdb.connect()
    try:
        try:
            # evaluated for every row (a bare count(*) would skip the function)
            con.execute("SELECT bool_or(regexp_matches('', p)) FROM "
                        "(SELECT unnest(?::VARCHAR[]) AS p)", [[r for _, _, r in regexes]])
            return
        except duckdb.Error:
            pass
        for where, col, regex in regexes:
            try:
                con.execute("SELECT regexp_matches('', ?)", [regex])
            except duckdb.Error as e:
                raise RulesError(f"{where}: {col} {regex!r} is not a valid regular "
                                 f"expression (RE2): {e}") from None
    finally:
        con.close()


def load_rules(extra: list[Path] | None = None) -> pa.Table:
    """Built-in rules, then ``extra`` files; a later rule with the same id replaces the
    earlier one."""
    files = [(p, "builtin") for p in builtin_files()] + [(p, "user") for p in extra or []]
    by_id: dict[str, dict[str, object]] = {}
    regexes: list[tuple[str, str, str]] = []
    ord_ = 0
    for path, origin in files:
        try:  # UTF-8 (a BOM too) or UTF-16: the CSV module would fail mid-file otherwise
            fh = io.StringIO(read_text(path), newline="")
        except OSError as e:
            raise RulesError(f"cannot read rules file {path}: {e.strerror}") from None
        except NotText as e:
            raise RulesError(str(e)) from None
        with fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames is None or not set(COLUMNS) <= set(reader.fieldnames):
                raise RulesError(f"{path}: the header must have the columns "
                                 f"{','.join(COLUMNS)}")
            for i, row in enumerate(reader, start=2):
                row = {k: (v or "").strip() for k, v in row.items() if k}
                if not any(row.values()) or row["id"].startswith("#"):
                    continue
                _check(row, f"{path} line {i}", regexes)
                ord_ += 1
                by_id.pop(row["id"], None)
                by_id[row["id"]] = {
                    **{c: (row.get(c) or None) for c in COLUMNS},
                    "source": row.get("source") or "*",
                    "mode": row.get("mode") or "none",
                    "scales_with": row.get("scales_with") or "none",
                    "specificity": int(row.get("specificity") or 0),
                    "ord": ord_,
                    "n_conditions": int(bool(row.get("code"))) + int(bool(row.get("pattern"))),
                    "origin": origin,
                }
    _check_regexes(regexes)
    return pa.Table.from_pylist(list(by_id.values()), RULES_SCHEMA)


def activate_text_rules(rules: pa.Table) -> None:
    """Rules of kind ``text`` are signatures too: their ``pattern`` (searched in the message of
    every line no recogniser claims) makes an event of kind ``text`` with the rule's id as
    code, which that rule then classifies. This is how a rule written from an unknown-line
    template (``tormortem explain --unknown``) takes effect without code."""
    from parsers import signature_table as st
    from parsers.anchors import required_literals

    extra = []
    for r in rules.to_pylist():
        if r["kind"] != "text":
            continue
        pattern = r["pattern"] or ""
        anchors = required_literals(pattern) if pattern else None
        if anchors is None:
            raise RulesError(f"rule {r['id']!r} (kind text) needs a pattern with literal text "
                             "(e.g. a word of the template) so lines can be selected by it")
        try:
            regex = re.compile(pattern)
        except re.error as e:
            raise RulesError(f"rule {r['id']!r}: pattern {pattern!r}: {e}") from None
        extra.append(st.Signature(str(r["id"]), "text", regex, (("code", str(r["id"])),), (),
                                  "user-rule", False, tuple(sorted(anchors.literals)),
                                  anchors.ci, (), str(r["note"] or "")))
    st.EXTRA[:] = extra


def register(con: duckdb.DuckDBPyConnection, rules: pa.Table) -> None:
    """Create the table ``rules`` in ``con`` from ``rules``."""
    con.register("rules_arrow", rules)
    con.execute("CREATE OR REPLACE TABLE rules AS SELECT * FROM rules_arrow ORDER BY ord")
    con.unregister("rules_arrow")


def sql(name: str) -> str:
    """The SQL statement in ``pipeline/ingest/sql/<name>.sql``."""
    return resources.files("pipeline.ingest.sql").joinpath(f"{name}.sql").read_text(
        encoding="utf-8")


def classify(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """``classified_events`` over the table ``events`` in ``con`` (rules registered)."""
    return con.sql(sql("classified_events")).to_arrow_table()
