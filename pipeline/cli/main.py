"""The ``tormortem`` command group: command registry, lazy loading and the error edge.

Each command lives in its own module of this package and is a thin shell over the library:
it parses its options, calls one library function, and prints (conventions: ``output``).

Start-up: no command module is imported until that command runs or its own ``--help`` is
asked for; ``tormortem --help`` lists them from ``COMMANDS`` (a test keeps those texts equal
to the commands' own), and command modules import the heavy libraries (polars, pyarrow,
duckdb, scipy, matplotlib, jinja2) inside the functions that use them. ``--version`` and
every ``--help`` therefore import click and a few small modules only (a test counts them).

Errors: library errors that carry a user-facing message become ``Error: ...`` in one place
(``_Group.invoke``): those about the command line (a malformed duration, a bad --what-if, an
unknown --source or --tz, a path argument that does not exist) exit 2 like click's own usage
errors; those about what was read (a bad rules or rates file, nothing to analyse) exit 1.

Signals: SIGINT and SIGTERM stop a command with exit code 130 and 143 (128 + the signal),
leaving output folders as they were (``_Group.main``; ``pipeline.ingest.signals``).

A closed stdout (``tormortem sql DIR "..." --jsonl | head -1``): the reader has what it
wanted, so the command stops there, quietly, with exit code 0, whatever it was printing
(``_Group.invoke``).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import signal
import sys
from typing import Any, NoReturn

import click

from pipeline.cli.output import EXIT_USAGE, settings, verbosity_options

#: name -> (module:attribute, the first paragraph of its help). The help text is what
#: ``tormortem --help`` lists without importing the module; tests/test_cli.py keeps it equal
#: to the command's own.
COMMANDS: dict[str, tuple[str, str]] = {
    "sources": ("pipeline.cli.sources:sources_cmd",
                "List the log sources tormortem reads (names for --source)."),
    "ingest": ("pipeline.cli.ingest:ingest_cmd",
               "Parse log files, directories (recursive), globs, - (stdin) or compressed files "
               "(.gz, .bz2, .xz, .zst) into Parquet + DuckDB."),
    "explain": ("pipeline.cli.explain:explain_cmd",
                "What tormortem makes of each line that carries a signal."),
    "analyze": ("pipeline.cli.analyze:analyze_cmd",
                "Realized TOR: ingest the logs, then split each run's wall time exactly."),
    "fit": ("pipeline.cli.fit:fit_cmd",
            "Fit failure rates, recovery times and checkpoint costs of an analysed "
            "directory."),
    "plan": ("pipeline.cli.plan:plan_cmd",
             "Predict TOR from a rates file: at another scale, checkpoint interval or save "
             "time, with what-ifs per failure category; the TOR-maximising checkpoint "
             "interval; the key factors; the expected wall time of a job."),
    "report": ("pipeline.cli.report:report",
               "Write the post-mortem report (report.html and report.pdf) for an analyzed "
               "run."),
    "simulate": ("pipeline.cli.simulate:simulate",
                 "Simulate a training campaign: write its logs in the real formats (Slurm, "
                 "kernel, Megatron/PyTorch job output) plus its ground truth, or, with "
                 "--no-logs, estimate the TOR distribution of many campaigns by Monte Carlo."),
    "sql": ("pipeline.cli.sql:sql_cmd",
            "Query an analysed directory's tables with SQL (DuckDB), or open a shell."),
}


#: library errors about the command line itself (exit 2) ...
USAGE_ERRORS = ("parsers.inputs.InputError", "parsers.registry.UnknownSourceError",
                "pipeline.units.DurationError", "pipeline.model.plan.PlanError")
#: ... and about what was read (exit 1)
FAILURES = ("parsers.timeutil.TimeError", "pipeline.ingest.ruletable.RulesError",
            "parsers.hostlist.HostlistError", "pipeline.analyze.run.AnalysisError",
            "pipeline.model.rates.RatesError", "pipeline.simulate.run.SimulateError",
            "pipeline.report.pdf.PdfError", "pipeline.ingest.outputs.OutputError",
            "pipeline.ingest.parallel.ParallelError", "parsers.remote.RemoteReadError")


def _is_one_of(e: BaseException, names: tuple[str, ...]) -> bool:
    """``isinstance`` against classes named by path, looked up only in modules already
    loaded (an error of a module that was never imported cannot have been raised): handling
    an error imports nothing."""
    for dotted in names:
        mod, cls = dotted.rsplit(".", 1)
        m = sys.modules.get(mod)
        if m is not None and isinstance(e, getattr(m, cls)):
            return True
    return False


#: this process is the ``tormortem`` command or ``python -m pipeline`` (not a library user
#: such as a test runner)
_PROCESS = (os.path.basename(sys.argv[0]) == "tormortem"
            or sys.argv[0].endswith(os.path.join("pipeline", "__main__.py")))


def _quiet_exit(signum: int, _frame: object) -> None:
    os._exit(128 + signum)


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in COMMANDS and name not in self.commands:
            mod, attr = COMMANDS[name][0].split(":")
            cmd = getattr(importlib.import_module(mod), attr)
            assert isinstance(cmd, click.Command)
            self.add_command(cmd, name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click's, but from ``COMMANDS``: listing them imports none of them."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = [(n, click.Command(n, help=COMMANDS[n][1]).get_short_help_str(limit))
                for n in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """click's main; the command's process then ends without the interpreter's teardown
        (``_leave``)."""
        if not (_PROCESS and kwargs.get("standalone_mode", True)):
            return self._main(*args, **kwargs)
        try:
            self._main(*args, **kwargs)
        except SystemExit as e:
            _leave(e.code)
        _leave(0)

    def _main(self, *args: Any, **kwargs: Any) -> Any:
        """click's main, with SIGINT/SIGTERM turned into exit codes 130/143 (no traceback,
        no "Aborted!"): the library's writers leave the previous output in place."""
        import threading

        _lenient_streams()

        from pipeline.ingest.signals import Interrupted, install_signal_handlers

        old = (install_signal_handlers()
               if threading.current_thread() is threading.main_thread() else None)
        try:
            try:
                return super().main(*args, **kwargs)
            finally:
                if old is not None:  # the command is over: a signal now just ends the process
                    for s in old:
                        signal.signal(s, _quiet_exit if _PROCESS else old[s])
        except Interrupted as e:
            click.echo(f"\ninterrupted ({e}): stopped; an output folder holds its previous "
                       "output, or the new one if it was complete before the signal", err=True)
            sys.exit(128 + e.signum)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as e:
            from pipeline.ingest.signals import as_interrupt

            signalled = as_interrupt(e)
            if signalled is not None:
                raise signalled from None
            if isinstance(e, BrokenPipeError) and _stdout_gone():
                _quiet_stdout()
                raise click.exceptions.Exit(0) from None
            raise _as_click_error(e) from None


def _leave(code: object) -> NoReturn:
    """End the command's process with ``code`` (``SystemExit``'s) once its output is flushed,
    its threads joined and its ``atexit`` handlers run, but without the interpreter's teardown
    of every module and object: after an ingest that holds polars, Arrow and DuckDB state,
    that teardown took 0.1-0.2 s of a run's wall time. Every file and database the commands
    write is closed by the command itself before it returns."""
    import atexit
    import threading

    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    _flush()
    shutdown = getattr(threading, "_shutdown", None)  # joins non-daemon threads, as at exit
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    _flush()
    os._exit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: its reader is gone
            stream.flush()


def _stdout_gone() -> bool:
    """stdout is a pipe (or socket) whose reader has gone (``| head -1``): its write end
    polls as an error. Not a file of its own (a test's runner): no."""
    import select

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    p = select.poll()
    p.register(fd, select.POLLOUT)
    return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in p.poll(0))


def _quiet_stdout() -> None:
    """What is still buffered for the closed pipe goes to /dev/null: Python's flush at exit
    would otherwise print "Exception ignored ... BrokenPipeError" (Python's own advice: the
    signal module's documentation, "Note on SIGPIPE")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


def _as_click_error(e: Exception) -> click.ClickException:
    if _is_one_of(e, USAGE_ERRORS):
        return click.UsageError(str(e))
    if _is_one_of(e, FAILURES):
        return click.ClickException(str(e))
    if isinstance(e, OSError):
        import errno

        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            return click.ClickException(
                f"no space left on device{f' writing {e.filename}' if e.filename else ''}"
                "; free space or choose another --out")
        where = f" {e.filename}" if e.filename else ""
        return click.ClickException(
            f"cannot access{where}: {e.strerror or e}; check the path and permissions")
    # a bug: one line, unless -vv or TORMORTEM_DEBUG asks for the traceback
    if os.environ.get("TORMORTEM_DEBUG", "") not in ("", "0") or settings().verbose >= 2:
        raise e
    return click.ClickException(
        f"internal error ({type(e).__name__}: {' '.join(str(e).split())}); please report it "
        "with the command you ran (run it again with -vv for the traceback)")


def _lenient_streams() -> None:
    """A terminal in a locale that cannot show every character (``LANG=C`` with Python's
    ascii or ``PYTHONIOENCODING=latin-1``): a job name such as ``llama-pré训练`` is printed
    with what cannot be shown as ``\\u8bad`` escapes, not an "internal error
    (UnicodeEncodeError)" after the output folder was written (fault probe M9)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            with contextlib.suppress(ValueError, OSError):  # a closed or odd stream
                stream.reconfigure(errors="backslashreplace")


EPILOG = """\b
Exit status: 0 ok; 1 the command ran and failed (input it could not use, nothing
to analyse, an output it could not write); 2 a usage error (unknown option, malformed
value, a path argument that does not exist).
Data goes to stdout (--format table|json|csv); progress and status to stderr."""


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=EPILOG)
@click.version_option(package_name="tormortem")
@verbosity_options
def main() -> None:
    """tormortem: where the time of a large GPU training run went.

    Reads Slurm, Kubernetes, kernel (NVIDIA Xid, PCIe, InfiniBand), NCCL / PyTorch and
    training-progress logs, and turns them into typed tables, the Training Overhead Ratio
    (TOR) with an exact split of the wall time, root causes, fitted rates and a report.

    \b
    Example:
      tormortem analyze sample_logs/demo --out reports/demo
      tormortem sql reports/demo "select category, count(*) from interruptions group by 1"
    """


assert click.UsageError.exit_code == EXIT_USAGE
