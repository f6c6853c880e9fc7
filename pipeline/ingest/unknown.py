"""Templates of the lines nothing recognised: where the next rule comes from.

The parsers count every unparsed line by its masked form (``parsers.unknown``); here the forms
of all files are mined into templates with Drain3 (the standard log template miner: a fixed
depth parse tree over tokens, similarity threshold 0.4) and each template gets the sum of its
forms' counts, the files it occurs in, its first example and where that is. Templates whose
words look like trouble (error, fail, fatal, exception, timeout, killed, abort, ...) come first:
a rule written from one of them (``--rules``, kind ``text``; see the rules README) turns those
lines into events.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from parsers.unknown import OVERFLOW

TROUBLE = re.compile(r"(?i)\b(?:error|err|fail\w*|fatal|exception|timed? ?out|timeout|killed|"
                     r"abort\w*|panic|crash\w*|segfault|unreachable|refused|denied|lost|corrupt"
                     r"\w*|invalid|cannot|unable)\b")

UNKNOWN_TEMPLATES = pa.schema([
    ("template", pa.string()), ("count", pa.int64()), ("files", pa.int64()),
    ("trouble", pa.bool_()), ("first_file", pa.string()), ("first_line_no", pa.int64()),
    ("example", pa.string()),
])


@dataclass
class Template:
    template: str
    count: int = 0
    files: set[str] = field(default_factory=set)
    first: tuple[str, int, str] | None = None  #: (file, line, example) in input order

    @property
    def trouble(self) -> bool:
        return bool(TROUBLE.search(self.template))


def mine(per_file: Iterable[tuple[str, dict[str, list[Any]]]], limit: int = 200
         ) -> list[Template]:
    """Templates from ``(file, forms)`` pairs (``parsers.unknown.Forms.forms``), trouble first,
    then by count; at most ``limit``."""
    from drain3 import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig

    cfg = TemplateMinerConfig()
    cfg.profiling_enabled = False
    cfg.drain_sim_th = 0.4
    miner = TemplateMiner(config=cfg)
    by_id: dict[int, Template] = {}
    overflow = Template(OVERFLOW)
    for file, forms in per_file:
        for form, (count, line_no, example) in forms.items():
            if form == OVERFLOW:
                _add(overflow, file, int(count), int(line_no), str(example))
                continue
            res = miner.add_log_message(form)
            cid = int(res["cluster_id"])
            t = by_id.setdefault(cid, Template(""))
            _add(t, file, int(count), int(line_no), str(example))
    for cluster in miner.drain.clusters:
        if cluster.cluster_id in by_id:
            by_id[cluster.cluster_id].template = cluster.get_template()
    out = sorted(by_id.values(), key=lambda t: (not t.trouble, -t.count, t.template))
    if overflow.count:
        out.append(overflow)
    return out[:limit]


def _add(t: Template, file: str, count: int, line_no: int, example: str) -> None:
    t.count += count
    t.files.add(file)
    if t.first is None:
        t.first = (file, line_no, example)


def to_table(templates: list[Template]) -> pa.Table:
    rows = [{"template": t.template, "count": t.count, "files": len(t.files),
             "trouble": t.trouble, "first_file": t.first[0] if t.first else None,
             "first_line_no": t.first[1] if t.first else None,
             "example": t.first[2] if t.first else None} for t in templates]
    return pa.Table.from_pylist(rows, UNKNOWN_TEMPLATES)


def unknown_templates(files: list[Any], *, tz: Any, year: int | None = None,
                      source: str | None = None, extra_rules: list[Any] | None = None,
                      limit: int = 200) -> list[Template]:
    """Parse ``files`` (nothing written) and mine the templates of their unparsed lines."""
    from parsers.driver import parse_file
    from pipeline.ingest import ruletable

    ruletable.activate_text_rules(ruletable.load_rules(extra_rules or []))
    per_file = []
    for f in files:
        res = parse_file(f, lambda _b: None, lambda _b: None, tz=tz, year=year, source=source)
        per_file.append((res.file, res.acct.unknown.forms))
    return mine(per_file, limit)
