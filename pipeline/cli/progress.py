"""The ingest progress bar: on stderr, by bytes with human sizes, advancing inside a file.

The bar is drawn only when stderr is a terminal and -q is not given. Within a file it
advances from the read position of the file descriptor the reader holds open on it
(``/proc/self/fdinfo``, polled a few times a second by a thread of the bar), so a single
large file moves the bar while it is parsed; where /proc is unavailable it advances per
file. Compressed inputs advance by compressed bytes, against their size on disk.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

from pipeline.cli.output import settings

if TYPE_CHECKING:
    from parsers.reader import InputFile

ProgressFn = Callable[["InputFile", int], None]
POLL_S = 0.2


def read_position(path: Path) -> int | None:
    """Read offset of an open descriptor of this process on ``path`` (the largest, if
    several), or None when none is open or /proc cannot tell."""
    try:
        target = os.path.realpath(path)
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return None
    best: int | None = None
    for fd in fds:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != target:
                continue
            with open(f"/proc/self/fdinfo/{fd}") as fh:
                for line in fh:
                    if line.startswith("pos:"):
                        pos = int(line.split()[1])
                        best = pos if best is None else max(best, pos)
                        break
        except (OSError, ValueError):
            continue
    return best


@contextmanager
def ingest_progress(files: list[InputFile], *, enabled: bool = True,
                    file: IO[str] | None = None) -> Iterator[ProgressFn]:
    """A callback for ``ingest(progress=...)``; draws the bar on stderr (or ``file``)."""
    if not enabled or settings().quiet or (file is None and not sys.stderr.isatty()):
        yield lambda _f, _n: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    from parsers.inputs import input_size

    sizes = []
    for f in files:
        try:  # stdin and FIFOs have no size
            sizes.append(0 if f.stream is not None else input_size(f))
        except OSError:
            sizes.append(0)
    state = {"done": 0, "index": 0}
    console = Console(file=file or sys.stderr, force_terminal=file is not None or None)
    with Progress(TextColumn("ingest"), BarColumn(), DownloadColumn(),
                  TransferSpeedColumn(), TimeRemainingColumn(),
                  TextColumn("{task.fields[name]}"), console=console, transient=True) as bar:
        task = bar.add_task("ingest", total=sum(sizes) or 1,
                            name=files[0].display if files else "")
        stop = threading.Event()

        def poll() -> None:
            while not stop.wait(POLL_S):
                i = state["index"]
                if i >= len(files):
                    continue
                pos = None if files[i].url else read_position(files[i].path)
                if pos is not None:
                    bar.update(task, completed=state["done"] + min(pos, sizes[i]))

        th = threading.Thread(target=poll, name="tormortem-progress", daemon=True)
        th.start()

        def advance(f: InputFile, _n: int) -> None:
            i = state["index"]
            state["done"] += sizes[i] if i < len(sizes) else 0
            state["index"] = i + 1
            nxt = files[i + 1].display if i + 1 < len(files) else ""
            bar.update(task, completed=state["done"], name=nxt)

        try:
            yield advance
        finally:
            stop.set()
            th.join()
