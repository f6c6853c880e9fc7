"""Compact batches of the bulk progress rows (Megatron iteration lines read vectorised).

A job log is ~99% iteration lines. In the EVENTS schema every one of them repeats the same
host, host_from, source, format, kind, job_id and file strings and carries null uptime_s,
device and message (and code, but for a tqdm bar's description). The vectorised path
(joblog.py) therefore hands its rows over in the narrow ``PROGRESS`` schema, with those
constants stored once in the batch's schema metadata, until ``to_events`` expands such a batch
into ordinary EVENTS rows (for the Parquet file, straight into its dictionary-encoded columns;
explain, tests): the parse never builds those strings per row.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa

from parsers.schema import EVENTS, UTC_US

META_KEY = b"tormortem.progress"
#: the EVENTS columns that are the same on every row of a progress batch (in the metadata)
CONST = ("host", "host_from", "source", "format", "kind", "job_id", "file")
#: EVENTS columns that are null on every progress row
NULL = ("uptime_s", "device", "message")
#: ts_flag codes of the ``ts_flag`` column (int8); 0 is never stored
FLAG_NAMES = (None, "assumed_tz", "exact", "inherited", "missing")
_FLAGS = pa.array(FLAG_NAMES, pa.string())

PROGRESS = pa.schema([
    pa.field("ts", UTC_US),
    pa.field("ts_flag", pa.int8(), nullable=False),
    pa.field("rank", pa.int32()),
    pa.field("iteration", pa.int64(), nullable=False),
    pa.field("value", pa.float64()),
    pa.field("line_no", pa.int64(), nullable=False),
    #: a tqdm bar's description (``Epoch 3``; parsers/hf_trainer.py); null on other rows
    pa.field("code", pa.string()),
])


def make(ts: np.ndarray, ts_null: np.ndarray, flag: np.ndarray, rank: np.ndarray,
         iteration: np.ndarray, value: np.ndarray, line_no: np.ndarray,
         const: dict[str, str | None], value_null: np.ndarray | None = None,
         code: pa.Array | None = None) -> pa.RecordBatch:
    """A PROGRESS batch: ts in UTC epoch microseconds (``ts_null`` marks unknown), flag codes
    (index into FLAG_NAMES), rank (negative: unknown), value (``value_null`` marks none),
    the per-batch constants, and a code per row (None: null on every row)."""
    def masked(values: np.ndarray, typ: pa.DataType, null: np.ndarray) -> pa.Array:
        return pa.array(values, typ, mask=null if null.any() else None)

    arrays = [
        masked(ts, UTC_US, ts_null),
        pa.array(flag.astype(np.int8), pa.int8()),
        masked(rank.astype(np.int32), pa.int32(), rank < 0),
        pa.array(iteration, pa.int64()),
        pa.array(value, pa.float64()) if value_null is None
        else masked(value, pa.float64(), value_null),
        pa.array(line_no, pa.int64()),
        pa.nulls(len(line_no), pa.string()) if code is None else code,
    ]
    meta = {META_KEY: json.dumps({k: const[k] for k in CONST}).encode()}
    return pa.RecordBatch.from_arrays(arrays, schema=PROGRESS.with_metadata(meta))


def is_progress(batch: pa.RecordBatch) -> bool:
    meta = batch.schema.metadata
    return meta is not None and META_KEY in meta


def constants(batch: pa.RecordBatch) -> dict[str, str | None]:
    meta = batch.schema.metadata
    assert meta is not None
    out: dict[str, str | None] = json.loads(meta[META_KEY])
    return out


#: EVENTS with the low-cardinality strings (a progress batch's constants, ts_flag) as
#: dictionaries: the form events.parquet is written in (a constant is a one-entry dictionary
#: the Parquet writer takes as it is, instead of hashing the string on every row)
DICT_COLUMNS = (*CONST, "ts_flag")
_DICT = pa.dictionary(pa.int32(), pa.string())
EVENTS_DICT = pa.schema([
    pa.field(f.name, _DICT, f.nullable, f.metadata)
    if f.name in DICT_COLUMNS else f for f in EVENTS])
_FLAG_DICT = pa.array(FLAG_NAMES[1:], pa.string())


def to_events(batch: pa.RecordBatch, *, dictionary: bool = False) -> pa.RecordBatch:
    """The same rows in the EVENTS schema (``dictionary``: in EVENTS_DICT)."""
    n = batch.num_rows
    const = constants(batch)
    cols: dict[str, Any] = {}
    if dictionary:  # one all-zero index array serves every constant column
        zeros = pa.array(np.zeros(n, np.int32))
        null_dict = pa.nulls(n, _DICT)
        for name in CONST:
            v = const[name]
            cols[name] = null_dict if v is None else pa.DictionaryArray.from_arrays(
                zeros, pa.array([v], pa.string()))
    else:
        cols.update({name: _const(const[name], n) for name in CONST})
    null_str = pa.nulls(n, pa.string())
    for name in NULL:
        typ = EVENTS.field(name).type
        cols[name] = null_str if typ == pa.string() else pa.nulls(n, typ)
    for name in ("ts", "rank", "iteration", "value", "line_no", "code"):
        cols[name] = batch.column(name)
    if dictionary:
        codes = batch.column("ts_flag").to_numpy().astype(np.int32) - 1
        cols["ts_flag"] = pa.DictionaryArray.from_arrays(pa.array(codes), _FLAG_DICT)
    else:
        cols["ts_flag"] = _FLAGS.take(batch.column("ts_flag"))
    schema = EVENTS_DICT if dictionary else EVENTS
    return pa.RecordBatch.from_arrays([cols[f.name] for f in schema], schema=schema)


def _const(value: str | None, n: int) -> pa.Array:
    """A constant string column of ``n`` rows, built from buffers (no per-row Python)."""
    if value is None:
        return pa.nulls(n, pa.string())
    raw = value.encode()
    offsets = np.arange(n + 1, dtype=np.int32) * len(raw)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets),
                                                  pa.py_buffer(raw * n)])
