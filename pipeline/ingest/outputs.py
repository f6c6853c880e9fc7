"""Output folders that are atomic, locked and self-describing.

Decision: **replace file by file, manifest written last, with a journal** (not a swap of the
whole folder). A writer builds every file in ``DIR/.tormortem-staging/``; to commit it writes
the new ``manifest.json`` there, renames the staging folder to ``DIR/.tormortem-commit/`` (the
journal: from here on the change is rolled forward, never back), removes the old manifest,
renames each new file into ``DIR``, removes the old outputs the new manifest does not list,
and renames the new manifest into place last. Why not a swap of two folders (``renameat2
RENAME_EXCHANGE``): ``--out`` may hold files that are not ours (``analyze DIR --out DIR`` on a
folder of logs, a user's notes), may be a mount point, or a shell's working directory; a swap
would have to carry those over. File by file touches nothing but our own files.

What a reader sees at any instant: the old complete output, the new complete output, or
(between the first and the last rename of a commit, a few milliseconds) no manifest plus a
journal. A reader or writer that finds a journal whose writer is gone (killed) finishes the
commit (roll forward) before it reads, so a kill at any point leaves the previous output or the
new one. SIGINT/SIGTERM during a commit are held until it is done (``critical``); before it,
they abort the run and the staging folder is removed: the previous output is untouched.

Locks (``flock``, released by the kernel when a process dies):

* ``DIR/.tormortem.lock``: held exclusively by a writer for its whole run; a second writer
  fails at once with "in use by PID N" (the PID is written in the file).
* ``DIR/.tormortem.read``: readers (report, fit, plan DIR) hold it shared while they read; a
  commit holds it exclusively, so a reader never reads half of one output and half of another.

The manifest (``manifest.json``, schema ``tormortem.manifest/1``) says what produced the
folder: the tool version, the stage completed (``ingest`` or ``analyze``), the command, the
options, every input (size, mtime, SHA-256 of its content, duplicates, notes), and every file
written (size, mtime_ns, SHA-256). It holds no time of writing, so a re-run on the same inputs
writes the same manifest. ``verify`` refuses a folder without a complete manifest or whose
files do not match it (size and mtime first; the hash when those differ, as after a copy).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pipeline.ingest.signals import Interrupted, critical

SCHEMA = "tormortem.manifest/1"
MANIFEST = "manifest.json"
LOCK = ".tormortem.lock"
READ_LOCK = ".tormortem.read"
STAGING = ".tormortem-staging"
COMMIT = ".tormortem-commit"
_REPLACES = "replaces.json"  #: in the journal: the old output's files, removed if not rewritten
#: an output folder's own files before manifests existed (removed by a new run if present)
_LEGACY = ("events.parquet", "attempts.parquet", "line_accounting.parquet",
           "unparsed_samples.parquet", "tormortem.duckdb", "tormortem.duckdb.wal",
           "analysis.json", "rates.json", "model.json", "report.html", "report.pdf")


class OutputError(ValueError):
    """An output folder that cannot be written or read; the message says what to do."""


def tool_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tormortem")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def file_sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _lock(path: Path, mode: int, *, block: bool) -> int | None:
    """An flock on ``path`` (created), or None if another process holds it (non-blocking)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, mode | (0 if block else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _unlock(fd: int | None) -> None:
    if fd is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _holder(out: Path) -> str:
    try:
        pid = (out / LOCK).read_text().strip()
    except OSError:
        pid = ""
    return f"PID {pid}" if pid.isdigit() else "another process"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_manifest(out: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        return None
    return doc


def _roll_forward(out: Path) -> None:
    """Finish a commit whose journal ``DIR/.tormortem-commit`` is there (idempotent)."""
    j = out / COMMIT
    if not (j / MANIFEST).exists():  # the manifest was the last rename: the commit is done
        shutil.rmtree(j)
        return
    new = json.loads((j / MANIFEST).read_text(encoding="utf-8"))
    replaces = json.loads((j / _REPLACES).read_text(encoding="utf-8"))
    (out / MANIFEST).unlink(missing_ok=True)
    for name in new["files"]:
        if (j / name).exists():
            os.replace(j / name, out / name)
    for name in replaces:
        if name not in new["files"] and name != MANIFEST:
            (out / name).unlink(missing_ok=True)
    os.replace(j / MANIFEST, out / MANIFEST)
    shutil.rmtree(j)
    _fsync_dir(out)


def _recover(out: Path) -> None:
    """With the writer lock held: finish a dead writer's commit, drop its staging folder."""
    if (out / COMMIT).is_dir():
        fd = _lock(out / READ_LOCK, fcntl.LOCK_EX, block=True)
        try:
            _roll_forward(out)
        finally:
            _unlock(fd)
    if (out / STAGING).exists():
        shutil.rmtree(out / STAGING)


def _disk_full(e: BaseException) -> bool:
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return "No space left on device" in str(e) or "Disk quota exceeded" in str(e)


class Writer:
    """``with Writer(out, stage) as w:`` write files into ``w.path``, then ``w.commit(...)``.

    ``carry``: the new output keeps the previous one's files it does not rewrite (``fit``,
    ``report`` adding to an analysis); otherwise it replaces the previous output whole."""

    def __init__(self, out: Path, stage: str, *, carry: bool = False) -> None:
        self.out, self.stage, self.carry = Path(out), stage, carry
        self.path = self.out / STAGING
        self.lock_fd: int | None = None
        self.created = False
        self.new_lock = False
        self.committed = False
        self.old: dict[str, Any] | None = None

    def __enter__(self) -> Writer:
        if self.out.exists() and not self.out.is_dir():
            raise OutputError(f"--out {self.out} is a file; give a folder")
        if self.carry:  # adding to an output: it must be one (checked before touching it)
            if not self.out.is_dir():
                raise OutputError(f"{self.out} not found; run `tormortem analyze LOGS --out "
                                  f"{self.out}` first")
            if read_manifest(self.out) is None and not (self.out / COMMIT).is_dir():
                verify(self.out)  # raises, saying what is wrong
        self.created = not self.out.exists()
        self.new_lock = not (self.out / LOCK).exists()
        self.out.mkdir(parents=True, exist_ok=True)
        fd = _lock(self.out / LOCK, fcntl.LOCK_EX, block=False)
        if fd is None:
            raise OutputError(f"{self.out} is in use by {_holder(self.out)} (another tormortem "
                              "is writing it); wait for it to finish or choose another --out")
        self.lock_fd = fd
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        try:
            with critical():
                _recover(self.out)
            self.old = read_manifest(self.out)
            if self.carry and self.old is None:
                verify(self.out)  # raises, saying what is wrong
            self.path.mkdir()
        except BaseException:
            self._release(failed=True)
            raise
        return self

    def commit(self, **fields: Any) -> dict[str, Any]:
        """Make the staged files the folder's output, with a manifest of ``fields`` (stage,
        command, options, inputs ...) and of every file."""
        files: dict[str, Any] = dict(self.old["files"]) if self.carry and self.old else {}
        for p in sorted(self.path.iterdir()):
            if p.is_file() and p.name not in (MANIFEST, _REPLACES):
                with open(p, "rb") as fh:
                    os.fsync(fh.fileno())
                st = p.stat()
                files[p.name] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns,
                                 "sha256": file_sha256(p)}
        base = {k: v for k, v in (self.old or {}).items()
                if self.carry and k not in ("files", "complete")}
        doc = {**base, "schema": SCHEMA, "tool": {"name": "tormortem",
                                                  "version": tool_version()},
               "stage": self.stage, **fields, "complete": True,
               "files": dict(sorted(files.items()))}
        if self.old is not None:
            replaces = sorted(self.old.get("files", {}))
        else:
            replaces = [n for n in _LEGACY if (self.out / "tormortem.duckdb").exists()]
        (self.path / _REPLACES).write_text(json.dumps(replaces))
        with open(self.path / MANIFEST, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(doc, indent=2) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        _fsync_dir(self.path)
        with critical():  # from the journal's rename to the manifest's: never cut by a signal
            rfd = _lock(self.out / READ_LOCK, fcntl.LOCK_EX, block=True)
            try:
                os.replace(self.path, self.out / COMMIT)
                _fsync_dir(self.out)
                _roll_forward(self.out)
            finally:
                _unlock(rfd)
            self.committed = True
        return doc

    def __exit__(self, etype: type[BaseException] | None, e: BaseException | None,
                 _tb: object) -> None:
        self._release(failed=not self.committed)
        if e is not None and not isinstance(e, Interrupted | OutputError) and _disk_full(e):
            raise OutputError(f"no space left on device while writing {self.out} ({e}); free "
                              "space or choose another --out; the previous output there is "
                              "unchanged") from None

    def _release(self, *, failed: bool) -> None:
        with critical():
            if failed and self.path.exists():
                shutil.rmtree(self.path, ignore_errors=True)
            if failed and (self.created or (self.new_lock and read_manifest(self.out) is None)):
                for name in (LOCK, READ_LOCK):  # a folder that is not an output: no trace
                    (self.out / name).unlink(missing_ok=True)
            if failed and self.created:
                with contextlib.suppress(OSError):
                    self.out.rmdir()
            _unlock(self.lock_fd)
            self.lock_fd = None


def _incomplete(out: Path, why: str, command: str | None = None) -> str:
    run = command or f"tormortem analyze LOGS --out {out}"
    return (f"{out} is not a complete tormortem output ({why}); run `{run}` again to "
            "rebuild it")


@contextlib.contextmanager
def reading(out: Path, need: Iterable[str] = (), stage: str | None = None
            ) -> Iterator[dict[str, Any]]:
    """Hold ``out`` steady (no commit can run) while the caller reads it; yields its
    manifest, after ``verify``."""
    out = Path(out)
    if not out.is_dir():
        raise OutputError(f"{out} not found; run `tormortem analyze LOGS --out {out}` first")
    if (out / COMMIT).is_dir() or (out / STAGING).exists():  # a writer died, or is running
        wfd = _lock(out / LOCK, fcntl.LOCK_EX, block=False) if os.access(out, os.W_OK) else None
        if wfd is not None:
            try:
                _recover(out)
            finally:
                _unlock(wfd)
    try:
        rfd = _lock(out / READ_LOCK, fcntl.LOCK_SH, block=True)
    except OSError:  # a read-only folder: read without the lock, the checks still hold
        rfd = None
    try:
        yield verify(out, need, stage)
    finally:
        _unlock(rfd)


def verify(out: Path, need: Iterable[str] = (), stage: str | None = None) -> dict[str, Any]:
    """The manifest of ``out`` if it is complete and every file it lists matches; else
    ``OutputError`` saying what to run."""
    doc = read_manifest(out)
    if doc is None:
        why = ("a commit was interrupted" if (out / COMMIT).exists() else
               "no manifest.json: written by an older tormortem, or interrupted")
        raise OutputError(_incomplete(out, why))
    argv = doc.get("argv")
    cmd = None
    if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
        import shlex

        cmd = shlex.join(["tormortem", *argv, "--out", str(out)])
    if doc.get("complete") is not True or not isinstance(doc.get("files"), dict):
        raise OutputError(_incomplete(out, "manifest.json is not complete", cmd))
    if stage == "analyze" and doc.get("stage") != "analyze":
        raise OutputError(f"{out} holds an ingest only (no analysis); run `tormortem analyze "
                          f"LOGS --out {out}` first")
    files: dict[str, Any] = doc["files"]
    for name in need:
        if name not in files:
            raise OutputError(_incomplete(out, f"{name} is not part of it", cmd))
    for name, meta in files.items():
        p = out / name
        try:
            st = p.stat()
        except OSError:
            raise OutputError(_incomplete(out, f"{name} is missing", cmd)) from None
        same = st.st_size == meta.get("size") and st.st_mtime_ns == meta.get("mtime_ns")
        if not same and (st.st_size != meta.get("size")
                         or file_sha256(p) != meta.get("sha256")):
            raise OutputError(_incomplete(
                out, f"{name} does not match manifest.json: changed after it was written",
                cmd))
    return doc
