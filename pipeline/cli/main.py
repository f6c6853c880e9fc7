"""The ``tormortem`` command group: command registry, lazy loading and the error edge.

Each command lives in its own module of this package and is a thin shell over the library:
it parses its options, calls one library function, and prints. Library errors that carry a
user-facing message become ``Error: ...`` with exit code 1 in one place (``_Group.invoke``);
usage errors keep click's exit code 2. SIGINT and SIGTERM stop a command with exit code 130
and 143 (128 + the signal), leaving output folders as they were (``_Group.main``).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import click

from parsers.hostlist import HostlistError
from parsers.reader import InputError
from parsers.registry import UnknownSourceError
from parsers.timeutil import TimeError
from pipeline.analyze.run import AnalysisError
from pipeline.cli.analyze import analyze_cmd
from pipeline.cli.explain import explain_cmd
from pipeline.cli.fit import fit_cmd
from pipeline.cli.ingest import ingest_cmd
from pipeline.cli.sources import sources_cmd
from pipeline.ingest.outputs import OutputError
from pipeline.ingest.ruletable import RulesError
from pipeline.ingest.signals import Interrupted, as_interrupt, install_signal_handlers
from pipeline.units import DurationError

USER_ERRORS = (InputError, TimeError, RulesError, UnknownSourceError, HostlistError,
               AnalysisError, DurationError, OutputError)


#: commands whose modules import scipy or matplotlib: loaded only when used, so that
#: `tormortem ingest` does not pay for them at start-up
LAZY = {"plan": "pipeline.cli.plan:plan", "simulate": "pipeline.cli.simulate:simulate",
        "report": "pipeline.cli.report:report"}
#: the first lines of the lazy commands' help, so ``tormortem --help`` does not import scipy
#: and the report stack to list them (a test keeps these equal to the commands' own)
LAZY_HELP = {
    "plan": (
        "Predict TOR from a rates file with the closed form (TOR_MODEL.md "
        "section 5): at another scale, checkpoint interval or save time, with "
        "what-ifs per failure category; the TOR-maximising checkpoint interval; "
        "the key factors; the expected wall time of a job."
    ),
    "simulate": (
        "Simulate a training campaign: write its logs in the real formats "
        "(Slurm, kernel, Megatron/PyTorch job output) plus its ground truth, "
        "or, with --no-logs, estimate the TOR distribution of many campaigns by "
        "Monte Carlo."
    ),
    "report": (
        "Write the post-mortem report (report.html and report.pdf) for an "
        "analyzed run."
    ),
}


#: this process is the ``tormortem`` command (not a library user such as a test runner)
_PROCESS = os.path.basename(sys.argv[0]) == "tormortem"


def _quiet_exit(signum: int, _frame: object) -> None:
    os._exit(128 + signum)


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *(n for n in LAZY if _loadable(n))})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAZY and name not in self.commands and _loadable(name):
            import importlib

            mod, attr = LAZY[name].split(":")
            cmd = getattr(importlib.import_module(mod), attr)
            assert isinstance(cmd, click.Command)
            self.add_command(cmd, name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click's, but a lazy command not loaded yet is listed from LAZY_HELP."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            if name in LAZY and name not in self.commands:
                stub = click.Command(name, help=LAZY_HELP[name])
                rows.append((name, stub.get_short_help_str(limit)))
                continue
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """click's main, with SIGINT/SIGTERM turned into exit codes 130/143 (no traceback,
        no "Aborted!"): the library's writers leave the previous output in place."""
        import threading

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
        except USER_ERRORS as e:
            raise click.ClickException(str(e)) from None
        except OSError as e:
            import errno

            if e.errno in (errno.ENOSPC, errno.EDQUOT):
                raise click.ClickException(
                    f"no space left on device{f' writing {e.filename}' if e.filename else ''}"
                    "; free space or choose another --out") from None
            where = f" {e.filename}" if e.filename else ""
            raise click.ClickException(
                f"cannot access{where}: {e.strerror or e}; check the path and permissions"
            ) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as e:  # a bug: one line, unless TORMORTEM_DEBUG asks for the trace
            signalled = as_interrupt(e)
            if signalled is not None:
                raise signalled from None
            if os.environ.get("TORMORTEM_DEBUG"):
                raise
            raise click.ClickException(
                f"internal error ({type(e).__name__}: {e}); please report it with the command "
                "you ran (set TORMORTEM_DEBUG=1 for the traceback)") from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tormortem")
def main() -> None:
    """tormortem: where the time of a large GPU training run went.

    Reads Slurm, Kubernetes, kernel (NVIDIA Xid, PCIe, InfiniBand), NCCL / PyTorch and
    training-progress logs, and turns them into typed tables.

    \b
    Example:
      tormortem ingest sample_logs/ --out /tmp/tm
      duckdb /tmp/tm/tormortem.duckdb "select kind, count(*) from events group by 1"
    """


for _cmd in (ingest_cmd, explain_cmd, analyze_cmd, fit_cmd, sources_cmd):
    main.add_command(_cmd)


def _loadable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(LAZY[name].split(":")[0]) is not None
