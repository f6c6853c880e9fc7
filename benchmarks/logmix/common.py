"""A sized, buffered line writer and the campaign clock the mixes share."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

import numpy as np

EPOCH_S = 1714521600.0  #: 2024-05-01T00:00:00Z: t = 0 of every mix


class Sized:
    """Write lines to ``path`` until ``size`` bytes (UTF-8) have been written."""

    def __init__(self, path: Path, size: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.f = open(path, "w", encoding="utf-8", buffering=1 << 22)  # noqa: SIM115
        self.path, self.size, self.written, self.lines = path, size, 0, 0

    @property
    def full(self) -> bool:
        return self.written >= self.size

    def write(self, lines: Iterable[str]) -> None:
        text = "\n".join(lines)
        if not text:
            return
        text += "\n"
        self.f.write(text)
        self.written += len(text.encode("utf-8")) if not text.isascii() else len(text)
        self.lines += text.count("\n")

    def __enter__(self) -> Sized:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.f.close()


def iso(t: float, digits: int = 6) -> str:
    """``2024-05-01T10:02:11.123456`` (UTC, no zone) of campaign time ``t``."""
    s = str(np.datetime64(int((EPOCH_S + t) * 1e6), "us"))
    return s if digits == 6 else s[:20 + digits] if digits else s[:19]


def rfc3339nano(t: float, ns: int) -> str:
    """Go's ``time.RFC3339Nano`` as ``kubectl logs --timestamps`` prints it: nanoseconds with
    trailing zeros trimmed (``2023-04-19T22:15:19.62590126Z``)."""
    frac = f"{int((EPOCH_S + t) % 1 * 1e6):06d}{ns % 1000:03d}".rstrip("0")
    return f"{iso(t, 0)}.{frac}Z" if frac else f"{iso(t, 0)}Z"
