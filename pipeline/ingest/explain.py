"""``explain``: for every line that carries a signal, what it is and what it means."""

from __future__ import annotations

from datetime import tzinfo
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from parsers.driver import parse_file
from parsers.reader import InputFile
from parsers.schema import EVENTS
from pipeline.ingest import ruletable as rules_mod
from pipeline.ingest.sink import create_tables, events_view_sql

FIELDS = ("file", "line_no", "source", "kind", "category", "code", "rule", "ts", "host",
          "message")


def explain_files(files: list[InputFile], *, tz: tzinfo, year: int | None = None,
                  source: str | None = None, extra_rules: list[Path] | None = None
                  ) -> list[dict[str, Any]]:
    """One record per event of ``files``, classified by the rule table, in file/line order."""
    rules = rules_mod.load_rules(extra_rules or [])
    rules_mod.activate_text_rules(rules)
    batches: list[pa.RecordBatch] = []
    for f in files:
        parse_file(f, batches.append, lambda _b: None, tz=tz, year=year, source=source)
    events = pa.Table.from_batches(batches, EVENTS)
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        create_tables(con, "events_other", events)
        con.execute(events_view_sql())
        rules_mod.register(con, rules)
        table = rules_mod.classify(con)
    finally:
        con.close()
    out = []
    for r in table.to_pylist():
        ts = r["ts"]
        out.append({
            "file": r["file"], "line_no": r["line_no"], "source": r["source"],
            "kind": r["kind"], "category": r["category"], "code": r["code"],
            "rule": r["rule_id"],
            "ts": ts.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if ts is not None else None,
            "host": r["host"], "message": r["message"],
        })
    return out
