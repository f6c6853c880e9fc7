"""Arrow schemas: the one contract between the parsers and the pipeline.

Every field carries a description (Arrow field metadata key ``description``), so the
Parquet files and the DuckDB tables explain themselves.

Time: every timestamp is ``timestamp[us, tz=UTC]``. How a timestamp was obtained is in
``ts_flag`` (see ``TS_FLAGS``), so a reader can tell an exact stamp from an inferred one.
"""

from __future__ import annotations

import pyarrow as pa

UTC_US = pa.timestamp("us", tz="UTC")

#: How an event's timestamp was obtained.
TS_FLAGS: dict[str, str] = {
    "exact": "the line carries a full timestamp with its UTC offset",
    "assumed_tz": "the line carries date and time without a zone; --tz (default UTC) applied",
    "inferred_year": "the line has no year (RFC 3164 syslog, journalctl short); year from the "
    "file's mtime with rollover, and --tz applied",
    "inherited": "the line has no timestamp; the last timestamp seen earlier in the file is used",
    "uptime": "only a kernel uptime stamp [seconds.micros]; ts is null until anchored",
    "uptime_anchored": "kernel uptime stamp anchored to wall time by another line of the same "
    "host that carries both",
    "relative": "an age relative to when the listing was taken (kubectl 'LAST SEEN'); anchored "
    "to the file's mtime",
    "missing": "no timestamp could be derived",
}


def _f(name: str, typ: pa.DataType, description: str, nullable: bool = True) -> pa.Field:
    return pa.field(name, typ, nullable=nullable, metadata={"description": description})


EVENTS = pa.schema(
    [
        _f("ts", UTC_US, "when the line says it happened, UTC, microseconds (null if unknown)"),
        _f("ts_flag", pa.string(), "how ts was obtained: one of parsers.schema.TS_FLAGS", False),
        _f("uptime_s", pa.float64(), "kernel monotonic uptime in seconds, when the line has it"),
        _f("host", pa.string(), "host the line is about or was logged on (null: unknown)"),
        _f("host_from", pa.string(), "where host came from: line, path, record or unknown", False),
        _f("source", pa.string(), "parser that produced the row (e.g. kernel, slurmctld)", False),
        _f("format", pa.string(), "format variant within the source (e.g. dmesg-raw)", False),
        _f("kind", pa.string(), "what the line says (xid, nccl_warn, iteration, job_end, ...)",
           False),
        _f("job_id", pa.string(), "scheduler job id / pod uid the line belongs to, if known"),
        _f("rank", pa.int32(), "training rank (global) the line came from, if known"),
        _f("code", pa.string(), "Xid number, exit code, NCCL error name, Slurm state, ..."),
        _f("iteration", pa.int64(), "training iteration/step the line refers to"),
        _f("value", pa.float64(),
           "numeric payload: ms per iteration for progress, seconds for durations, ..."),
        _f("device", pa.string(), "device: PCI bus id, GPU index, IB device, NIC ..."),
        _f("message", pa.string(), "the line's message text (without timestamp prefix); null "
           "for iteration and progress_bar rows, the bulk of a job log, whose fields are "
           "extracted (file/line_no locate the line)"),
        _f("file", pa.string(), "file the line was read from", False),
        _f("line_no", pa.int64(), "1-based line number in that file (record number for JSON)",
           False),
    ]
)

ATTEMPTS = pa.schema(
    [
        _f("source", pa.string(), "parser: sacct, sacct_json, k8s_pod, pytorchjob, ...", False),
        _f("job_id", pa.string(), "scheduler job id (array jobs as 123_4) or pod uid", False),
        _f("step", pa.string(), "Slurm step (batch, extern, 0, ...) or null for the allocation"),
        _f("name", pa.string(), "job name (Slurm JobName, pod / PyTorchJob name)"),
        _f("run_hint", pa.string(), "name that links attempts into a run (PyTorchJob, JobName)"),
        _f("state", pa.string(), "end state, upper case (COMPLETED, FAILED, NODE_FAIL, ...)"),
        _f("reason", pa.string(), "extra state text (CANCELLED by 1000, OOMKilled, Evicted ...)"),
        _f("exit_code", pa.int32(), "process exit code, if known"),
        _f("signal", pa.int32(), "terminating signal number, if any"),
        _f("submit", UTC_US, "submission time"),
        _f("start", UTC_US, "start of this execution"),
        _f("end", UTC_US, "end of this execution (null while running)"),
        _f("nodes", pa.list_(pa.string()), "hosts the execution ran on (expanded hostlist)"),
        _f("node_count", pa.int32(), "number of nodes"),
        _f("gpus", pa.int32(), "GPUs allocated in total"),
        _f("restart_count", pa.int32(), "requeue / restart count, if the record carries it"),
        _f("job_id_raw", pa.string(), "the execution's own numeric id when job_id differs (an "
           "array task's JobIDRaw, which is its SLURM_JOB_ID and Slurm's %j)"),
        _f("submit_line", pa.string(), "the submission command (sacct SubmitLine)"),
        _f("work_dir", pa.string(), "working directory (sacct WorkDir, scontrol WorkDir=)"),
        _f("std_out", pa.string(), "output path as the scheduler records it (scontrol StdOut=, "
           "sacct StdOut); Slurm's % patterns may be left unexpanded"),
        _f("std_err", pa.string(), "error path as the scheduler records it (StdErr)"),
        _f("dependency", pa.string(), "dependency expression (scontrol Dependency=, e.g. "
           "afterany:123(unfulfilled))"),
        _f("file", pa.string(), "file the record was read from", False),
        _f("line_no", pa.int64(), "line (text) or record number (JSON) in that file", False),
    ]
)

LINE_ACCOUNTING = pa.schema(
    [
        _f("file", pa.string(), "file read", False),
        _f("source", pa.string(), "parser used (unknown: no parser recognised the file)", False),
        _f("unit", pa.string(), "line for text files, record for JSON documents", False),
        _f("read", pa.int64(), "lines (records) read", False),
        _f("events", pa.int64(), "of which produced or contributed to an event/record", False),
        _f("irrelevant", pa.int64(), "of which were recognised and carry no signal", False),
        _f("unparsed", pa.int64(), "of which no rule recognised (samples kept)", False),
        _f("bytes", pa.int64(), "bytes read (after decompression)", False),
        _f("note", pa.string(), "why a file was not (fully) read: not a log, quarantined "
           "(corrupt compressed data), duplicate, grew while read, lines cut"),
        _f("duplicate_of", pa.string(), "the earlier input with the same content (this one "
           "was not read again)"),
    ]
)

UNPARSED = pa.schema(
    [
        _f("file", pa.string(), "file", False),
        _f("source", pa.string(), "parser that could not read the line", False),
        _f("line_no", pa.int64(), "line number", False),
        _f("text", pa.string(), "the line (truncated to 500 characters)", False),
    ]
)


def describe(schema: pa.Schema) -> list[tuple[str, str, str]]:
    """(name, type, description) for every field: used by docs and tests."""
    out = []
    for f in schema:
        meta = f.metadata or {}
        out.append((f.name, str(f.type), meta.get(b"description", b"").decode()))
    return out
