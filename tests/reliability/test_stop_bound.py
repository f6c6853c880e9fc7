"""A stop that cannot finish is still bounded (``pipeline.ingest.signals._watchdog``).

CI saw one interrupted ``analyze`` in ~200 hang for good before it printed its message: the
unwinding waited on something the signal had left waiting forever. These tests make the
unwinding hang on purpose -- on a lock never released, and inside a C call that never returns
(DuckDB would be one) -- and check the process still exits 128 + signum, soon, with one line.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

#: installs the CLI's handlers, says it is ready, then hangs in its ``finally`` once a signal
#: has raised ``Interrupted`` (the main thread blocks on a lock nobody will release)
SCRIPT = textwrap.dedent("""
    import sys, threading, time
    from pipeline.ingest import signals
    signals.GRACE_S = 1.0
    signals.install_signal_handlers()
    stuck = threading.Lock()
    stuck.acquire()
    try:
        print("ready", flush=True)
        while True:
            time.sleep(0.05)
    except signals.Interrupted as e:
        try:
            stuck.acquire()  # {hang}
        finally:
            sys.exit(128 + e.signum)
""")


def _run(hang: str, sig: int, backstop: float | None = None) -> tuple[int, str, float]:
    code = SCRIPT.replace("stuck.acquire()  # {hang}", hang)
    if backstop is not None:
        code = code.replace("signals.GRACE_S = 1.0",
                            f"signals.GRACE_S = 1.0; signals.BACKSTOP_S = {backstop}")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "ready"
    t0 = time.monotonic()
    p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail("the interrupted process did not exit within 60 s")
    return p.returncode, err, time.monotonic() - t0


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stop_stuck_on_a_lock_exits_after_the_grace(sig: int, code: int) -> None:
    rc, err, took = _run("stuck.acquire()", sig)
    assert rc == code, err
    assert 0.9 <= took < 10, took
    assert "did not finish within 1 s; exiting now" in err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err


def test_a_stop_that_finishes_is_not_cut() -> None:
    rc, err, took = _run("time.sleep(0.5)", signal.SIGINT)
    assert rc == 130 and err == "" and took < 1.0, (rc, err, took)


def test_a_stop_stuck_in_c_code_holding_the_gil_dumps_and_exits() -> None:
    # sre neither releases the GIL nor checks for signals: the Python watchdog cannot run
    rc, err, took = _run("import re; re.match(r'(a+)+$', 'a' * 64 + 'b')", signal.SIGINT,
                         backstop=1.0)
    assert rc == 1 and 1.9 <= took < 15, (rc, took)
    assert "most recent call first" in err and "in match" in err, err


#: the signal reaches a thread that is not the main one (as the kernel may choose any thread
#: that does not block it: DuckDB's, Arrow's), while the main thread sleeps in a blocking read
OTHER_THREAD = textwrap.dedent("""
    import os, signal, sys, threading, time
    from pipeline.ingest import signals
    signals.install_signal_handlers()
    other = threading.Thread(target=time.sleep, args=(60,), daemon=True)
    other.start()
    threading.Timer(0.3, signal.pthread_kill, (other.ident, signal.SIGINT)).start()
    r, w = os.pipe()
    try:
        os.read(r, 1)  # nothing will ever be written
    except signals.Interrupted as e:
        sys.exit(128 + e.signum)
""")


def test_a_signal_caught_by_another_thread_still_stops_the_main_one() -> None:
    p = subprocess.run([sys.executable, "-c", OTHER_THREAD], capture_output=True, text=True,
                       timeout=30, check=False)
    assert p.returncode == 130, p.stderr


#: the CLI's group with one more command, which waits for the signal and then fails as a
#: library cut by it does: pybind11 raises ImportError('initialization failed') from the
#: exception that cut a module's import (scipy's, in ``fit``); or an unrelated error raised
#: while the stop unwinds, which holds no trace of the signal
CUT_IMPORT = textwrap.dedent("""
    import sys, time, click
    from pipeline.cli.main import main
    from pipeline.ingest import signals

    @click.command()
    def hang() -> None:
        print("ready", flush=True)
        try:
            while True:
                time.sleep(0.05)
        except signals.Interrupted as e:
            if {chained}:
                raise ImportError("initialization failed") from e
        raise OSError("[Errno 9] Bad file descriptor")

    main.add_command(hang, "hang")
    main(["hang"])
""")


@pytest.mark.parametrize("chained", [True, False])
def test_an_error_caused_by_the_stop_is_the_stop(chained: bool) -> None:
    p = subprocess.Popen([sys.executable, "-c", CUT_IMPORT.format(chained=chained)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "ready"
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "interrupted (SIGINT)" in err and "internal error" not in err, err


#: a Ctrl-C that lands inside DuckDB's native module set-up: nanobind creates its Python enums
#: there (``ExplainType`` first) through ``enum``'s metaclass, so the signal is sent from that
#: call -- inside ``import duckdb``'s C code, where CI's random kills once landed (nanobind
#: then aborts the process, "Critical nanobind error", when the handler raises)
NANOBIND = textwrap.dedent("""
    import enum, os, signal, sys
    from pipeline.ingest import signals
    real = enum.EnumType.__call__
    def call(cls, *a, **k):
        if a and a[0] == "ExplainType":
            os.kill(os.getpid(), signal.SIGINT)
            got = real(cls, *a, **k)
            print("held inside the set-up" if signals._held else "not held", flush=True)
            return got
        return real(cls, *a, **k)
    enum.EnumType.__call__ = call
    signals.install_signal_handlers()
    try:
        import duckdb
    except signals.Interrupted as e:
        print("interrupted after the import", flush=True)
        sys.exit(128 + e.signum)
    sys.exit(3)
""")


def test_a_signal_inside_duckdbs_native_import_waits_for_it() -> None:
    """With the CLI's handlers a signal inside ``_duckdb``'s set-up is held there and takes
    effect once the module is set up: exit 130, no "Critical nanobind error" abort
    (``signals.HELD_IMPORTS``; without it this process died of SIGABRT)."""
    r = subprocess.run([sys.executable, "-c", NANOBIND], capture_output=True, text=True,
                       timeout=60, check=False)
    assert r.returncode == 130, r.stderr
    assert r.stdout.split("\n")[:2] == ["held inside the set-up", "interrupted after the import"]
    assert "nanobind" not in r.stderr


def test_a_signal_handled_inside_a_destructor_still_stops_the_run() -> None:
    """The handler can run inside a ``__del__`` or a weakref callback (importlib's module-lock
    cleanup, in a random-kill test): Python prints its ``Interrupted`` as "Exception ignored
    ... Traceback" and drops it. The signal is raised again (``signals._Rearm``): the run
    stops at its next line, and nothing is printed."""
    import subprocess
    import sys

    code = """
import signal, time
from pipeline.ingest import signals
signals.install_signal_handlers()
class X:
    def __del__(self):
        signals._on_signal(signal.SIGINT, None)  # the handler, run inside a destructor
try:
    X()
    for _ in range(2000):
        time.sleep(0.001)
    print("went on")
except signals.Interrupted:
    print("stopped")
"""
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert got.stdout.strip() == "stopped", (got.stdout, got.stderr)
    assert "Exception ignored" not in got.stderr and "Traceback" not in got.stderr, got.stderr
