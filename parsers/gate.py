"""Which recognisers of a message layer can claim a message: the prefilter, per recogniser.

The line prefilter (``parsers.prefilter``) keeps a line from Python when no recogniser's anchor
is in it; a candidate line then went to every recogniser in turn, each ruling itself out with
its own tests (~2-15 us each: a kubelet error in a syslog, 11 recognisers, ~40 us). By the
same declarations (``SIGNAL``, ``CLAIMS``, ``SIGNAL_RE``: one of them is in every message a
recogniser can claim while it holds no open block; ``parsers.message``), one Aho-Corasick pass
over the message names the recognisers that can claim it; the others are not asked. A
recogniser that holds an open block is always asked (it may continue the block on any line),
as is one that declares no anchors of its own (the data signatures gate themselves on
theirs). So the answers, and every row, are those of asking all of them, the prefilter's
argument one level down; ``TORMORTEM_PREFILTER=0`` turns both off, and the tests that compare
the two paths on every sample and corpus file (``tests/parsers/test_prefilter.py``) compare
this too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import ahocorasick

from parsers.anchors import gate_literals


@dataclass(frozen=True)
class Gate:
    """The anchors of a layer's recognisers, by their position in the layer."""

    #: literal -> (recognisers it is an anchor of, anchor regexes it gates) as bit masks
    automaton: ahocorasick.Automaton | None
    #: (regex bit, recogniser bit, anchor regex); a regex is searched only when one of its
    #: gate literals (``anchors.gate_literals``) is in the text
    regexes: tuple[tuple[int, int, re.Pattern[str]], ...]
    always: int  #: recognisers asked on every message (no anchors of their own)
    ungated: int  #: regexes without gate literals (searched on every message)

    def mask(self, text: str) -> int:
        """Bit i set: recogniser i has an anchor in ``text`` (or is always asked)."""
        got, gated = self.always, self.ungated
        if self.automaton is not None:
            for _end, (bits, rx_bits) in self.automaton.iter(text):
                got |= bits
                gated |= rx_bits
        if gated:
            for rx_bit, bit, rx in self.regexes:
                if gated & rx_bit and not got & bit and rx.search(text) is not None:
                    got |= bit
        return got


def gate_of(recognisers: list[Any]) -> Gate:
    """The gate of a layer of these recognisers (built once per kind of layer)."""
    return _gate(tuple(type(r) for r in recognisers))


@lru_cache(maxsize=64)
def _gate(kinds: tuple[type, ...]) -> Gate:
    by_literal: dict[str, tuple[int, int]] = {}
    regexes: list[tuple[int, int, re.Pattern[str]]] = []
    always = ungated = 0

    def add(lit: str, bit: int, rx_bit: int) -> None:
        bits, rx_bits = by_literal.get(lit, (0, 0))
        by_literal[lit] = (bits | bit, rx_bits | rx_bit)

    for i, kind in enumerate(kinds):
        bit = 1 << i
        literals = (*getattr(kind, "SIGNAL", ()), *getattr(kind, "CLAIMS", ()),
                    *getattr(kind, "CHECKED", {}))
        patterns = getattr(kind, "SIGNAL_RE", ())
        if callable(getattr(kind, "prefilter", None)) or not (literals or patterns) \
                or "" in literals:
            always |= bit
            continue
        for lit in literals:
            add(lit, bit, 0)
        for p in patterns:
            rx_bit = 1 << len(regexes)
            regexes.append((rx_bit, bit, re.compile(p)))
            gate = gate_literals(p)
            if gate is None or gate.ci or "" in gate.literals:
                ungated |= rx_bit
            else:
                for lit in gate.literals:
                    add(lit, 0, rx_bit)
    automaton = None
    if by_literal:
        automaton = ahocorasick.Automaton()
        for lit, bits in by_literal.items():
            automaton.add_word(lit, bits)
        automaton.make_automaton()
    return Gate(automaton, tuple(regexes), always, ungated)
