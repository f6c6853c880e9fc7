"""Finding input files: files, directories (recursive, sorted), globs, FIFOs and standard input.

Choices, so that no input hangs the run or vanishes without a word:

* Inside a directory, special files (FIFO, socket, device) are not read: opening a FIFO blocks
  until a writer comes. They are listed in ``Inputs.special``. A FIFO named explicitly
  (``<(zcat x.gz)``, ``/dev/stdin``) is read once as a stream, like ``-`` (standard input).
* Broken symbolic links, symbolic link loops and unreadable files or directories are listed
  per entry in ``Inputs.problems`` and the walk goes on. A symbolic link to a directory inside
  a walked directory is not followed (loops); it is listed in ``special``.
* Our own outputs are not logs: Parquet/DuckDB/report files and documentation (``*.md``,
  ``*.rst``) inside directories are skipped; so is everything a tormortem output folder's
  ``manifest.json`` lists (or, in an older output without one, the JSON files beside its
  ``tormortem.duckdb``), and our hidden lock and staging entries (``.tormortem*``). All are
  counted in ``Inputs.skipped``; ``Inputs.own_outputs`` names the output folders found.
* A path named explicitly is always read, whatever its name.
* A URL (``s3://``, ``http://``, ``file://``, ... any fsspec protocol) is expanded by
  ``parsers.remote`` with the same rules for a directory's entries (an output folder is known
  by its ``manifest.json`` or ``tormortem.duckdb``; its JSON files are skipped by name).
"""

from __future__ import annotations

import errno
import glob
import json
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from parsers import remote

_SKIP_DIRS = {".git", "__pycache__", ".venv", "node_modules"}
_SKIP_SUFFIXES = {".parquet", ".duckdb", ".wal", ".png", ".pdf", ".html", ".pyc"}
#: documentation beside logs (a sample's NOTES.md); skipped inside directories and counted
_DOC_SUFFIXES = {".md", ".rst"}
#: files an output folder holds besides Parquet/DuckDB/HTML/PDF (older outputs have no manifest)
_OUTPUT_JSON = ("analysis.json", "rates.json", "model.json", "manifest.json")
MANIFEST = "manifest.json"
OWN_PREFIX = ".tormortem"  #: our lock file and staging folders inside an output folder


class InputError(ValueError):
    """An input path that cannot be read; the message says what to do."""


class Stream:
    """A source that can be read once (standard input, a FIFO): the head is kept when sniffed,
    and the one full read replays it before the rest."""

    def __init__(self, raw: BinaryIO, *, owned: bool = False) -> None:
        self.raw = raw
        self.owned = owned  #: close ``raw`` when the read is done (a URL's reader)
        self.head = b""
        self.eof = False
        self.opened = False

    def peek(self, n: int) -> bytes:
        while len(self.head) < n and not self.eof:
            got = self.raw.read(n - len(self.head))
            if not got:
                self.eof = True
            else:
                self.head += got
        return self.head[:n]

    def open(self) -> _Replay:
        if self.opened:
            raise InputError("standard input / a FIFO can be read only once")
        self.opened = True
        return _Replay(self)


class _Replay:
    """The stream's kept head, then the rest of the stream (a minimal binary file object)."""

    def __init__(self, s: Stream) -> None:
        self.s, self.pos = s, 0

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            out = self.s.head[self.pos:] + self.s.raw.read()
            self.pos = len(self.s.head)
            return out
        if self.pos < len(self.s.head):
            out = self.s.head[self.pos: self.pos + n]
            self.pos += len(out)
            return out
        return self.s.raw.read(n)

    def readinto(self, b: memoryview) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if self.s.owned:
            self.s.raw.close()

    def __enter__(self) -> _Replay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class InputFile:
    path: Path
    display: str  #: the path as shown to the user and stored in ``file`` columns
    stream: Stream | None = field(default=None, compare=False)  #: stdin or a named FIFO
    url: str | None = None  #: an fsspec URL (``parsers.remote``); ``path`` is then not local

    def __post_init__(self) -> None:
        # a file name that is not UTF-8 (Latin-1 ``caf\xe9.log``) reaches Python with surrogate
        # escapes, which no Arrow or DuckDB string can hold: shown and stored with the bytes
        # escaped (``caf\\xe9.log``); ``path`` keeps the name that opens the file
        object.__setattr__(self, "display", printable_name(self.display))


def printable_name(name: str) -> str:
    """``name`` with the undecodable bytes of a file name written ``\\xNN``."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return name


def input_size(f: InputFile) -> int:
    """Bytes of a file or URL (0 for a stream, or when it cannot be asked)."""
    if f.stream is not None:
        return 0
    if f.url is not None:
        return remote.stat(f.url)[0] or 0
    try:
        return f.path.stat().st_size
    except OSError:
        return 0


def stdin_input() -> InputFile:
    if sys.stdin is None:  # the process was started with file descriptor 0 closed (<&-)
        raise InputError("- names standard input, but it is closed: pipe the logs in "
                         "(zcat kern.log.gz | tormortem explain -) or name the files instead")
    return InputFile(Path("-"), "-", Stream(sys.stdin.buffer))


@dataclass
class Inputs:
    files: list[InputFile] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  #: docs and our own outputs, not logs
    special: list[str] = field(default_factory=list)  #: "path: what it is; not read"
    problems: list[str] = field(default_factory=list)  #: "path: why it cannot be read"
    own_outputs: list[str] = field(default_factory=list)  #: tormortem output folders skipped


def find_inputs(paths: list[str]) -> Inputs:
    """Files named by ``paths`` (files, directories, globs, ``-``), sorted, without duplicates."""
    res = Inputs()
    seen: set[Path] = set()
    first: dict[Path, str] = {}  #: resolved path -> the name it was first read under
    for given in paths:
        if given == "-":
            if any(f.display == "-" for f in res.files):
                raise InputError("- (standard input) is named twice; name it once")
            res.files.append(stdin_input())
            continue
        if remote.is_url(given):
            for u in _urls(given, res):
                if Path(u) not in seen:
                    seen.add(Path(u))
                    res.files.append(InputFile(Path(u), u, url=u))
            continue
        if os.path.lexists(given):
            candidates = [Path(given)]
        else:
            matches = sorted(glob.glob(given, recursive=True))
            if not matches:
                raise InputError(f"no such file, directory or glob match: {given!r}; "
                                 "give log files, directories or a quoted glob")
            candidates = [Path(m) for m in matches]
        for c in candidates:
            for f in _top(c, res):
                key = f.path.resolve() if f.stream is None else Path(f"/dev/fifo:{f.path}")
                if key not in seen:
                    seen.add(key)
                    first[key] = f.display
                    res.files.append(f)
                elif f.display != first[key]:  # a symbolic link to a file already named
                    res.special.append(f"{f.display}: the same file as {first[key]} (one "
                                       f"links to the other); read once, as {first[key]}")
    return res


def expand_inputs(paths: list[str], skipped: list[str] | None = None) -> list[InputFile]:
    """``find_inputs`` for callers that want the files (and, optionally, what was skipped)."""
    res = find_inputs(paths)
    if skipped is not None:
        skipped.extend(res.skipped)
    return res.files


def _urls(given: str, res: Inputs) -> list[str]:
    def skip(rel: str, names: set[str]) -> bool:
        parts = rel.strip("/").split("/")
        name = parts[-1]
        if any(d in _SKIP_DIRS or d.startswith(OWN_PREFIX) for d in parts[:-1]) \
                or name.startswith(OWN_PREFIX):
            return True
        own = MANIFEST in names or "tormortem.duckdb" in names
        suffix = os.path.splitext(name)[1].lower()
        if suffix in _SKIP_SUFFIXES or suffix in _DOC_SUFFIXES or (own and (
                name in _OUTPUT_JSON or (name.startswith("rates-") and name.endswith(".json")))):
            res.skipped.append(given.rstrip("/") + "/" + rel.strip("/"))
            return True
        return False

    try:
        return remote.expand(given, skip)
    except remote.RemoteError as e:
        raise InputError(str(e)) from None


def _what(mode: int) -> str | None:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return None


def _top(p: Path, res: Inputs) -> Iterator[InputFile]:
    """A path named by the user: errors here stop the run (the user asked for this path)."""
    try:
        st = p.stat()
    except OSError as e:
        raise InputError(f"{str(p)!r}: {_why(p, e)}; check the path") from None
    if stat.S_ISDIR(st.st_mode):
        yield from _walk(p, res)
    elif stat.S_ISREG(st.st_mode):
        yield InputFile(p, str(p))
    elif stat.S_ISFIFO(st.st_mode):
        yield InputFile(p, str(p), Stream(open(p, "rb")))  # noqa: SIM115 - read once, later
    else:
        raise InputError(f"{str(p)!r} is {_what(st.st_mode) or 'not a regular file'}, not a "
                         "log file; give log files, directories or - for standard input")


def _why(p: Path, e: OSError) -> str:
    if e.errno == errno.ELOOP:
        return "symbolic link loop"
    if e.errno == errno.ENOENT and os.path.islink(p):
        return f"broken symbolic link (to {os.readlink(p)!r})"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return e.strerror or str(e)


def _walk(top: Path, res: Inputs) -> Iterator[InputFile]:
    def onerror(e: OSError) -> None:
        res.problems.append(f"{e.filename}: unreadable directory ({e.strerror}); skipped")

    for root, dirs, files in os.walk(top, onerror=onerror):
        keep = []
        for d in sorted(dirs):
            full = os.path.join(root, d)
            if d in _SKIP_DIRS or d.startswith(OWN_PREFIX):
                continue
            if os.path.islink(full):
                res.special.append(f"{full}: symbolic link to a directory; not followed "
                                   "(name it explicitly to read it)")
                continue
            keep.append(d)
        dirs[:] = keep
        own = _own_outputs(Path(root), files)
        if own:
            res.own_outputs.append(root)
        for name in sorted(files):
            f = Path(root) / name
            suffix = f.suffix.lower()
            if name.startswith(OWN_PREFIX):
                continue
            if name in own or suffix in _SKIP_SUFFIXES or suffix in _DOC_SUFFIXES:
                res.skipped.append(str(f))
                continue
            try:
                st = f.stat()
            except OSError as e:
                res.problems.append(f"{f}: {_why(f, e)}; skipped")
                continue
            kind = _what(st.st_mode)
            if kind is not None:
                res.special.append(f"{f}: {kind}; not read (name it explicitly to read a FIFO)")
            elif not os.access(f, os.R_OK):
                res.problems.append(f"{f}: permission denied; skipped")
            else:
                yield InputFile(f, str(f))


def _own_outputs(folder: Path, files: list[str]) -> set[str]:
    """Names in ``folder`` that are a tormortem output's own files (empty if it is not one)."""
    if MANIFEST in files:
        try:
            doc = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
        if isinstance(doc, dict) and str(doc.get("schema", "")).startswith("tormortem.manifest/"):
            listed = doc.get("files")
            names = set(listed) if isinstance(listed, dict) else set()
            return names | {MANIFEST}
    if "tormortem.duckdb" in files:
        return {n for n in files if n in _OUTPUT_JSON or (n.startswith("rates-")
                                                          and n.endswith(".json"))}
    return set()
