"""SIGINT and SIGTERM as an exception, and sections they must not cut (a commit).

The CLI installs the handlers (``install_signal_handlers``); a signal then raises
``Interrupted`` in the main thread, which unwinds the run (writers remove their staging
folder) and becomes exit code 128 + signum. Inside ``critical()`` a signal is held until the
block ends. DuckDB turns the handler's exception into ``RuntimeError('Query interrupted')``;
``as_interrupt`` maps it back.

A stop is bounded (``_watchdog``): once ``Interrupted`` is raised, the process has
``GRACE_S`` seconds to unwind; if it is still there then -- a lock or thread join that the
exception left waiting forever (one interrupted ``analyze`` in ~200 hung so in CI, blocked
before it printed its message), or a library's C code that does not return -- it prints one
line and exits ``128 + signum`` at once. That is as safe as SIGKILL, which the fault tests
show leaves every output folder whole (a commit holds its signals in ``critical``, so the
clock never runs during one). If the GIL itself is never released, faulthandler's C thread
dumps every thread's stack and exits 1 after ``GRACE_S + BACKSTOP_S``, so the hang can be
reported.
"""

from __future__ import annotations

import contextlib
import faulthandler
import importlib.abc
import os
import select
import signal
import sys
import threading
import time
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
#: seconds an interrupted process has to unwind before ``_watchdog`` ends it
GRACE_S = 10.0
#: then faulthandler's own (GIL-free) thread, this much later
BACKSTOP_S = 20.0
#: (monotonic deadline, signum) once an Interrupted was raised; set only by the main thread,
#: read by the watchdog: no lock is shared with code a signal can cut
_deadline: list[tuple[float, int]] = []


#: when the main thread last ran ``_on_signal`` (monotonic), read by the watchdog's relay
_seen_at: list[float] = [0.0]
#: Python's signal wake-up pipe (read end, write end): a byte per signal caught, whichever
#: thread the kernel handed it to
_pipe: list[tuple[int, int]] = []
RELAY_S = 0.05  #: how long the main thread has to run the handler before the relay


def note_handled() -> None:
    """For a handler of SIGINT/SIGTERM other than ``_on_signal`` (the sql shell's): the
    main thread has run it (the watchdog then relays nothing)."""
    _seen_at[0] = time.monotonic()


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    note_handled()
    _last.append(signum)
    if _depth:
        _held.append(signum)
        return
    _interrupt(signum)


def _interrupt(signum: int) -> None:
    if not _deadline:
        _deadline.append((time.monotonic() + GRACE_S, signum))
        with contextlib.suppress(RuntimeError, ValueError):  # no stderr to dump to
            faulthandler.dump_traceback_later(GRACE_S + BACKSTOP_S, exit=True)
    raise Interrupted(signum)


def block_signals() -> None:
    """Keep SIGINT and SIGTERM off the calling (helper) thread: the kernel hands a process's
    signal to any thread that does not block it, and one that lands on a helper leaves the main
    thread asleep in a blocking call (``input()`` of the sql shell: Ctrl-C was lost in 4 of 12
    tries) until that call returns by itself. Call it first thing in a helper thread."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def _watchdog() -> None:
    """Polls ``_deadline`` (no lock, no Event: the main thread may have been cut anywhere),
    and relays a signal to the main thread: the kernel may hand SIGINT to any thread not
    blocking it (DuckDB's, Arrow's, polars' own threads), and then the main thread, asleep in
    a blocking call, does not run the handler until that call returns by itself. So when the
    wake-up pipe says a signal came and the handler has not run within ``RELAY_S``, the
    signal is sent to the main thread itself, once."""
    block_signals()
    main_id = threading.main_thread().ident
    assert main_id is not None
    pending: dict[int, float] = {}  #: signal -> when its byte was read
    relayed: dict[int, float] = {}  #: signal -> when it was relayed (its handler not yet run)
    while True:
        if _pipe and select.select([_pipe[0][0]], [], [], RELAY_S if pending else 0.25)[0]:
            got = os.read(_pipe[0][0], 256)
            now = time.monotonic()
            for sig in (int(signal.SIGINT), int(signal.SIGTERM)):
                if sig in got and not (sig in relayed and _seen_at[0] < relayed[sig]):
                    pending.setdefault(sig, now)
        elif not _pipe:
            time.sleep(0.25)
        now = time.monotonic()
        for signum, since in list(pending.items()):
            if _seen_at[0] >= since - RELAY_S:  # run (or held in a commit): nothing to do
                del pending[signum]
            elif now - since >= RELAY_S:
                del pending[signum]
                relayed[signum] = now
                signal.pthread_kill(main_id, signum)
        if _deadline and time.monotonic() > _deadline[0][0]:
            signum = _deadline[0][1]
            os.write(2, f"\ninterrupted ({signal.Signals(signum).name}): the stop did not "
                        f"finish within {GRACE_S:g} s; exiting now (an output folder holds its "
                        "previous output; the next run clears what this one left)\n".encode())
            os._exit(128 + signum)


def install_signal_handlers() -> dict[int, Any]:
    """SIGINT/SIGTERM raise ``Interrupted`` (held during a commit). Returns the old handlers
    (for ``restore_signal_handlers``). Only the main thread can install them. Starts the
    watchdog thread that bounds the stop (now: a thread started inside the handler could
    wait on a lock of ``threading`` that the cut-off main thread holds)."""
    if not _pipe:
        r, w = os.pipe()
        os.set_blocking(w, False)
        _pipe.append((r, w))
    signal.set_wakeup_fd(_pipe[0][1], warn_on_full_buffer=False)
    if not any(t.name == "tormortem-watchdog" for t in threading.enumerate()):
        threading.Thread(target=_watchdog, name="tormortem-watchdog", daemon=True).start()
    if not any(isinstance(f, _HeldImports) for f in sys.meta_path):
        sys.meta_path.insert(0, _HeldImports())
    if not isinstance(sys.unraisablehook, _Rearm):
        sys.unraisablehook = _Rearm(sys.unraisablehook)
    old: dict[int, Any] = {}
    for s in (signal.SIGINT, signal.SIGTERM):
        old[s] = signal.signal(s, _on_signal)
    return old


class _Rearm:
    """``sys.unraisablehook``: an ``Interrupted`` raised where Python cannot propagate it (the
    signal's handler ran inside a ``__del__`` or a weakref callback, such as importlib's
    module-lock cleanup) was printed as "Exception ignored ... Traceback" and lost, and the
    run went on until ``GRACE_S`` ended it (a random-kill test, once). The signal is marked
    unhandled and its byte written to the wake-up pipe instead: ``_watchdog`` relays it to the
    main thread ``RELAY_S`` later, outside the destructor (raising it here would run the
    handler inside the hook). Other exceptions go to the hook before."""

    def __init__(self, prev: Any) -> None:
        self.prev = prev

    def __call__(self, unraisable: Any) -> None:
        exc = getattr(unraisable, "exc_value", None)
        if isinstance(exc, Interrupted) and _pipe:
            _seen_at[0] = 0.0
            with contextlib.suppress(OSError):
                os.write(_pipe[0][1], bytes([exc.signum]))
            return
        self.prev(unraisable)


#: native modules whose initialisation a signal must not cut: nanobind (DuckDB 2's
#: ``_duckdb``) aborts the process when a Python exception escapes its module's set-up
#: ("Critical nanobind error: nanobind::detail::enum_create("ExplainType")", SIGABRT: a
#: Ctrl-C during ``analyze``'s first import of duckdb, once in 80 kills in CI). pybind11 and
#: PyO3 modules turn it into an ImportError instead (``as_interrupt``).
HELD_IMPORTS = frozenset({"_duckdb"})


class _HeldImports(importlib.abc.MetaPathFinder):
    """Imports ``HELD_IMPORTS`` with SIGINT/SIGTERM held (``critical``): the signal takes
    effect right after the module is set up."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in HELD_IMPORTS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _HeldLoader(spec.loader)
                return spec
        return None


class _HeldLoader(importlib.abc.Loader):
    """The loader of a held import; held only in the main thread (where the handler runs and
    where a held signal is raised when the section ends)."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: Any) -> Any:
        with _held_here():
            return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        with _held_here():
            self.loader.exec_module(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


def as_interrupt(e: BaseException) -> Interrupted | None:
    """``Interrupted`` for an error that a signal caused inside a library.

    DuckDB turns the handler's exception into ``RuntimeError('Query interrupted')``; a
    pybind11 module whose import the signal cut (scipy's, imported by ``fit``) raises
    ``ImportError('initialization failed')`` from it (CI saw that as exit 1 with "internal
    error" once in 40 interrupted ``analyze`` runs). So: the exception itself, one in its
    cause/context chain, or any error raised after ``Interrupted`` was -- it is the unwinding
    of the stop, never a result."""
    seen: set[int] = set()
    link: BaseException | None = e
    while link is not None and id(link) not in seen:
        if isinstance(link, Interrupted):
            return link
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    if _deadline:
        return Interrupted(_deadline[0][1])
    if _last and "interrupted" in str(e).lower():
        return Interrupted(_last[-1])
    return None


def restore_signal_handlers(old: dict[int, Any]) -> None:
    for s, h in old.items():
        signal.signal(s, h)


def _held_here() -> contextlib.AbstractContextManager[None]:
    main = threading.current_thread() is threading.main_thread()
    return critical() if main else contextlib.nullcontext()


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
            _interrupt(signum)
