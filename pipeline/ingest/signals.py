"""SIGINT and SIGTERM as an exception, and sections they must not cut (a commit).

The CLI installs the handlers (``install_signal_handlers``); a signal then raises
``Interrupted`` in the main thread, which unwinds the run (writers remove their staging
folder) and becomes exit code 128 + signum. Inside ``critical()`` a signal is held until the
block ends. DuckDB turns the handler's exception into ``RuntimeError('Query interrupted')``;
``as_interrupt`` maps it back.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType
from typing import Any


class Interrupted(BaseException):
    """SIGINT or SIGTERM: the run stops, the previous output stays (exit 128 + signum)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_held: list[int] = []  #: signals that arrived inside a critical section
_depth = 0
_last: list[int] = []  #: the signals raised as Interrupted so far


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    _last.append(signum)
    if _depth:
        _held.append(signum)
        return
    raise Interrupted(signum)


def install_signal_handlers() -> dict[int, Any]:
    """SIGINT/SIGTERM raise ``Interrupted`` (held during a commit). Returns the old handlers
    (for ``restore_signal_handlers``). Only the main thread can install them."""
    old: dict[int, Any] = {}
    for s in (signal.SIGINT, signal.SIGTERM):
        old[s] = signal.signal(s, _on_signal)
    return old


def as_interrupt(e: BaseException) -> Interrupted | None:
    """``Interrupted`` for an error that a signal caused inside a library: DuckDB turns the
    handler's exception into ``RuntimeError('Query interrupted')``."""
    if isinstance(e, Interrupted):
        return e
    if _last and "interrupted" in str(e).lower():
        return Interrupted(_last[-1])
    return None


def restore_signal_handlers(old: dict[int, Any]) -> None:
    for s, h in old.items():
        signal.signal(s, h)


@contextlib.contextmanager
def critical() -> Iterator[None]:
    """SIGINT/SIGTERM wait until the block is done, then take effect."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _held:
            signum = _held[0]
            _held.clear()
            raise Interrupted(signum)
