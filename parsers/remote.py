"""Inputs named by fsspec URLs: ``s3://``, ``gs://``, ``http(s)://``, ``file://``, ``memory://``
and every other protocol fsspec knows (``fsspec.available_protocols()``).

Choices:

* A URL is recognised by its ``protocol://`` prefix; everything else stays a local path (a
  local file named ``x://y`` is not a thing anyone has).
* A URL of a directory is walked like a local one (``find``: recursive, sorted; the same names
  skipped: our outputs, Parquet/DuckDB/report files, documentation, ``.git``); a URL with a glob
  character (``*?[``) is expanded by the file system's ``glob``. Files are named by their full
  URL (``unstrip_protocol``), which is what the ``file`` columns and the manifest hold.
* Reading streams: the file is opened with fsspec's buffered reader (``s3``/``gs``: ranged
  reads of a few MiB, ``http(s)``: one streaming GET, ``block_size=0``), never downloaded
  whole. Its first bytes are kept to sniff the compression (``inputs.Stream``), so a server
  without range requests (``python -m http.server``) is read once.
* Size and modification time come from ``info`` (the size bounds the read as ``fstat`` does
  for a local file; the time is what a syslog without a year is dated by). They are asked once
  per URL in a process (``info`` is a HEAD request over HTTP).
* ``memory://`` is this process's own memory: such inputs are read here, never by ``--jobs``
  workers or Dask (``process_local``). Other URLs are opened by whichever worker parses them,
  with that worker's credentials (environment, ``~/.aws``, ...).
* A protocol whose package is missing (``s3`` without ``s3fs``) or a URL that names nothing is
  an ``InputError`` (one line: what to install or check), as a missing local path is.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
_GLOB = re.compile(r"[*?\[]")
#: the package that brings a protocol (fsspec's own error text is used for the others)
PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "http": "aiohttp",
            "https": "aiohttp", "abfs": "adlfs", "abfss": "adlfs", "az": "adlfs",
            "adl": "adlfs", "hf": "huggingface_hub", "sftp": "paramiko", "ssh": "paramiko",
            "oci": "ocifs", "webhdfs": "requests", "smb": "smbprotocol"}
_STREAMING = {"http", "https"}  #: opened with block_size=0: one GET, no range requests
PROCESS_LOCAL = {"memory"}  #: file systems only this process sees


class RemoteError(ValueError):
    """A URL that cannot be read (``inputs`` re-raises it as ``InputError``)."""


def is_url(s: str) -> bool:
    return _URL.match(s) is not None


def protocol(url: str) -> str:
    m = _URL.match(url)
    return m.group(1).lower() if m else "file"


def process_local(url: str) -> bool:
    """True for URLs no other process can open (``memory://``)."""
    return protocol(url) in PROCESS_LOCAL


def filesystem(url: str) -> tuple[Any, str]:
    """fsspec's file system for ``url`` and the path within it; a missing backend or an
    unknown protocol is a ``RemoteError`` that says what to install or check."""
    import fsspec

    proto = protocol(url)
    try:
        fs, path = fsspec.core.url_to_fs(url, **_options(proto))
    except ImportError as e:
        pkg = PACKAGES.get(proto)
        how = f"pip install {pkg}" if pkg else str(e)
        raise RemoteError(f"{url!r}: reading {proto}:// URLs needs the package "
                          f"{pkg or 'named by fsspec'} ({how}), which is not installed"
                          ) from None
    except ValueError as e:
        if "Protocol not known" in str(e):
            raise RemoteError(f"{url!r}: fsspec knows no protocol {proto!r}; check the URL "
                              "(python -c 'import fsspec; print(fsspec.available_protocols())'"
                              " lists them)") from None
        raise RemoteError(f"{url!r}: {e}; check the URL") from None
    return fs, str(path)


#: seconds an HTTP server may keep a connection open without sending a byte (connecting, or
#: between two reads) before the read fails with a message; ``TORMORTEM_REMOTE_TIMEOUT``
#: overrides it. aiohttp's own default waits for ever on a server that accepts and stays
#: silent (a probe: killed after 120 s with nothing said)
REMOTE_TIMEOUT_S = 60.0


def remote_timeout() -> float:
    try:
        t = float(os.environ.get("TORMORTEM_REMOTE_TIMEOUT", REMOTE_TIMEOUT_S))
    except ValueError:
        return REMOTE_TIMEOUT_S
    return t if t > 0 and t == t else REMOTE_TIMEOUT_S


def _options(proto: str) -> dict[str, Any]:
    """fsspec storage options: a read timeout for HTTP (``REMOTE_TIMEOUT_S``)."""
    if proto not in _STREAMING:
        return {}
    try:
        import aiohttp
    except ImportError:  # filesystem() names the package to install
        return {}
    t = remote_timeout()
    return {"client_kwargs": {"timeout": aiohttp.ClientTimeout(total=None, sock_connect=t,
                                                                sock_read=t)}}


def _why(e: BaseException) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return text[:200]


def expand(url: str, skip: Any) -> list[str]:
    """The file URLs ``url`` names: itself, the files under it (a directory), or its glob
    matches; sorted. ``skip(url_of_file, names_in_its_folder)`` says which to leave out of a
    walk (the same rules as a local directory)."""
    fs, path = filesystem(url)
    try:
        if _GLOB.search(path):
            found = [p for p in sorted(fs.glob(path)) if not fs.isdir(p)]
            if not found:
                raise RemoteError(f"no file matches {url!r}; check the URL")
            return [fs.unstrip_protocol(p) for p in found]
        if fs.isdir(path):
            top = path.rstrip("/")
            files = sorted(fs.find(path), key=lambda p: _walk_order(p[len(top):]))
            by_folder: dict[str, set[str]] = {}
            for p in files:
                folder, _, name = p.rpartition("/")
                by_folder.setdefault(folder, set()).add(name)
            out = []
            for p in files:
                folder, _, name = p.rpartition("/")
                if not skip(p[len(top):], by_folder[folder]):
                    out.append(fs.unstrip_protocol(p))
            return out
        if fs.exists(path):
            return [fs.unstrip_protocol(path)]
    except RemoteError:
        raise
    except FileNotFoundError:
        pass
    except TimeoutError:  # fsspec's FSTimeoutError, aiohttp's: REMOTE_TIMEOUT_S
        raise RemoteError(f"{url!r}: no answer within {remote_timeout():g} s; check the URL "
                          "and the network (TORMORTEM_REMOTE_TIMEOUT sets the wait)") from None
    except (OSError, ValueError, RuntimeError) as e:
        raise RemoteError(f"{url!r}: {_why(e)}; check the URL and its credentials") from None
    except Exception as e:  # backends raise their own (aiohttp.ClientError, botocore ...)
        raise RemoteError(f"{url!r}: {type(e).__name__}: {_why(e)}; check the URL, the "
                          "network and the credentials") from None
    raise RemoteError(f"no such file, directory or glob match: {url!r}; check the URL")


def _walk_order(rel: str) -> tuple[tuple[int, str], ...]:
    """The order ``os.walk`` gives a local directory's files (``inputs._walk``): a folder's
    files (sorted) before its subfolders (sorted), depth first."""
    *dirs, name = rel.strip("/").split("/")
    return (*((1, d) for d in dirs), (0, name))


@lru_cache(maxsize=4096)
def stat(url: str) -> tuple[int | None, datetime | None]:
    """Size (None if the backend does not say) and modification time of a file URL."""
    try:
        fs, path = filesystem(url)
        info = fs.info(path)
    except Exception:  # the read that follows names the problem
        return None, None
    size = info.get("size")
    when = None
    for key in ("mtime", "LastModified", "last_modified", "updated", "modified", "created"):
        v = info.get(key)
        if isinstance(v, datetime):
            when = v if v.tzinfo else v.replace(tzinfo=UTC)
        elif isinstance(v, int | float):
            when = datetime.fromtimestamp(v, UTC)
        elif isinstance(v, str):
            try:
                when = datetime.fromisoformat(v.replace("Z", "+00:00"))
            except ValueError:
                continue
        if when is not None:
            break
    return (int(size) if isinstance(size, int | float) else None), when


class RemoteReadError(RuntimeError):
    """A read of a URL failed part way (the connection dropped, the store refused): the
    message names the URL and how far the read got."""


def open_raw(url: str) -> Any:
    """A binary reader of the file at ``url`` (streaming: see the module's choices)."""
    fs, path = filesystem(url)
    try:
        if protocol(url) in _STREAMING:
            return _Guarded(fs.open(path, "rb", block_size=0), url)
        return _Guarded(fs.open(path, "rb"), url)
    except FileNotFoundError:
        raise OSError(f"{url}: no such file (any more)") from None


class _Guarded:
    """An fsspec file whose read errors (the backends' own: aiohttp's ``ClientPayloadError``,
    botocore's, or an ``OSError`` such as a reset connection) become one
    ``RemoteReadError`` naming the URL and the bytes read before it."""

    def __init__(self, raw: Any, url: str) -> None:
        self.raw, self.url, self.done = raw, url, 0

    def read(self, n: int = -1) -> bytes:
        try:
            got: bytes = self.raw.read(n)
        except Exception as e:  # any backend's error: named, with what to do
            raise RemoteReadError(
                f"{self.url}: the read failed after {self.done:,} bytes ({type(e).__name__}: "
                f"{_why(e)}); check the network or the store, then rerun") from None
        self.done += len(got)
        return got

    def close(self) -> None:
        self.raw.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)
