"""Where the per-file parse runs: local processes (``--jobs N``) or a Dask cluster
(``--scheduler tcp://HOST:PORT``); results come back in the order of the inputs.

Files are handed out in tasks (one large file, or a run of small ones: ``parts.group``),
largest first (the longest task starts first, so the cores finish together), and their parts
are replayed in input order as soon as each next one is done (``parts.replay``). Local
workers come from a fork server that imported the parsers once (``procs``).

With local workers the client reads too, instead of waiting (``Inline``): the first task in
input order is never sent, and a later task that no worker has started when its turn comes is
taken back; the client parses those straight into its sinks, as ``--jobs 1`` would, so
nothing is written to a part and read back. That is what a directory of one large file and
some small ones needs (the 512 MiB slurm mix: a 412 MB slurmctld.log beside 64 slurmd logs):
there the part round trip of the large file made ``--jobs 2`` slower than ``--jobs 1``.

A worker that dies (killed, out of memory) or a task that raises ends the ingest with one line
naming the file and what to do; nothing half-replayed is kept (the output folder is only
committed when everything is in).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parsers.inputs import input_size
from parsers.reader import InputFile, ReadStats
from pipeline.ingest import procs
from pipeline.ingest.parts import Options, PartResult, claim, group, read_part

#: the client reads tasks too (``Inline``); False sends every task to the workers
CLIENT_READS = True


@dataclass(frozen=True)
class Inline:
    """Task ``index`` is the client's to read (its files, in order, by the serial path)."""

    index: int


class ParallelError(RuntimeError):
    """A worker could not read a file (the message names it and says what to do)."""


def warm_pool(jobs: int | None, files: list[InputFile]) -> ProcessPoolExecutor | None:
    """The local workers, started now (forked from the fork server, ``procs``) while the
    client surveys the inputs and opens its database, if ``jobs`` (None: as
    ``procs.auto_jobs`` would decide) will use them; the caller shuts the pool down. No more
    are started than there are tasks (``--jobs 500`` on a few files starts a few)."""
    n = procs.planned(jobs, files)
    if n:
        n = min(n, len(tasks_of(procs.sendable(files))))
    if n < 2:
        return None
    pool = procs.pool(n)
    for _ in range(n):
        pool.submit(_warm)
    return pool


def _warm() -> None:
    """A worker's imports (those of ``read_part``), done before its first task."""
    import parsers.registry  # noqa: F401


def tasks_of(files: list[InputFile]) -> list[list[int]]:
    """The positions of ``files`` in each task, in input order (``parts.group``)."""
    return group([input_size(f) for f in files])


def parts_in_order(files: list[InputFile], stats: list[ReadStats], parts: Path,
                   opts: Options, *, jobs: int, scheduler: str | None = None,
                   pool: ProcessPoolExecutor | None = None,
                   tasks: list[list[int]] | None = None) -> Iterator[PartResult | Inline]:
    """The files parsed by workers into ``parts``, a task per ``group`` of them; the task
    results in input order, or ``Inline`` for a task the client is to read itself (local
    workers only). ``pool``: workers already started (``warm_pool``; kept open); ``tasks``:
    ``tasks_of(files)``, if the caller has it."""
    tasks = tasks_of(files) if tasks is None else tasks
    args = [([files[i] for i in t], [stats[i] for i in t]) for t in tasks]
    # the largest task first: the cores finish together
    order = sorted(range(len(tasks)), key=lambda k: (-sum(input_size(f) for f in args[k][0]), k))
    if scheduler is not None:
        yield from _dask(args, order, parts, opts, scheduler)
        return
    if pool is not None:
        yield from _local(pool, args, order, parts, opts)
        return
    own = procs.pool(jobs)
    failed = True
    try:
        yield from _local(own, args, order, parts, opts)
        failed = False
    finally:
        stop(own, failed=failed)


def _local(pool: ProcessPoolExecutor, args: list[tuple[list[InputFile], list[ReadStats]]],
           order: list[int], parts: Path, opts: Options) -> Iterator[PartResult | Inline]:
    futures: dict[int, Future[PartResult]] = {}
    try:
        for k in order:
            if k or not CLIENT_READS:  # task 0 is the client's
                futures[k] = pool.submit(read_part, k, args[k][0], args[k][1], parts, opts,
                                         CLIENT_READS)
        for k in range(len(args)):
            fut = futures.pop(k, None)
            # not started by a worker: the client reads it (the worker that gets it later
            # finds it claimed; a future is never cancelled: see ``stop``)
            if fut is None or (CLIENT_READS and claim(parts, k)):
                yield Inline(k)
            else:
                yield _result(fut, args[k][0])
    except RuntimeError as e:  # submit to a pool whose worker died while warming up
        if isinstance(e, BrokenProcessPool):
            raise ParallelError("a worker process died before reading its first file "
                                "(killed, or out of memory?); rerun with fewer --jobs, or "
                                "--jobs 1") from None
        raise
    # the tasks left when this stops early are the pool owner's to cancel (``stop``)


def stop(pool: ProcessPoolExecutor, *, failed: bool) -> None:
    """Shut the local workers down; after a failure (a worker died, a task or the client
    raised, Ctrl-C) the pending tasks are dropped and the workers still running terminated,
    not awaited.

    Python 3.11's pool cannot stop itself when a worker dies while a future it still holds
    is cancelled: its manager thread dies of the InvalidStateError (CPython gh-107219,
    fixed in 3.12) with a traceback, and the process then waited forever at exit for the
    surviving worker. So no future is cancelled but by the pool's own thread
    (``cancel_futures``; the client takes a task back by ``parts.claim``, not by
    cancelling it), and the survivors are terminated either way."""
    pool.shutdown(wait=not failed, cancel_futures=True)
    if not failed:
        return
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14+
    if terminate is not None:
        terminate()
        return
    workers: dict[int, Any] = getattr(pool, "_processes", None) or {}  # before 3.14: private
    for proc in list(workers.values()):
        proc.terminate()


def _names(files: list[InputFile]) -> str:
    return files[0].display + (f" (or one of the {len(files) - 1} files after it)"
                               if len(files) > 1 else "")


def _result(fut: Any, files: list[InputFile]) -> PartResult:
    try:
        res: PartResult = fut.result()
    except BrokenProcessPool:
        raise ParallelError(
            f"a worker process died while reading {_names(files)} (killed, or out of "
            "memory?); rerun with fewer --jobs, or --jobs 1") from None
    except (MemoryError, OSError) as e:
        raise ParallelError(f"{_names(files)}: {type(e).__name__}: {e}") from None
    return res


def _dask(args: list[tuple[list[InputFile], list[ReadStats]]], order: list[int], parts: Path,
          opts: Options, scheduler: str) -> Iterator[PartResult]:
    try:
        import distributed
    except ImportError:
        raise ParallelError("--scheduler needs Dask's distributed package: "
                            "pip install distributed (or install tormortem[dask])") from None
    try:
        make: Any = distributed.Client  # untyped library
        client = make(scheduler, timeout="20s", set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise ParallelError(f"no Dask scheduler at {scheduler}: {e}; start one with "
                            "`dask scheduler` or check the address") from None
    with client:
        futures = {k: client.submit(read_part, k, args[k][0], args[k][1], parts.resolve(),
                                    opts, key=f"tormortem-read-{k}-{os.getpid()}", pure=False,
                                    priority=-rank)
                   for rank, k in enumerate(order)}
        try:
            for k in range(len(args)):
                yield _dask_result(futures.pop(k), args[k][0])
        finally:
            client.cancel(list(futures.values()))


def _dask_result(fut: Any, files: list[InputFile]) -> PartResult:
    try:
        res: PartResult = fut.result()
    except (MemoryError, OSError) as e:
        raise ParallelError(f"{_names(files)}: {type(e).__name__} on a Dask worker: {e}; the "
                            "output folder must be on a filesystem every worker sees") from None
    except Exception as e:
        if type(e).__name__ in ("KilledWorker", "CancelledError", "FutureCancelledError"):
            raise ParallelError(f"Dask lost the task reading {_names(files)} "
                                f"({type(e).__name__})"
                                "; check the workers' logs and memory limits") from None
        raise
    return res
