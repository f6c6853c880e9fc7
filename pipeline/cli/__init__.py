"""The command line (``tormortem``, ``python -m pipeline``): the only package that imports click.

Enters: command-line arguments. Leaves: terminal output, exit codes, and the files the library
writes. Each command is a module here (``ingest``, ``explain``, ``analyze``, ``fit``,
``sources``, ``plan``, ``report``, ``simulate``) and calls one library function; ``main``
holds the group, the lazily loaded commands and the one place where library errors become
``Error: ...`` lines. May import every other package of ``pipeline`` and ``parsers``.
"""

import os
import signal
import sys

if os.path.basename(sys.argv[0]) == "tormortem":  # the console script, not a library import
    # until the commands' own handlers are in place (pipeline.cli.main): a Ctrl-C during the
    # imports (~0.5 s) exits 130 without a traceback; nothing has been written yet
    def _early(signum: int, _frame: object) -> None:
        os.write(2, b"\ninterrupted\n")
        os._exit(128 + signum)

    for _s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_s, _early)

from pipeline.cli.main import main

__all__ = ["main"]
