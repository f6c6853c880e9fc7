"""``joblog_fast.kubectl_us`` (kubectl's stamps read with numpy) against the regex it stands in
for (``joblog_frame.kubectl_regex``): wherever it says ok, the same microseconds; wherever the
regex reads a stamp, ok, but for stamps followed by more than two spaces (so the regex is left
what it would refuse, and those).

``kubectl logs --timestamps`` writes each line's time as Go's RFC3339Nano in UTC
(k8s.io/kubelet ... ``time.RFC3339Nano``: ``2006-01-02T15:04:05.999999999Z07:00``, trailing
zeros of the fraction trimmed, the dot too when they all are) and one space; the prefixes here
are that form, the same cut or bent in the ways a pasted or rewritten log bends it."""

from __future__ import annotations

import random

import numpy as np
import polars as pl

from parsers.joblog_fast import kubectl_us
from parsers.joblog_frame import NO_TS, kubectl_regex


def _prefixes(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        if rng.random() < 0.7:  # a time that exists (month ends and leap days included)
            y, mo = rng.choice([1970, 2000, 2023, 2024, 2100]), rng.randint(1, 12)
            day, h = rng.choice([1, 9, 10, 15, 28, 29, 30, 31]), rng.randint(0, 23)
            mi, s = rng.randint(0, 59), rng.randint(0, 59)
        else:  # edges and impossible fields
            y = rng.choice([1969, 1999, 2400, 2999, 3000, 999])
            mo = rng.choice([0, 1, 2, 2, 2, 4, 6, 9, 11, 12, 13, 19])
            day = rng.choice([0, 1, 9, 10, 28, 29, 29, 30, 31, 32, 39, 40])
            h, mi, s = rng.choice([0, 9, 19, 20, 23, 24, 29]), rng.choice([0, 59, 60]), \
                rng.choice([0, 30, 59, 60, 61])
        stamp = f"{y:04d}-{mo:02d}-{day:02d}T{h:02d}:{mi:02d}:{s:02d}"
        frac = "".join(rng.choice("0123456789") for _ in range(rng.choice([0, 0, 1, 3, 6, 7,
                                                                             9, 9, 10])))
        text = stamp + ("." + frac if frac or rng.random() < 0.05 else "") + "Z"
        text += " " * rng.choice([1, 1, 1, 2, 0])
        bend = rng.random()
        if bend < 0.04:
            text = text.replace("T", " ", 1)
        elif bend < 0.08:
            text = text.replace("Z", "+00:00", 1)
        elif bend < 0.10:
            text = text.replace(":", "-", 1)
        elif bend < 0.12:
            text = "\t" + text
        elif bend < 0.14:
            text = text.rstrip() + "\t"
        elif bend < 0.16:
            text = text.replace("Z", "z", 1)
        elif bend < 0.18:
            text = text[:5] + "x" + text[6:]
        out.append(text)
    out += ["2024-05-01T00:00:00Z ", "2024-05-01T00:00:00.000999919Z ",
            "2024-02-29T23:59:59.5Z  ", "2023-02-29T00:00:00Z ", "2024-05-01T00:00:00.Z ",
            "2024-05-01T00:00:00.1234567890Z ", "2024-05-01T00:00:00Z" + " " * 20,
            "2024-05-01T00:00:00.123456789Z" + " " * 5, "Z ", " ", "2024-05-01T24:00:00Z ",
            "2024-05-01T00:00:00.5Z   "]
    return out


def test_kubectl_us(seed: int = 5) -> None:
    texts = _prefixes(6000, seed)
    data = np.frombuffer("".join(texts).encode(), np.uint8)
    lens = np.array([len(t) for t in texts], np.int64)
    starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
    us, ok = kubectl_us(data, starts, lens)
    want = kubectl_regex(pl.Series("p", texts))
    assert np.array_equal(us[ok], want[ok])  # ok: the regex's own answer
    # the regex reads more than it: only stamps followed by more than two spaces
    left = ~ok & (want != NO_TS)
    wide = np.array([t.endswith("   ") for t in texts])
    assert wide[left].all() and left.sum() >= 3, \
        [t for t, x in zip(texts, left, strict=True) if x and not t.endswith("   ")][:5]
    # both kinds are met: plain stamps read here, and forms left to the regex
    assert ok.sum() > 2000 and (~ok).sum() > 1000 and (want == NO_TS).sum() > 500
