"""Recognition measured on the labelled format corpus (tests/data/formats, issue 12).

Every group is written to its own file and read through ``explain`` exactly as a user's file
would be (the source sniffed per file). A signal line is *detected* when explain reports it
with a failure, progress or checkpoint category; its *category* is right when one of the
records of that line has the labelled category; an Xid line's *code* is right when an ``xid``
record of the line has the labelled number. A line labelled not-signal is a *false alarm* when
a record of it has a failure category (not none, progress or checkpoint).
"""

from __future__ import annotations

import collections
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

from parsers.reader import InputFile
from pipeline.ingest.explain import explain_files
from tests.parsers.util import corpus_groups

QUIET = (None, "none", "progress", "checkpoint")
#: the acceptance figures of issue 12 (all families together) ...
OVERALL = {"detect": 0.98, "category": 0.95, "xid": 1.0, "false_alarm": 0.01}
#: ... and floors per family, a little under what each reaches today, to catch regressions
FLOORS = {"nvidia": (0.98, 0.95), "kernel": (0.90, 0.87), "nccl": (0.99, 0.99),
          "torch": (0.98, 0.96), "cuda": (0.97, 0.92), "slurm": (0.98, 0.84),
          "k8s": (0.99, 0.95), "progress": (0.99, 0.98), "checkpoint": (0.93, 0.90)}


def measure(tmp_path: Path) -> dict[str, collections.Counter[str]]:
    groups = corpus_groups()
    files = []
    for i, g in enumerate(groups):
        f = tmp_path / f"g{i:05d}.log"
        f.write_text("\n".join(x["text"] for x in g["lines"]) + "\n", encoding="utf-8")
        files.append(InputFile(f, f"g{i:05d}"))
    by_line: dict[tuple[str, int], list[dict[str, Any]]] = collections.defaultdict(list)
    for r in explain_files(files, tz=UTC, year=2024):
        by_line[(r["file"], r["line_no"])].append(r)
    stats: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for i, g in enumerate(groups):
        s = stats[g["family"]]
        for j, x in enumerate(g["lines"], 1):
            recs = by_line.get((f"g{i:05d}", j), [])
            cats = {r["category"] for r in recs}
            if not x.get("signal"):
                s["noise"] += 1
                s["false_alarm"] += any(c not in QUIET for c in cats)
                continue
            s["signal"] += 1
            s["detected"] += any(c not in (None, "none") for c in cats)
            s["cat_ok"] += x.get("category") in cats
            if x.get("kind") == "xid":
                s["xid"] += 1
                s["xid_ok"] += any(r["kind"] == "xid" and r["code"] == str(x.get("code"))
                                   for r in recs)
    return stats


@pytest.fixture(scope="module")
def stats(tmp_path_factory: pytest.TempPathFactory) -> dict[str, collections.Counter[str]]:
    return measure(tmp_path_factory.mktemp("corpus"))


def test_corpus_size() -> None:
    groups = corpus_groups()
    lines = sum(len(g["lines"]) for g in groups)
    formats = {g["format"] for g in groups}
    assert lines >= 1500 and len(formats) >= 100
    assert all(g.get("cite") for g in groups), "every group cites where its format comes from"


def test_overall_recognition(stats: dict[str, collections.Counter[str]]) -> None:
    t: collections.Counter[str] = collections.Counter()
    for s in stats.values():
        t.update(s)
    assert t["detected"] / t["signal"] >= OVERALL["detect"]
    assert t["cat_ok"] / t["signal"] >= OVERALL["category"]
    assert t["xid_ok"] == t["xid"] and t["xid"] >= 100
    assert t["false_alarm"] / t["noise"] <= OVERALL["false_alarm"]


@pytest.mark.parametrize("family", sorted(FLOORS))
def test_family_floor(stats: dict[str, collections.Counter[str]], family: str) -> None:
    s = stats[family]
    detect, category = FLOORS[family]
    assert s["signal"] > 0
    assert s["detected"] / s["signal"] >= detect, dict(s)
    assert s["cat_ok"] / s["signal"] >= category, dict(s)
    # checkpoint: Megatron's "could not find the metadata file" is benign at a first start
    # and trouble after a restart; a line alone cannot tell, tormortem always reports it
    assert s["false_alarm"] / s["noise"] <= (0.04 if family == "checkpoint" else 0.02), dict(s)
