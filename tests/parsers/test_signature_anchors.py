"""The signature table's per-line selection of signatures by anchor (``_having_anchors``)
against the definition it implements: a signature is tried on a line when one of its anchors
is in the line (case-insensitive signatures: in the lowered line)."""

from __future__ import annotations

import random

import pytest

from parsers import signature_table as st
from tests.parsers.util import corpus_lines


def _by_definition(table: tuple[st.Signature, ...], text: str) -> list[str]:
    low = text.lower()
    return [s.id for s in table if any(a in (low if s.ci else text) for a in s.anchors)]


def _texts() -> list[str]:
    return [ex for s in st.builtin() for ex in s.examples] + corpus_lines()


def _synthetic(ci: bool) -> list[st.Signature]:
    """Anchors that start with one another, overlap, and repeat across signatures."""
    anchors = [["ab"], ["abc", "zz"], ["b"], ["bca", "ab"], ["cab"], ["a"], ["zzz"]]
    sigs = [st._compile({"id": f"s{i}", "kind": "k", "pattern": "x", "anchors": a},
                        "test", "test") for i, a in enumerate(anchors)]
    if ci:  # a case-insensitive pattern (its anchors are derived, lowercase)
        sigs.append(st._compile({"id": "ci", "kind": "k", "pattern": "(?i)Bc"}, "test",
                                "test"))
    return sigs


@pytest.fixture
def extra(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    def use(sigs: list[st.Signature]) -> st.SignatureMatcher:
        monkeypatch.setattr(st, "EXTRA", sigs)
        return st.SignatureMatcher()
    return use


def test_builtin_table_on_the_corpus() -> None:
    m = st.SignatureMatcher()
    texts = _texts()
    assert len(texts) > 10_000
    hits = 0
    for text in texts:
        want = _by_definition(m.table, text)
        assert [s.id for s in m._having_anchors(text)] == want, text
        hits += bool(want)
    assert hits > 100  # the corpus does reach the table


@pytest.mark.parametrize("ci", [False, True])
def test_overlapping_anchors_on_random_text(extra, ci: bool) -> None:  # type: ignore[no-untyped-def]
    m = extra(_synthetic(ci))
    assert m.c.lower is ci
    rnd = random.Random(11)
    for _ in range(3000):
        text = "".join(rnd.choice("abcAB z") for _ in range(rnd.randint(0, 14)))
        assert [s.id for s in m._having_anchors(text)] == _by_definition(m.table, text), text
