"""How many local worker processes ``--jobs`` gets, and where they come from.

Light on purpose (no polars, pyarrow or parsers beyond ``parsers.inputs``): the CLI calls
``start_early`` right after finding its inputs, before its own ~0.3 s of imports, so the
workers' imports happen beside them.

Workers are forked from a *fork server* (multiprocessing's ``forkserver``) that imported the
parsers once (``PRELOAD``), not spawned one by one: each spawned worker imported polars,
pyarrow and the parsers itself (~0.4 CPU-s each). The client is never forked: by the time it
needs workers it runs the writer thread, DuckDB and polars' thread pool, none of which survive
a fork. The server has run no polars query, so polars' thread pool (which a forked child
would inherit as started, without its threads: the "polars hangs after fork" problem) does
not exist yet; ``tests/pipeline/test_procs.py`` checks that importing ``PRELOAD`` starts no such
thread. A fork server keeps the environment it was started with: ``start_early`` runs once
per process, and what a worker must see of the client's settings travels with each task
(``parts.Options``), not in the environment.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.context import BaseContext

from parsers.inputs import InputFile, input_size
from parsers.remote import process_local

#: what the fork server imports once, for every worker it forks (``parts.read_part``'s needs)
PRELOAD = ["parsers.registry", "pipeline.ingest.parts"]

#: below this many bytes to read, ``auto_jobs`` reads in this process: starting workers
#: costs more than they save, and there are only a task or two (``parts.GROUP_BYTES``) to
#: share (2 cores, --jobs 1 vs 2, alternated: the 3.8 MB demo 0.72 vs 0.80 s; 2.5 MB of 307
#: node logs 1.02-1.22 vs 1.21-1.43 s; 26 MB of 130 fleet node logs 1.47-1.55 vs
#: 1.42-1.71 s, even; the 44 MB llama3-54d campaign, 690 files, 5.24-6.37 vs 4.55-5.77 s,
#: two ~0.6 s faster in each of 4 pairs -- 64 MiB until then)
AUTO_MIN_BYTES = 32 << 20


def default_jobs() -> int:
    """The cores this process may use (``sched_getaffinity``: a Slurm allocation's, not the
    node's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def sendable(files: list[InputFile]) -> list[InputFile]:
    """The files a worker can read: not a stream (stdin, a FIFO: read once, here), not a
    ``memory://`` URL (this process's memory)."""
    return [f for f in files if f.stream is None
            and not (f.url is not None and process_local(f.url))]


def auto_jobs(files: list[InputFile]) -> int:
    """``--jobs`` not given: the cores, if there are several files and enough to read."""
    if len(files) < 2 or sum(input_size(f) for f in files) < AUTO_MIN_BYTES:
        return 1
    return default_jobs()


def planned(jobs: int | None, files: list[InputFile]) -> int:
    """The local workers ``jobs`` asks for ``files`` (0: this process reads them itself);
    ``parallel.warm_pool`` starts no more than there are tasks."""
    readable = sendable(files)
    n = auto_jobs(readable) if jobs is None else jobs
    return n if n > 1 and len(readable) > 1 else 0


#: how far below the client the workers run (``os.nice``). The client reads a task itself and
#: replays the workers' parts in input order: when it competes with them for the cores, the
#: whole ingest waits for it (2 cores, two workers and the client: the 512 MiB k8s mix, whose
#: slowest file is the client's, 4.77 -> 4.41 s at equal priority vs nice 10; the slurm mix
#: 8.9 -> 8.4 s; the fleet-dir mix unchanged). Where there are idle cores it changes nothing.
WORKER_NICE = 10


def lower_priority() -> None:
    """``WORKER_NICE`` for this process."""
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICE)


#: how often a worker looks whether its client is still there (``watch_client``)
CLIENT_POLL_S = 0.5


def worker_init(client: int) -> None:
    """Each local worker's first step (the pool's initializer): ``WORKER_NICE``, and a thread
    that ends the worker once the client process is gone. A client killed with SIGKILL (the
    OOM killer, Slurm after KillWait) closes no pipe the workers read: each holds both ends
    of the pool's queues, and the fork server stays while they do (they hold its liveness
    pipe), so all three lived on, holding the client's stdout (``ingest ... | cat`` never
    ended)."""
    lower_priority()
    threading.Thread(target=watch_client, args=(client,), name="tormortem-client-watch",
                     daemon=True).start()


def watch_client(client: int, poll_s: float = CLIENT_POLL_S) -> None:
    while True:
        time.sleep(poll_s)
        try:
            os.kill(client, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:  # another user's process has the id now: ours is gone
            os._exit(1)


def pool(workers: int) -> ProcessPoolExecutor:
    """``workers`` local workers, forked (``context``), each at ``WORKER_NICE`` and ending
    with the client (``worker_init``)."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=context(),
                               initializer=worker_init, initargs=(os.getpid(),))


def context() -> BaseContext:
    """The workers' start method: the fork server where there is one (Linux, macOS), else
    spawn."""
    if "forkserver" not in multiprocessing.get_all_start_methods():  # pragma: no cover
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def start_early(jobs: int | None, scheduler: str | None, files: list[InputFile]) -> None:
    """Start the fork server now if this ingest will use local workers (``planned``), so
    that its imports overlap the caller's. Without it the server starts with the pool."""
    if scheduler is None and planned(jobs, files):
        ctx = context()
        if ctx.get_start_method() == "forkserver":
            from multiprocessing import forkserver

            forkserver.ensure_running()
