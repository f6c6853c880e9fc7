"""Finding input files and reading them as chunks of lines, with bounded memory.

Inputs: files, directories (recursive, sorted), shell-style globs; gzip is detected by its magic
bytes, whatever the name. Lines are returned per chunk (``CHUNK_BYTES``, cut at a newline) as a
polars String Series built without copying the text: the chunk's bytes stay one buffer and each
line is an Arrow string view into it. ``\\n`` and a ``\\r`` before it are not part of a line.
Invalid UTF-8 is replaced (U+FFFD) rather than rejected, so no line is lost to its encoding.
"""

from __future__ import annotations

import glob
import gzip
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import polars as pl
import pyarrow as pa

CHUNK_BYTES = 32 << 20
SNIFF_BYTES = 64 << 10
_SKIP_DIRS = {".git", "__pycache__", ".venv", "node_modules"}
_SKIP_SUFFIXES = {".parquet", ".duckdb", ".wal", ".png", ".pdf", ".html", ".pyc"}
#: documentation beside logs (a sample's NOTES.md); skipped inside directories and counted
_DOC_SUFFIXES = {".md", ".rst"}


class InputError(ValueError):
    """An input path that cannot be read; the message says what to do."""


@dataclass(frozen=True)
class InputFile:
    path: Path
    display: str  #: the path as shown to the user and stored in ``file`` columns


def expand_inputs(paths: list[str], skipped: list[str] | None = None) -> list[InputFile]:
    """Files named by ``paths`` (files, directories, globs), sorted, without duplicates.

    Inside directories, our own outputs (Parquet, DuckDB, reports) and documentation files
    (``*.md``, ``*.rst``) are not logs: they are left out and appended to ``skipped`` so the
    caller can say so. A file named explicitly is always read."""
    out: list[InputFile] = []
    seen: set[Path] = set()
    for given in paths:
        candidates: list[Path]
        if os.path.exists(given):
            candidates = [Path(given)]
        else:
            matches = sorted(glob.glob(given, recursive=True))
            if not matches:
                raise InputError(f"no such file, directory or glob match: {given!r}; "
                                 "give log files, directories or a quoted glob")
            candidates = [Path(m) for m in matches]
        for c in candidates:
            for f in _walk(c, skipped if skipped is not None else []):
                key = f.resolve()
                if key not in seen:
                    seen.add(key)
                    out.append(InputFile(f, str(f)))
    return out


def _walk(p: Path, skipped: list[str]) -> Iterator[Path]:
    if p.is_dir():
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
            for name in sorted(files):
                f = Path(root) / name
                if f.suffix.lower() in _SKIP_SUFFIXES or f.suffix.lower() in _DOC_SUFFIXES:
                    skipped.append(str(f))
                else:
                    yield f
    elif p.is_file():
        yield p
    else:
        raise InputError(f"{str(p)!r} is neither a file nor a directory")


def open_binary(path: Path) -> BinaryIO:
    """Open a file, transparently decompressing gzip (detected by magic bytes)."""
    f = open(path, "rb")  # noqa: SIM115 - returned to the caller
    magic = f.read(2)
    f.seek(0)
    if magic == b"\x1f\x8b":
        f.close()
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return f


def read_head(path: Path) -> bytes:
    with open_binary(path) as f:
        return f.read(SNIFF_BYTES)


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _valid_utf8(data: bytes) -> bytes:
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace").encode("utf-8")


def lines_series(data: bytes) -> pl.Series:
    """Split ``data`` (ends with ``\\n``, valid UTF-8) into a zero-copy Series of lines."""
    a = np.frombuffer(data, np.uint8)
    nl = np.flatnonzero(a == 10)
    n = len(nl)
    if n == 0:
        return pl.Series("line", [], dtype=pl.String)
    starts = np.empty(n, np.int64)
    starts[0] = 0
    starts[1:] = nl[:-1] + 1
    ends = nl.copy()
    cr = (ends > starts) & (a[np.maximum(ends - 1, 0)] == 13)
    ends[cr] -= 1
    lens = ends - starts
    views = np.zeros((n, 16), np.uint8)
    v32 = views.view(np.int32)
    v32[:, 0] = lens
    padded = np.concatenate([a, np.zeros(16, np.uint8)])
    inline = padded[starts[:, None] + np.arange(12)[None, :]]
    short = lens <= 12
    inline[short] *= (np.arange(12)[None, :] < lens[short][:, None]).astype(np.uint8)
    views[:, 4:16] = inline
    long = ~short
    v32[long, 2] = 0
    v32[long, 3] = starts[long]
    arr = pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(views),
                                                      pa.py_buffer(data)])
    s = pl.from_arrow(arr)
    assert isinstance(s, pl.Series)
    return s.alias("line")


def iter_line_chunks(path: Path, chunk_bytes: int = CHUNK_BYTES
                     ) -> Iterator[tuple[pl.Series, int, int]]:
    """Yield (lines, first line number (1-based), bytes in chunk) for a text file."""
    line_no = 1
    rest = b""
    with open_binary(path) as f:
        while True:
            block = f.read(chunk_bytes)
            if not block:
                break
            block = rest + block
            cut = block.rfind(b"\n")
            if cut < 0:
                rest = block
                continue
            data, rest = block[: cut + 1], block[cut + 1:]
            s = lines_series(_valid_utf8(data))
            yield s, line_no, len(data)
            line_no += len(s)
    if rest:
        data = rest + b"\n"
        s = lines_series(_valid_utf8(data))
        yield s, line_no, len(rest)
