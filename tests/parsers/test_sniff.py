"""Sniffing shortcuts against their definitions: ``head_lines`` is ``splitlines()[:n]``;
``registry.detect`` skips a parser only when its ``MAX_SCORE`` cannot beat the best so far,
so every sniffer must stay within its ``MAX_SCORE`` (checked on the heads of the recognition
corpus, the sample logs and the tests' own formats)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from parsers import registry
from parsers.base import head_lines
from tests.parsers.util import corpus_groups

ROOT = Path(__file__).resolve().parents[2]
BREAKS = ["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", ""]


@pytest.mark.parametrize("seed", range(40))
def test_head_lines_is_splitlines(seed: int) -> None:
    rng = random.Random(seed)
    parts = []
    for _ in range(rng.randrange(0, 3000)):
        parts.append("x" * rng.choice([0, 1, 5, 80, 4095, 4096, 9000]))
        parts.append(rng.choice(BREAKS))
    head = "".join(parts)
    for n in (1, 5, 20, 60, 500):
        assert head_lines(head, n) == head.splitlines()[:n]


def _heads() -> list[tuple[str, str]]:
    out = [("\n".join(x["text"] for x in g["lines"]) + "\n", f"corpus-{i}.log")
           for i, g in enumerate(corpus_groups())]
    for f in sorted((ROOT / "sample_logs").rglob("*")):
        if f.is_file():
            out.append((f.read_bytes()[:65536].decode("utf-8", "replace"), str(f)))
    return out


def test_no_sniffer_exceeds_its_max_score() -> None:
    heads = _heads()
    assert len(heads) > 2000
    for cls in registry.ALL:
        for head, path in heads:
            assert cls.sniff(head, path) <= cls.MAX_SCORE, (cls.name, path)


def test_detect_with_and_without_the_shortcut_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    heads = _heads()
    fast = [registry.detect(h, p) for h, p in heads]
    for cls in registry.ALL:
        monkeypatch.setattr(cls, "MAX_SCORE", 101)
    assert [registry.detect(h, p) for h, p in heads] == fast
