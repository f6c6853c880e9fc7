"""Column-wise row accumulators: a parser's rows, per line or vectorised, as Arrow batches of
one schema (``parsers.base.LineParser`` writes its events and records into two of them)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import polars as pl
import pyarrow as pa


class RowSink:
    """Column-wise accumulator of rows of one schema; flushes to Arrow record batches."""

    def __init__(self, schema: pa.Schema, defaults: dict[str, Any] | None = None) -> None:
        self.schema = schema
        self.names = schema.names
        self.cols: dict[str, list[Any]] = {n: [] for n in self.names}
        self.defaults = defaults or {}
        self.count = 0
        self.frames: list[pl.DataFrame] = []
        self.batches: list[pa.RecordBatch] = []

    def add(self, **values: Any) -> None:
        d = self.defaults
        for n in self.names:
            self.cols[n].append(values.get(n, d.get(n)))
        self.count += 1

    def add_batch(self, batch: pa.RecordBatch) -> None:
        """Rows already in this sink's schema (built vectorised)."""
        self.batches.append(batch)
        self.count += batch.num_rows

    def add_frame(self, frame: pl.DataFrame) -> None:
        """Rows built vectorised; columns missing from ``frame`` are filled with defaults."""
        self.frames.append(frame)
        self.count += frame.height

    def __len__(self) -> int:
        return self.count

    def drain(self) -> Iterator[pa.RecordBatch]:
        """Yield what was accumulated (as batches of ``self.schema``) and reset."""
        if self.cols[self.names[0]]:
            try:
                yield pa.RecordBatch.from_pydict(self.cols, schema=self.schema)
            except (OverflowError, pa.ArrowInvalid, pa.ArrowTypeError):
                yield _coerced(self.cols, self.schema)
            self.cols = {n: [] for n in self.names}
        for frame in self.frames:
            yield frame_to_batch(frame, self.schema, self.defaults)
        self.frames = []
        yield from self.batches
        self.batches = []


def _coerced(cols: dict[str, list[Any]], schema: pa.Schema) -> pa.RecordBatch:
    """The batch, with values a column cannot hold made to fit: integers out of its range
    (an iteration of 2**63, a stamp past year 294,000) and values of another type in a number
    column become null (unknown, not a crash and not a wrapped-around number); a value of
    another type in a string column (``true`` in a JSON document) becomes its text."""
    arrays = []
    for f in schema:
        values = cols[f.name]
        try:
            arrays.append(pa.array(values, type=f.type))
            continue
        except (OverflowError, pa.ArrowInvalid, pa.ArrowTypeError):
            pass
        if pa.types.is_string(f.type):
            arrays.append(pa.array([v if v is None or isinstance(v, str) else str(v)
                                    for v in values], type=f.type))
            continue
        arrays.append(pa.array([v if _fits(v, f.type) else None for v in values],
                               type=f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _fits(v: Any, typ: pa.DataType) -> bool:
    try:
        pa.array([v], type=typ)
    except (OverflowError, pa.ArrowInvalid, pa.ArrowTypeError):
        return False
    return True


def frame_to_batch(frame: pl.DataFrame, schema: pa.Schema,
                   defaults: dict[str, Any]) -> pa.RecordBatch:
    n = frame.height
    arrays = []
    for f in schema:
        if f.name in frame.columns:
            arr = frame.get_column(f.name).to_arrow()
            if arr.type != f.type:
                arr = arr.cast(f.type)
        else:
            arr = pa.array([defaults.get(f.name)] * n, type=f.type)
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
