"""The vectorised field readers of joblog_fast.py against plain Python references, on the
shapes Megatron-LM prints and on corrupted variants of them (seeded, thousands of cases)."""

from __future__ import annotations

import random
import re
from datetime import date

import numpy as np

from parsers import joblog_fast as fast


def _bytes(cases: list[str], width: int) -> np.ndarray:
    return np.array([list(c.encode()[:width].ljust(width, b"\0")) for c in cases], np.uint8)


def _corrupt(rng: random.Random, s: str, alphabet: str) -> str:
    chars = list(s)
    chars[rng.randrange(len(chars))] = rng.choice(alphabet)
    return "".join(chars)


def test_ints_reads_megatron_iteration_field() -> None:
    # Megatron-LM: ' iteration {:8d}/{:8d} |'
    rng = random.Random(2)
    cases = ["       1/", "12345678/", "        /", "   12 34/", "+1234567/", "-1234567/",
             "0000012 /", "      7|"]
    for _ in range(5000):
        s = f"{rng.randint(0, 10 ** rng.randint(1, 8) - 1):8d}/"
        cases.append(_corrupt(rng, s, " x/-+0.") if rng.random() < 0.2 else s)

    def ref(s: str) -> int:
        m = re.fullmatch(r" *(\d+)/", s[:9])
        return int(m.group(1)) if m and len(s) >= 9 else -1

    got = fast._ints(_bytes(cases, 9), 8, b"/")
    assert got.tolist() == [ref(c) for c in cases]
    assert got[:2].tolist() == [1, 12345678]


def test_decimal_reads_elapsed_ms() -> None:
    # Megatron-LM: ' elapsed time per iteration (ms): {:.1f} |'
    rng = random.Random(1)
    cases = ["2000.3 |", "0.1 |", "12345678.9 |", "123456789.1 |", "1.25 |", "100 |",
             ".5 |", "1..2 |", "1.2", "nan |", "1e3 |", "00012.3 |", "7. |"]
    for _ in range(5000):
        digits = rng.choice([0, 1, 1, 1, 2, 3])
        v = rng.random() * 10 ** rng.randint(0, 10)
        s = f"{v:.{digits}f} |"
        cases.append(_corrupt(rng, s, " .x0-/") if rng.random() < 0.2 else s)

    def ref(s: str) -> float:
        m = re.match(r"(\d+(?:\.\d*)?) ", s[:14])
        return int(m.group(1).replace(".", "")) / 10 ** len(m.group(1).partition(".")[2]) \
            if m else float("nan")

    got = fast._decimal(_bytes(cases, 14))
    want = np.array([ref(c) for c in cases])
    assert np.array_equal(got, want, equal_nan=True)
    assert got[0] == 2000.3 and got[2] == 12345678.9 and got[3] == 123456789.1
    assert np.isnan(got[6]) and np.isnan(got[7]) and np.isnan(got[8])


def test_stamp_reads_megatron_datetime() -> None:
    # Megatron-LM: ' [%Y-%m-%d %H:%M:%S]' (datetime.now().strftime)
    rng = random.Random(3)
    cases = ["[2024-05-01 12:00:00]", "[1970-01-01 00:00:00]", "[2024-02-30 00:00:00]",
             "[2024-13-01 00:00:00]", "[2024-05-01T12:00:00]", "[2024-05-01 24:00:00]"]
    for _ in range(5000):
        s = (f"[{rng.randint(1970, 2100):04d}-{rng.randint(0, 13):02d}-{rng.randint(0, 32):02d} "
             f"{rng.randint(0, 25):02d}:{rng.randint(0, 61):02d}:{rng.randint(0, 62):02d}]")
        cases.append(_corrupt(rng, s, " x/-:0[]") if rng.random() < 0.1 else s)

    def ref(s: str) -> int:
        m = re.fullmatch(r"\[(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\]", s)
        if not m:
            return -1
        y, mo, d, h, mi, sec = map(int, m.groups())
        if not (1 <= mo <= 12 and 1 <= d <= 31 and h < 24 and mi < 60 and sec < 61):
            return -1
        # day d of the month counted on from its first day (Feb 30 = Mar 1 or 2), as the
        # civil-day arithmetic does
        days = (date(y, mo, 1) - date(1970, 1, 1)).days + d - 1
        return days * 86400 + h * 3600 + mi * 60 + sec

    got = fast._stamp(_bytes(cases, 21))
    assert got.tolist() == [ref(c) for c in cases]
    assert got[0] == 1714564800 and got[1] == 0 and got[3] == -1 and got[4] == -1


def test_gather_windows_past_the_end_read_zeros() -> None:
    data = np.frombuffer(b"0123456789", np.uint8)
    at = np.array([0, 3, 7, 9])
    got = fast._gather(data, at, 4)
    assert [bytes(r) for r in got] == [b"0123", b"3456", b"789\0", b"9\0\0\0"]
