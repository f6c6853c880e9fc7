"""The C heap of a parsing process: glibc's malloc tuned for chunked reading, trimmed.

Every chunk (8 MiB of text) allocates temporaries of its size in numpy, Arrow and polars
(the newline mask, the digit-blind keys, the views), from three threads (reader, planner,
parser), and frees them a moment later. With glibc's defaults the heaps give such memory back
as soon as it is free (``M_TRIM_THRESHOLD`` 128 KiB, raised only by the dynamic mmap
threshold) and the next chunk faults it in again, page by page, zeroed by the kernel: the
unrecognised-lines mix of ``benchmarks/bench_ingest.py`` (537 MB) took 205,000-218,000
minor faults and 0.80-1.07 s of system time for 2.22-2.60 s of wall time; with ``tune``
73,000-83,000, 0.43-0.48 s and 2.10-2.33 s (three runs each, alternated).

So ``tune`` (called once when this module is imported) sets the two thresholds explicitly:
allocations up to ``MMAP_THRESHOLD`` come from the heaps, and a heap keeps up to
``TRIM_THRESHOLD`` free at its top; ``release_free_memory`` still hands every free page back
every ``TRIM_EVERY`` chunks, which is what keeps the peak RSS flat over 10 GiB of input.
Measured figures are in ``benchmarks/HISTORY.md`` (2026-12-03).
"""

from __future__ import annotations

import ctypes
import itertools
from collections.abc import Callable

#: glibc's mallopt(3) parameters (malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: the ceiling of glibc's dynamic mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX); some
#: versions refuse a larger M_MMAP_THRESHOLD
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 32 << 20
#: chunks between two ``malloc_trim`` calls
TRIM_EVERY = 8


def _libc() -> ctypes.CDLL | None:
    """glibc (None elsewhere: musl, macOS; there nothing here is done)."""
    try:
        libc = ctypes.CDLL(None)
        libc.malloc_trim  # noqa: B018 - glibc only
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return None
    return libc


_LIBC = _libc()
_TRIM: Callable[[int], object] | None = _LIBC.malloc_trim if _LIBC is not None else None
_chunks = itertools.count(1)


def tune() -> bool:
    """Set glibc's mmap and trim thresholds (see the module docstring); False if this is not
    glibc or it refused a value."""
    if _LIBC is None:  # pragma: no cover - not glibc
        return False
    return bool(_LIBC.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) \
        and bool(_LIBC.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def release_free_memory() -> None:
    """Every ``TRIM_EVERY`` chunks, hand the C heap's free pages back to the system.

    The threads that read, plan and parse a chunk each allocate from their own glibc arena,
    and the memory a chunk's buffers leave free stays in them, scattered: a 10 GiB healthy
    syslog's ingest grew from 298 to 411 MiB of RSS (peak 438) though nothing stayed
    allocated (tracemalloc: no Python object grows; the parser alone, in one process,
    stayed at 265-289 MiB). ``malloc_trim(0)`` every 8 chunks (~2 ms a call) kept it at
    291-326 MiB, peak 355; with ``tune``'s thresholds every 32 chunks does (see
    ``benchmarks/HISTORY.md``)."""
    if _TRIM is not None and next(_chunks) % TRIM_EVERY == 0:
        _TRIM(0)


tune()
