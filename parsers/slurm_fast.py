"""The slurmctld lines a busy controller prints by the hundred thousand, read for a whole chunk.

A controller's log is mostly five families (src/slurmctld/job_scheduler.c, job_mgr.c,
src/plugins/sched/backfill/backfill.c, proc_req.c; lines of a real Slurm 22.05.8 in
sample_logs/real_formats/slurm/), each line one row or none:

* ``sched: Allocate JobId=12 NodeList=n[1-4] #CPUs=8 Partition=gpu``  -> job_start
* ``sched/backfill: _start_job: Started JobId=12 in gpu on n[1-4]``    -> job_start
* ``_job_complete: JobId=12 WEXITSTATUS 0`` / ``... done``             -> job_end
* ``Time limit exhausted for JobId=12``                                 -> job_time_limit
* ``_slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=12 uid 1000``          -> job_cancel
* ``_slurm_rpc_submit_batch_job: JobId=12 InitPrio=4294 usec=331``     -> noise

``ctld_fast`` finds them with Rust regexes and builds their rows as ``CtldMessages`` and
``SlurmctldParser`` would (see ``parsers.fastrows`` for how the rows are put in order).

The fast patterns are narrower than the per-line ones, so a line they take is one whose
per-line result they know exactly; anything else (a zone or comma in the stamp, array job ids,
a program prefix, non-ASCII text, a second stamp glued into the line, ``job_complete: requeue``
anywhere, an exit code of more than 15 digits) is left to ``parse_line``:

* the stamp is the ``[ISO]`` envelope without a zone, read in ``--tz`` only when that zone has a
  fixed offset (``assumed_tz``), and its date must exist;
* the whole line is printable ASCII, so Python's ``\\S`` and ``str.strip`` mean what the Rust
  classes used here mean;
* a submit line is noise only when no other recogniser has an anchor in it (the message layer
  reads it after ``CtldMessages`` in the per-line path), checked with that layer's prefilter
  (on the lines' digit-zeroed shapes, ``parsers.dedupe``).
"""

from __future__ import annotations

from datetime import tzinfo
from functools import lru_cache

import numpy as np
import polars as pl

from parsers import dedupe, prefilter
from parsers.anchors import CompiledPrefilter
from parsers.base import EVENT, NOISE
from parsers.fastrows import ISO_SECONDS, bracket_iso_us, fixed_offset_us, printable
from parsers.schema import EVENTS
from parsers.slurm_shapes import ALLOCATE as _ALLOCATE
from parsers.slurm_shapes import BACKFILL as _BACKFILL
from parsers.slurm_shapes import COMPLETE as _COMPLETE
from parsers.slurm_shapes import EMBEDDED as _EMBEDDED
from parsers.slurm_shapes import KILL as _KILL
from parsers.slurm_shapes import SUBMIT_LINE as _SUBMIT
from parsers.slurm_shapes import TIMELIMIT as _TIMELIMIT
from parsers.slurm_shapes import ctld_shaped

_ENV = r"^\[(" + ISO_SECONDS + r")(?:\.([0-9]{1,9}))?\] ([ -~]*)$"
_PREFIX = r"^\[" + ISO_SECONDS + r"(?:\.[0-9]{1,9})?\] "  #: ``_ENV``'s head, no captures
_LAUNCH = (r"^launch task StepId=([0-9]+)\.([A-Za-z0-9_]+) request from UID:[0-9]+ GID:[0-9]+ "
           r"HOST:[0-9.]+ PORT:[0-9]+$")
_BATCH = r"^Launching batch job ([0-9]+) for UID [0-9]+$"
_DONE = r"^\[([0-9]+)\.([A-Za-z0-9_]+)\] done with job$"


@lru_cache(maxsize=8)
def _others(extra_key: tuple[str, ...]) -> CompiledPrefilter:
    from parsers.message import all_recognisers, prefilter_of
    from parsers.slurm_messages import CtldMessages

    return prefilter_of(all_recognisers(skip=(CtldMessages,)), claims=True).compiled()


def _layer_prefilter() -> CompiledPrefilter:
    """Anchors of every recogniser but ``CtldMessages`` (and ``--rules`` signatures)."""
    from parsers.signature_table import EXTRA

    return _others(tuple(s.id for s in EXTRA))


#: (status per line, int8: EVENT/NOISE for the lines read here, -1 elsewhere; their rows, every
#: EVENTS column in polars, line_no the chunk index; the chunk index of each row)
Fast = tuple[np.ndarray, pl.DataFrame | None, np.ndarray]


def _envelope(lines: pl.Series, off: int, ok: np.ndarray | None = None) -> pl.DataFrame:
    """Chunk index, stamp (epoch us) and message of the lines with a plain ``[ISO]``
    envelope (see module docstring): ``_ENV`` without its captures, which cost ~2x the match
    (the stamp has a fixed width and no ``]``, so the first ``]`` ends the envelope) and with
    its printable-ASCII test done per chunk (``fastrows.printable``)."""
    line = pl.col("l")
    end = pl.col("end")
    return (pl.DataFrame({"l": lines, "p": printable(lines) if ok is None else ok})
            .with_row_index("i")
            .filter(pl.col("p") & line.str.contains(_PREFIX))
            .with_columns(end=line.str.find("]", literal=True))
            .with_columns(msg=line.str.slice(end + 2))
            .filter(~pl.col("msg").str.contains(_EMBEDDED))
            .with_columns(bracket_iso_us(line, end, off).alias("ts"))
            .filter(pl.col("ts").is_not_null())
            .select("i", "ts", "msg"))


def ctld_fast(lines: pl.Series, tz: tzinfo, source: str, path: str) -> Fast | None:
    """``Fast`` for a slurmctld log's chunk, or None when the file's zone has no fixed
    offset."""
    off = fixed_offset_us(tz)
    if off is None:
        return None
    status = np.full(len(lines), -1, np.int8)
    ok = printable(lines)
    shaped = ctld_shaped(lines, ok, off)
    rows, submit, shapes = shaped if shaped is not None else (*_per_line(lines, ok, off), None)
    if submit.size:
        # the submit lines differ only in their digits: the anchors are tested once per
        # digit-zeroed shape (a few per chunk), exactly (parsers/dedupe.py); the chunk's
        # shapes, if it was read by them, are theirs (~13 ms per 8 MiB not spent again)
        sub = lines.gather(submit)
        other = prefilter.masks(sub, {"m": _layer_prefilter()},
                                unique=shapes or dedupe.shapes(sub))["m"]
        status[submit[~np.asarray(other, bool)]] = NOISE
    return _result(status, rows, source, path, None, "unknown")


def _per_line(lines: pl.Series, ok: np.ndarray, off: int) -> tuple[pl.DataFrame, np.ndarray]:
    """``ctld_fast``'s rows and submit lines, the patterns run on every line (a chunk
    whose lines do not repeat by shape)."""
    env = _envelope(lines, off, ok)
    msg = pl.col("msg")
    parts = []
    for rx, start in ((_ALLOCATE, "sched: Allocate "), (_BACKFILL, "sched/backfill: ")):
        parts.append(env.filter(msg.str.starts_with(start)).select(
            "i", "ts", "msg", msg.str.extract_groups(rx).alias("g"))
            .unnest("g").filter(pl.col("1").is_not_null())
            .select("i", "ts", "msg", pl.lit("job_start").alias("kind"),
                    pl.col("1").alias("job_id"),
                    pl.col("2").alias("code"), pl.lit(None, pl.Float64).alias("value")))
    done = (env.filter(msg.str.starts_with("_job_complete: ")
                       & ~msg.str.contains("job_complete: requeue ", literal=True))
            .select("i", "ts", "msg", msg.str.extract_groups(_COMPLETE).alias("g"))
            .unnest("g").filter(pl.col("1").is_not_null())
            .with_columns(pl.col("2").str.strip_chars(" ").alias("code"))
            .with_columns(pl.col("code").str.extract(r"([0-9]+)$", 1).alias("num"))
            .filter(pl.col("num").is_null() | (pl.col("num").str.len_bytes() <= 15))
            .select("i", "ts", "msg", pl.lit("job_end").alias("kind"),
                    pl.col("1").alias("job_id"), "code",
                    pl.col("num").cast(pl.Float64).alias("value")))
    parts.append(done)
    parts.append(env.filter(msg.str.starts_with("Time limit exhausted for ")).select(
        "i", "ts", "msg", pl.lit("job_time_limit").alias("kind"),
        msg.str.extract(_TIMELIMIT, 1).alias("job_id"), pl.lit(None, pl.String).alias("code"),
        pl.lit(None, pl.Float64).alias("value")).filter(pl.col("job_id").is_not_null()))
    parts.append(env.filter(msg.str.starts_with("_slurm_rpc_kill_job: ")).select(
        "i", "ts", "msg", msg.str.extract_groups(_KILL).alias("g")).unnest("g")
        .filter(pl.col("1").is_not_null())
        .select("i", "ts", "msg", pl.lit("job_cancel").alias("kind"),
                pl.col("1").alias("job_id"), pl.col("2").alias("code"),
                pl.lit(None, pl.Float64).alias("value")))
    rows = pl.concat(parts).sort("i")
    submit = env.filter(msg.str.contains(_SUBMIT)).get_column("i").to_numpy().astype(np.int64)
    return rows, submit


def slurmd_fast(lines: pl.Series, tz: tzinfo, source: str, path: str, host: str | None,
                host_from: str) -> Fast | None:
    """``ctld_fast`` for a slurmd log (src/slurmd/slurmd/req.c ``launch task StepId=%ps
    request from UID:%u GID:%u HOST:%s PORT:%hu``, ``Launching batch job %u for UID %u``;
    slurmstepd's ``[%ps] done with job``): step_start / step_end rows on the log's node."""
    off = fixed_offset_us(tz)
    if off is None:
        return None
    status = np.full(len(lines), -1, np.int8)
    env = _envelope(lines, off)
    if not env.height:
        return status, None, np.zeros(0, np.int64)
    msg = pl.col("msg")
    rows = pl.concat([
        env.filter(msg.str.starts_with(start)).select(
            "i", "ts", "msg", msg.str.extract_groups(rx).alias("g")).unnest("g")
        .filter(pl.col("1").is_not_null())
        .select("i", "ts", "msg", pl.lit(kind).alias("kind"), pl.col("1").alias("job_id"),
                (pl.col("2") if code is None else pl.lit(code)).alias("code"),
                pl.lit(None, pl.Float64).alias("value"))
        for start, rx, kind, code in (
            ("launch task ", _LAUNCH, "step_start", None),
            ("Launching batch job ", _BATCH, "step_start", "batch"),
            ("[", _DONE, "step_end", None))]).sort("i")
    return _result(status, rows, source, path, host, host_from)


def _result(status: np.ndarray, rows: pl.DataFrame, source: str, path: str,
            host: str | None, host_from: str) -> Fast:
    idx = rows.get_column("i").to_numpy().astype(np.int64)
    status[idx] = EVENT
    if not rows.height:
        return status, None, idx
    const = {"ts_flag": "assumed_tz", "host": host, "host_from": host_from, "source": source,
             "format": source, "file": path}
    frame = rows.select(
        pl.col("ts").cast(pl.Datetime("us", "UTC")), "kind", "job_id", "code", "value",
        pl.col("msg").alias("message"), pl.col("i").cast(pl.Int64).alias("line_no"),
        *(pl.lit(v, pl.String).alias(c) for c, v in const.items()),
        *(pl.lit(None, dt).alias(c) for c, dt in (
            ("uptime_s", pl.Float64), ("rank", pl.Int32), ("iteration", pl.Int64),
            ("device", pl.String))))
    return status, frame.select(EVENTS.names), idx
