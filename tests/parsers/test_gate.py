"""The message layer asks only the recognisers with an anchor in a message (``parsers.gate``):
every line gives the same status and the same rows as when every recogniser is asked.

The lines: every real-format line of the corpus (``tests/data/formats``: each group cites where
its lines come from) and of the real-format samples (``sample_logs/real_formats``), in file
order (so the recognisers' multi-line blocks open and close as they do in a file), each as it
was printed and with its known prefixes peeled, as the dialects hand them over."""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

from parsers import message
from parsers.prefix import peel
from parsers.timeutil import YearInference

ROOT = Path(__file__).resolve().parents[2]


def _lines() -> list[str]:
    out: list[str] = []
    for f in sorted((ROOT / "tests" / "data" / "formats").glob("*.jsonl")):
        for row in f.read_text(encoding="utf-8").splitlines():
            out += [ln["text"] for ln in json.loads(row).get("lines", [])]
    for f in sorted((ROOT / "sample_logs" / "real_formats").rglob("*")):
        if f.is_file() and f.suffix not in (".gz", ".zst", ".md", ".json"):
            out += f.read_text(encoding="utf-8", errors="replace").splitlines()[:400]
    return [ln for part in out for ln in part.split("\r") if ln.strip()]


class _Rows(list[dict[str, Any]]):
    def emit(self, **fields: Any) -> None:
        self.append(fields)


def _run(lines: list[str]) -> list[tuple[int | None, list[dict[str, Any]]]]:
    layer = message.MessageLayer(message.all_recognisers())
    years = YearInference(None, None)
    got = []
    for n, line in enumerate(lines, 1):
        for text in (line, peel(line, UTC, years).msg):
            rows = _Rows()
            got.append((layer.match(text, n, rows.emit), rows))
    layer.finish(lambda **f: got.append((None, [f])))
    return got


def test_the_gate_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _lines()
    assert len(lines) > 3000
    monkeypatch.setenv("TORMORTEM_PREFILTER", "1")
    gated = _run(lines)
    monkeypatch.setenv("TORMORTEM_PREFILTER", "0")
    every = _run(lines)
    assert sum(1 for st, _ in every if st is not None) > 1000  # the lines are claimed ...
    assert sum(len(rows) for _, rows in every) > 500  # ... and give rows
    diff = [(lines[i // 2], g, e) for i, (g, e) in enumerate(zip(gated, every, strict=True))
            if g != e]
    assert not diff, diff[:5]


def test_the_gate_skips_recognisers() -> None:
    """It is on by default and leaves out the recognisers a message has no anchor of."""
    layer = message.MessageLayer(message.all_recognisers())
    assert layer.gate is not None
    mask = layer.gate.mask("Configuration saved in out/checkpoint-500/config.json")
    asked = [type(r).__name__ for i, r in enumerate(layer.recognisers) if mask >> i & 1]
    assert "KernelMessages" not in asked and "CtldMessages" not in asked
    assert "HfTrainerMatcher" in asked and "SignatureMatcher" in asked
