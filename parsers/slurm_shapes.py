"""``slurm_fast.ctld_fast`` read once per line *shape* instead of once per line.

A busy controller's chunk is a few dozen shapes: its lines with every ASCII digit written as
``0`` (``parsers.dedupe``; 8 MiB of the slurm mix: 103,000 lines, 32 shapes). The patterns read
here on the shapes are ``dedupe.digit_blind`` (their classes hold all ten digits or none, and
no literal in them is a digit), so on a line and on its shape they match alike, *at the same
places*: the shape has the line's length and its every other byte. (The stamp's pattern
names digits -- a year begins with 1 or 2 -- so the shape is tested with a blind variant and
the lines with the exact one.) So the envelope, the
embedded-stamp test, the family and the spans of its captures are read here per shape, in
Python, and each line is then cut at its shape's spans by polars; what depends on the digits
themselves (the stamp's date, the job id, an exit code's value) is still read per line. The
rows and statuses are ``ctld_fast``'s (``test_fast_paths`` compares the two on every chunk
shape they meet; ``tests/parsers/test_slurm_shapes.py``).

~35 ms per 8 MiB chunk against ~74 (one core). A chunk whose lines do not repeat by shape
(``dedupe.unique_lines`` says so from a sample, or it has more than ``MAX_SHAPES``) goes by
``ctld_fast`` as before.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl

from parsers import dedupe
from parsers.fastrows import ISO_SECONDS, bracket_iso_us

MAX_SHAPES = 4096
MIN_LINES = dedupe.MIN_LINES  #: fewer lines: ``ctld_fast`` as before (tests lower it)
#: the envelope as far as a shape can tell (``ISO_SECONDS`` names digits: ``[12]`` of the year,
#: ``[0-5]`` of the minutes; the lines of a matching shape are tested with ``ENVELOPE``)
SHAPE_PREFIX = re.compile(r"\[[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
                          r"(?:\.[0-9]{1,9})?\] ")
ENVELOPE = r"^\[" + ISO_SECONDS + r"(?:\.[0-9]{1,9})?\] "
#: ``ctld_fast``'s patterns (the message's; ``slurm_fast`` runs them per line)
EMBEDDED = r"\[[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]"
_JOB = r"JobId=([0-9]+)"
ALLOCATE = r"^sched: Allocate " + _JOB + r" NodeList=([!-~]+)(?: |$)"
BACKFILL = r"^sched/backfill: _start_job: Started " + _JOB + r" in [!-~]+ on ([!-~]+)(?: |$)"
COMPLETE = r"^_job_complete: " + _JOB + r" (.+)$"
TIMELIMIT = r"^Time limit exhausted for " + _JOB + r"$"
KILL = r"^_slurm_rpc_kill_job: REQUEST_KILL_JOB " + _JOB + r" uid ([0-9]+)$"
SUBMIT_LINE = r"^_slurm_rpc_submit_batch_job: JobId=[0-9]+ InitPrio=[0-9]+ usec=[0-9]+$"
_EMBEDDED = re.compile(EMBEDDED)
#: (message start, pattern, kind): ``slurm_fast``'s families, in its order
FAMILIES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("sched: Allocate ", re.compile(ALLOCATE), "job_start"),
    ("sched/backfill: ", re.compile(BACKFILL), "job_start"),
    ("_job_complete: ", re.compile(COMPLETE), "job_end"),
    ("Time limit exhausted for ", re.compile(TIMELIMIT), "job_time_limit"),
    ("_slurm_rpc_kill_job: ", re.compile(KILL), "job_cancel"),
)
_SUBMIT = re.compile(SUBMIT_LINE)
SUBMIT = len(FAMILIES)  #: the family code of a submit line (noise)
KINDS = pl.Series("kind", [k for _, _, k in FAMILIES], pl.String)  #: per family code
_NUM = re.compile(r"([0-9]+)$")
#: per shape: family (-1: none), the stamp's ``]``, job id span, code span, value span
_COLS = ("fam", "end", "js", "jl", "cs", "cl", "vs", "vl")


def _shape(key: str) -> tuple[int, ...] | None:
    """``_COLS`` for one shape, or None where ``ctld_fast`` takes no line of it."""
    if not SHAPE_PREFIX.match(key):
        return None
    end = key.find("]")
    base = end + 2
    msg = key[base:]
    if _EMBEDDED.search(msg):
        return None
    for fam, (start, rx, _) in enumerate(FAMILIES):
        if not msg.startswith(start):
            continue
        if fam == 2 and "job_complete: requeue " in msg:
            return None
        m = rx.match(msg)
        if m is None:
            return None
        js, je = m.span(1)
        if fam == 3:
            return fam, end, base + js, je - js, -1, 0, -1, 0
        cs, ce = m.span(2)
        if fam != 2:
            return fam, end, base + js, je - js, base + cs, ce - cs, -1, 0
        code = m.group(2)
        cs += len(code) - len(code.lstrip(" "))
        code = code.strip(" ")
        num = _NUM.search(code)
        if num is None:
            return fam, end, base + js, je - js, base + cs, len(code), -1, 0
        if len(num.group(1)) > 15:
            return None
        return (fam, end, base + js, je - js, base + cs, len(code), base + cs + num.start(1),
                num.end(1) - num.start(1))
    if _SUBMIT.match(msg):
        return SUBMIT, end, -1, 0, -1, 0, -1, 0
    return None


def shape_table(keys: list[str]) -> dict[str, np.ndarray]:
    """``_COLS`` per shape (``fam`` -1 where no line of the shape is taken)."""
    out = {c: np.full(len(keys), -1 if c == "fam" else 0, np.int64) for c in _COLS}
    for k, key in enumerate(keys):
        got = _shape(key)
        if got is not None:
            for c, v in zip(_COLS, got, strict=True):
                out[c][k] = v
    return out


def ctld_shaped(lines: pl.Series, ok: np.ndarray, off: int
                ) -> tuple[pl.DataFrame, np.ndarray, dedupe.Unique] | None:
    """The rows ``ctld_fast`` builds (columns i, ts, msg, kind, job_id, code, value; in line
    order), the chunk indices of its submit lines with a valid stamp and their shapes, or
    None when the chunk's lines do not repeat by shape. ``ok``: the lines that are printable
    ASCII."""
    u = dedupe.unique_lines(lines, min_lines=MIN_LINES)
    if u is None or len(u.keys) > MAX_SHAPES:
        return None
    t = shape_table(u.keys.to_list())
    per = {c: v[u.codes] for c, v in t.items()}
    take = np.flatnonzero(ok & (per["fam"] >= 0))
    df = pl.DataFrame({"i": take.astype(np.uint32), "l": lines.gather(take),
                       **{c: per[c][take] for c in _COLS}})
    line = pl.col("l")
    end = pl.col("end")

    def cut(s: str, n: str) -> pl.Expr:
        return pl.when(pl.col(s) >= 0).then(line.str.slice(pl.col(s), pl.col(n)))

    got = (df.filter(line.str.contains(ENVELOPE))
           .with_columns(bracket_iso_us(line, end, off).alias("ts"))
           .filter(pl.col("ts").is_not_null()))
    submit = got.filter(pl.col("fam") == SUBMIT).get_column("i").to_numpy().astype(np.int64)
    rows = got.filter(pl.col("fam") != SUBMIT)
    # each row's kind gathered from the families' (string views; ~2 ms per 8 MiB less than
    # a replace_strict of the codes)
    rows = rows.select(
        "i", "ts", line.str.slice(end + 2).alias("msg"),
        pl.lit(KINDS.gather(rows.get_column("fam"))).alias("kind"),
        cut("js", "jl").alias("job_id"), cut("cs", "cl").alias("code"),
        cut("vs", "vl").cast(pl.Float64).alias("value"))
    return rows, submit, u.of_lines(submit)
