"""model.jsondump.dumps2 writes exactly what json.dumps(indent=2) writes, errors included."""

from __future__ import annotations

import json
import math
import random
from enum import IntEnum
from typing import Any

import numpy as np
import pytest

from pipeline.model.jsondump import dumps2


class Level(IntEnum):
    LOW = 1


def _scalar(rng: random.Random) -> Any:
    return rng.choice([
        lambda: rng.choice(["", "node0001", "é ü", "tab\tquote\"back\\slash", "\u2028\x00",
                            "日本", "\U0001f600"]),
        lambda: rng.randint(-10**20, 10**20),
        lambda: rng.uniform(-1e6, 1e6),
        lambda: rng.choice([0.0, -0.0, 1e-320, 1e300, 0.1, 2.5, math.nan, math.inf, -math.inf]),
        lambda: rng.choice([None, True, False]),
        lambda: np.float64(rng.random()),
        lambda: Level.LOW,
    ])()


def _doc(rng: random.Random, depth: int = 0) -> Any:
    k = rng.random()
    if depth > 3 or k < 0.35:
        return _scalar(rng)
    if k < 0.55:  # a list of one scalar type (the encoder's fast paths)
        kind = rng.choice(["node", "int", "float"])
        n = rng.randint(0, 6)
        return [f"node{i:04d}" if kind == "node" else i * 7 if kind == "int" else i / 3
                for i in range(n)]
    if k < 0.75:
        seq = [_doc(rng, depth + 1) for _ in range(rng.randint(0, 5))]
        return tuple(seq) if rng.random() < 0.1 else seq
    keys = ["a", "é", "", 1, 2.5, math.nan, True, False, None, -3, "x\ny"]
    return {rng.choice(keys): _doc(rng, depth + 1) for _ in range(rng.randint(0, 5))}


@pytest.mark.parametrize("seed", range(8))
def test_same_text_as_json_dumps(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(300):
        doc = _doc(rng)
        for ascii_ in (True, False):
            try:
                want: str | type[Exception] = json.dumps(doc, indent=2, ensure_ascii=ascii_)
            except (TypeError, ValueError) as e:
                want = type(e)
            try:
                got: str | type[Exception] = dumps2(doc, ensure_ascii=ascii_)
            except (TypeError, ValueError) as e:
                got = type(e)
            assert got == want, doc


def test_errors_match() -> None:
    with pytest.raises(ValueError, match="Out of range float"):
        dumps2({"x": [1.0, math.nan]}, allow_nan=False)
    with pytest.raises(ValueError, match="Out of range float"):
        dumps2([math.inf], allow_nan=False)
    with pytest.raises(TypeError, match="keys must be str"):
        dumps2({(1, 2): 3})
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps2({"x": {1, 2}})
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps2(loop)
    shared = [1, 2]
    assert dumps2([shared, shared]) == json.dumps([shared, shared], indent=2)
