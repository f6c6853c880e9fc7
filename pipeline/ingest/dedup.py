"""Before parsing: which inputs are the same content, and which compressed ones are corrupt.

The same file under a second name (``kern.log`` and ``kern.log.1``, ``sacct.txt`` and
``sacct-copy.txt``, ``kern.log`` and ``kern.log.gz``) would double its events and attempts.
Content is compared after decompression (SHA-256 of the bytes a parse would read), so a .gz
copy of a file is the same content. The first in input order is read; the others are named
as its duplicates.

Cost: a plain file is hashed here only if another input has the same (decompressed) size;
the others are hashed while they are parsed, on the reader thread. A compressed file is
decompressed here once in full: that is also how a corrupt or truncated one is found before
any of its rows are written (it is then quarantined: not read, counted and named).
Standard input and FIFOs can be read once only: they are hashed while parsed, never
compared.
"""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime

from parsers import remote
from parsers.compressed import MAGIC
from parsers.filecheck import TEST_CMD
from parsers.reader import CorruptInput, InputFile, compression, open_binary
from parsers.utf16 import Transcoded

BLOCK = 1 << 20
ENDS = 4 << 10  #: bytes of each end of a file compared before hashing it whole


@dataclass
class Fingerprint:
    size: int | None = None  #: bytes to read (decompressed); plain files: size at first look
    mtime: str | None = None
    sha256: str | None = None  #: None: computed while parsing
    compressed: str | None = None
    quarantined: str | None = None  #: why the file is not read
    duplicate_of: str | None = None  #: display name of the first input with this content


@dataclass
class Survey:
    prints: dict[str, Fingerprint] = field(default_factory=dict)  #: by display name

    @property
    def duplicates(self) -> list[tuple[str, str]]:
        return [(k, p.duplicate_of) for k, p in self.prints.items() if p.duplicate_of]


def _hash_stream(f: InputFile, limit: int | None) -> tuple[int, str]:
    """Bytes read and SHA-256 of the first ``limit`` bytes of the file (all: None), as a
    parse reads them (decompressed, UTF-16 re-encoded: its ``limit`` bounds the file's own
    bytes, as ``reader.iter_line_chunks`` does)."""
    h = hashlib.sha256()
    n = 0
    with open_binary(f) as fh:
        if isinstance(fh, Transcoded):
            fh.left, limit = limit, None
        while limit is None or n < limit:
            block = fh.read(BLOCK if limit is None else min(BLOCK, limit - n))
            if not block:
                break
            h.update(block)
            n += len(block)
    return n, h.hexdigest()


def _ends(f: InputFile, size: int) -> str:
    """A digest of a plain file's first and last ``ENDS`` bytes (equal for equal files): of
    its own bytes (a UTF-16 file's too, which ``open_binary`` would re-encode)."""
    h = hashlib.sha256()
    local = f.url is None and f.stream is None
    with open(f.path, "rb") if local else open_binary(f) as fh:
        h.update(fh.read(ENDS))
        if size > 2 * ENDS and local:
            fh.seek(size - ENDS)
            h.update(fh.read(ENDS))
    return "ends:" + h.hexdigest()


def _look(f: InputFile) -> tuple[int | None, datetime | None, bytes]:
    """Size, modification time and first bytes of a file or URL (``parsers.remote``)."""
    if f.url is not None:
        size, mtime = remote.stat(f.url)
        with open_binary(f) as fh:  # decompressed if compressed: its magic is not needed
            head = fh.read(6)
        kind = getattr(fh, "kind", None)
        return size, mtime, next((m for m, k in MAGIC if k == kind), head)
    st = os.stat(f.path)
    with open(f.path, "rb") as fh:
        magic = fh.read(6)
    return st.st_size, datetime.fromtimestamp(st.st_mtime, UTC), magic


def survey(files: list[InputFile]) -> Survey:
    """Sizes, content hashes where needed, quarantine and duplicates of ``files``."""
    res = Survey()
    for f in files:
        fp = res.prints[f.display] = Fingerprint()
        if f.stream is not None:
            continue
        try:
            size, mtime, magic = _look(f)
        except OSError:
            continue  # the parse names it (unreadable)
        fp.mtime = None if mtime is None else mtime.isoformat().replace("+00:00", "Z")
        fp.compressed = compression(magic)
        if fp.compressed is None:
            fp.size = size
            continue
        try:
            fp.size, fp.sha256 = _hash_stream(f, None)
        except CorruptInput as e:
            if not e.after:
                fp.quarantined = f"{e.detail}; check it with `{TEST_CMD[e.kind]} FILE`"
            # else: read up to the damage, as zcat would (its note says the rest is lost);
            # not hashed, so never taken for a duplicate
            fp.size = fp.sha256 = None
        except OSError:
            continue
    by_size: dict[int, list[InputFile]] = defaultdict(list)
    for f in files:
        fp = res.prints[f.display]
        if fp.size is not None and fp.quarantined is None:
            by_size[fp.size].append(f)
    # files of one size are told apart by their ends first (a fleet's node logs: ~2,000
    # files, many of a size); only those alike there are hashed whole, here (the others are
    # hashed while they are parsed, by the workers with --jobs)
    # (a group with a compressed file, hashed whole already, is hashed whole)
    alike: dict[tuple[int, str], int] = defaultdict(int)
    ends: dict[str, str] = {}
    for size, group in by_size.items():
        if not size or len(group) < 2:
            continue
        plain = all(res.prints[f.display].sha256 is None for f in group)
        for f in group:
            try:
                ends[f.display] = _ends(f, size) if plain else ""
            except OSError:
                continue
            alike[(size, ends[f.display])] += 1
    first: dict[str, str] = {}
    for f in files:
        fp = res.prints[f.display]
        if f.display not in ends or alike[(fp.size or 0, ends[f.display])] < 2:
            continue
        if fp.sha256 is None:
            try:
                _, fp.sha256 = _hash_stream(f, fp.size)
            except OSError:
                continue
        if fp.sha256 in first:
            fp.duplicate_of = first[fp.sha256]
        else:
            first[fp.sha256] = f.display
    return res
