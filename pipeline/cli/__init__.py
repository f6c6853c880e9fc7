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

# polars' allocator (jemalloc, configured by this variable, read when polars is loaded) keeps
# freed pages for 10 s: a chunk's temporaries stay resident long after it is parsed. Handed
# back after 0.1 s (by jemalloc's background thread, which polars turns on) instead. Three
# alternated runs each (benchmarks/HISTORY.md, session 8): HF tqdm 1 GiB 456-459 MiB against
# 475-489 in 11.8-12.3 s against 11.1-12.2; slurm 134 MB 429-445 against 466-479 MiB,
# 3.2-3.9 s against 3.1-3.8; kernel-noise and NCCL INFO unchanged. A user's setting rules.
os.environ.setdefault("_RJEM_MALLOC_CONF",
                      "background_thread:true,dirty_decay_ms:100,muzzy_decay_ms:0")

from pipeline.cli.main import main

__all__ = ["main"]
