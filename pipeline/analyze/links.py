"""Which job wrote which output file: links made from evidence, each saying how it was made.

Users name job output as they like (``%x-%j.out``, ``%j.log``, ``logs/%x/%A_%a.out``,
``train_%N_%j.txt``, torchrun's ``<log-dir>/<run>_<x>/attempt_N/<rank>/stdout.log``, NeMo's
``log-<name>_<id>.out``), so one file-name convention is not enough. ``link_outputs``
builds the table ``output_links(file, job_id, method, detail)`` for every job-output file
(source ``joblog``, or an unrecognised ``.out/.err/.log/.txt``), trying in this order and
keeping the first method that names any job the scheduler records know:

1. ``pattern``: the user's ``--job-output PATTERN`` (Slurm's ``%x %j %A %a %N %u ...``,
   ``slurmpat.py``), expanded for every known job -- an override;
2. ``path``: a job id in the file's name or its two parent directories (``1234``, an array
   task ``12_3``, or an array task's own id, which is its ``%j``);
3. ``content``: job ids the file's own lines name (``SLURM_JOB_ID=N``, Slurm's ``*** JOB N
   ... CANCELLED ...`` banner, ``Detected 1 oom-kill event(s) in StepId=N``), and the other
   jobs of their name whose executions hold its lines (a chain appending to one file: the
   banner names only the jobs Slurm cancelled);
4. ``record``: the output path the scheduler recorded (``scontrol`` StdOut=/StdErr=, sacct
   StdOut/StdErr, or the ``-o``/``-e`` of sacct's SubmitLine with its WorkDir), expanded;
5. ``name``: the job name as a directory or file-name stem (torchrun per-rank directories
   under ``--log-dir logs/$SLURM_JOB_NAME``);
6. ``window``: the file's stamped lines lie inside the executions of exactly one job (and
   on its nodes, when the path names a host).

When a method names several jobs, those whose name is in the path are preferred, then those
whose executions hold 2% of the file's own time stamps, or 3 of them when the candidates ran
one after another (a file appended across a chain of jobs keeps every job it holds lines of;
each line then goes to the execution whose time holds it). A
file no method links, or links ambiguously, is listed in ``output_unlinked(file, reason,
candidates)`` so that warnings can name it.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import duckdb
import pyarrow as pa

from parsers.paths import host_from_path, job_from_path
from pipeline.analyze.slurmpat import JobNames, path_regex, submit_options

SLACK_S = 2.0  #: a file's span may reach this much outside a job's execution (whole seconds)
WINDOW_END_S = 30.0  #: lines printed while a job is torn down, after the scheduler's end
#: a job keeps a file several could own when it holds this share of the lines that fall in
#: any of them (a chain's appended file: every job; a rank's log: the job it ran in)
SHARE = 0.02
#: ... or, when the candidates ran one after another (a chain appending to one file: 416 of a
#: 421-attempt campaign's jobs each held under 2% of its lines), this many lines of its own
CHAIN_LINES = 3
#: a number standing alone in a name (not part of a word such as node17 or 7tfk0q61)
_TOKEN = re.compile(r"(?<![0-9A-Za-z])(\d+)(?:_(\d+))?(?![0-9A-Za-z])")
#: torchrun's per-restart and per-rank directories (attempt_0/3/stdout.log): no job ids
_TORCHRUN_DIR = re.compile(r"^attempt_\d+$")
_OUTPUT_EXT = (".out", ".err", ".log", ".txt")
_CONTENT_KINDS = ("job_id_banner", "slurm_job_cancelled", "slurm_job_failed",
                  "slurm_stepd_terminated", "oom_event")


@dataclass(eq=False)
class Job:
    job_id: str
    raw: set[str] = field(default_factory=set)
    name: str | None = None
    #: its nodes that an output file's path names (all that ``_window`` asks about: node
    #: lists of thousands of hosts are not brought over whole)
    nodes: set[str] = field(default_factory=set)
    any_nodes: bool = False  #: the records list any node at all
    windows: list[tuple[float, float]] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)  #: recorded output patterns
    work_dir: str | None = None


@dataclass
class OutFile:
    file: str
    span: tuple[float, float] | None = None  #: own stamps (epoch s)
    content_ids: set[str] = field(default_factory=set)


def _jobs(con: duckdb.DuckDBPyConnection, hosts: set[str]) -> dict[str, Job]:
    """The jobs of the scheduler records; ``hosts``: the hosts output paths name."""
    jobs: dict[str, Job] = {}
    for job_id, name, any_nodes, start, end in con.execute(
            "SELECT job_id, name, len(nodes) > 0, epoch(start), "
            "epoch(coalesce(\"end\", start)) FROM attempts_linked WHERE source <> 'inferred'"
            ).fetchall():
        j = jobs.setdefault(job_id, Job(job_id, {job_id}, name))
        j.any_nodes = j.any_nodes or bool(any_nodes)
        j.windows.append((float(start), float(end)))
    if hosts:
        for job_id, host in con.execute(
                "SELECT DISTINCT job_id, h FROM (SELECT job_id, unnest(nodes) AS h FROM "
                "attempts_linked WHERE source <> 'inferred') WHERE h IN (SELECT "
                "unnest($hosts))", {"hosts": sorted(hosts)}).fetchall():
            jobs[job_id].nodes.add(host)
    for job_id, raw, out, err, wd, line in con.execute(
            "SELECT job_id, job_id_raw, std_out, std_err, work_dir, submit_line FROM attempts "
            "WHERE step IS NULL").fetchall():
        found = jobs.get(job_id)
        if found is None:
            continue
        j = found
        if raw:
            j.raw.add(raw)
        opts = submit_options(line)
        j.work_dir = j.work_dir or wd or opts.get("chdir")
        for p in (out, err, opts.get("output"), opts.get("error")):
            if p and p not in j.outputs:
                j.outputs.append(p)
    return jobs


def _files(con: duckdb.DuckDBPyConnection) -> dict[str, OutFile]:
    files: dict[str, OutFile] = {}
    for (f,) in con.execute(
            "SELECT file FROM line_accounting WHERE source = 'joblog' OR "
            "(source IN ('unknown', 'text') AND coalesce(note, '') NOT LIKE 'binary file%' AND ("
            + " OR ".join(f"file LIKE '%{e}'" for e in _OUTPUT_EXT) + "))"
            ).fetchall():
        files[f] = OutFile(f)
    for f, t0, t1 in con.execute(
            "SELECT file, min(epoch(ts)), max(epoch(ts)) FROM events WHERE source = 'joblog' "
            "AND ts_flag IN ('exact', 'assumed_tz') GROUP BY file").fetchall():
        if f in files and t0 is not None:
            files[f].span = (float(t0), float(t1))
    kinds = ", ".join(f"'{k}'" for k in _CONTENT_KINDS)
    for f, jid in con.execute(
            f"SELECT DISTINCT file, job_id FROM events WHERE source = 'joblog' AND kind IN "
            f"({kinds}) AND job_id IS NOT NULL").fetchall():
        if f in files and jid != job_from_path(f):
            files[f].content_ids.add(jid)
    return files


def _lines_in(con: duckdb.DuckDBPyConnection, f: OutFile, jobs: list[Job]) -> list[int]:
    """How many of the file's own-stamped lines each job's executions hold (stamps and sacct
    times are whole seconds: a line stamped in the second a job ends is that job's).

    A line that two candidates' executions hold -- the second in which one job of a name ended
    and the next began, as a requeued torchrun's does -- counts for neither, unless no line is
    held by one job alone: otherwise the new job's first lines, a few percent of a short rank
    log, made the old job an owner of its files too (seen in a real-Slurm campaign)."""
    conds = [" OR ".join(f"(t >= {s:.3f} AND t <= {e + 1.0:.3f})" for s, e in j.windows)
             or "false" for j in jobs]
    alone = [f"({c}) AND NOT ({' OR '.join(o for k, o in enumerate(conds) if k != i)})"
             if len(conds) > 1 else c for i, c in enumerate(conds)]
    cols = ", ".join(f"count(*) FILTER ({c})" for c in [*conds, *alone])
    row = con.execute(
        f"SELECT {cols} FROM (SELECT epoch(ts) AS t FROM events WHERE "
        "file = ? AND source = 'joblog' AND ts_flag IN ('exact', 'assumed_tz'))",
        [f.file]).fetchall()
    got = [int(x) for x in row[0]] if row else [0] * (2 * len(jobs))
    held, only = got[:len(jobs)], got[len(jobs):]
    return only if sum(only) else held


def _by_path(f: OutFile, by_id: dict[str, list[Job]]) -> list[Job]:
    """Job ids standing alone in the file name, else in the nearest parent directory that
    has one (up to five up; torchrun's attempt_N/<rank> directories are skipped)."""
    p = PurePath(f.file)
    parts = [p.name, *reversed(p.parent.parts[-5:])]  # nearest first
    for k, part in enumerate(parts):
        if _TORCHRUN_DIR.match(part):
            continue
        if k >= 1 and part.isdigit() and k + 1 < len(parts) and _TORCHRUN_DIR.match(
                parts[k + 1]):
            continue  # the rank directory under attempt_N
        found: list[Job] = []
        for a, b in _TOKEN.findall(part):
            # an array task's name (%A_%a) names that task, not the ids of its parts
            toks = [f"{a}_{b}"] if b and f"{a}_{b}" in by_id else [a, b] if b else [a]
            for tok in toks:
                for j in by_id.get(tok, []):
                    if j not in found:
                        found.append(j)
        if found:
            return found
    return []


def _by_record(f: OutFile, jobs: dict[str, Job]) -> list[Job]:
    found = []
    for j in jobs.values():
        names = JobNames(j.job_id, min(j.raw - {j.job_id}, default=j.job_id), j.name)
        if any(path_regex(o, names, j.work_dir).search(f.file) for o in j.outputs):
            found.append(j)
    return found


def _by_name(f: OutFile, by_name: dict[str, list[Job]]) -> list[Job]:
    p = PurePath(f.file)
    words = {*p.parent.parts[-6:], p.stem, p.name}
    return [j for w in words for j in by_name.get(w, [])]


def _window(f: OutFile, jobs: dict[str, Job]) -> list[Job]:
    """The one job whose executions hold the file's first and last stamped lines (a file
    appended across requeues spans several executions of its job), on its nodes when the
    path names a host."""
    if f.span is None:
        return []
    host = host_from_path(f.file)
    if host is not None and not any(host in j.nodes for j in jobs.values()):
        host = None  # a directory named like a host (run2/) that is no node of these jobs
    t0, t1 = f.span

    def inside(t: float, j: Job) -> bool:
        return any(s - SLACK_S <= t <= e + WINDOW_END_S for s, e in j.windows)

    hits = [j for j in jobs.values() if inside(t0, j) and inside(t1, j)
            and (host is None or not j.any_nodes or host in j.nodes)]
    return hits if len(hits) == 1 else []


def _one_after_another(jobs: list[Job]) -> bool:
    """No execution of one job overlaps one of another: a chain (``--open-mode=append``
    into one file), whose every job with lines of its own in the file wrote them."""
    ws = sorted((s, e, k) for k, j in enumerate(jobs) for s, e in j.windows)
    return all(b[0] >= a[1] or a[2] == b[2] for a, b in itertools.pairwise(ws))


def _resolve(con: duckdb.DuckDBPyConnection, f: OutFile, cands: list[Job]
             ) -> tuple[list[Job], str]:
    """Narrow several candidates: by the job's name in the path, then by time: the jobs
    whose executions hold at least ``SHARE`` of the file's stamped lines that fall in any
    (``CHAIN_LINES`` when their executions do not overlap)."""
    if len(cands) <= 1:
        return cands, ""
    named = [j for j in cands if j.name and j.name in f.file]
    if named:
        cands = named
    if f.span is None:
        return cands, ""
    counts = _lines_in(con, f, cands)
    inside = sum(counts)
    least = min(CHAIN_LINES, SHARE * inside) if _one_after_another(cands) else SHARE * inside
    timed = [j for j, n in zip(cands, counts, strict=True) if n and n >= least]
    if not timed:
        return [], "its time stamps fall in none of the candidate jobs' executions"
    return timed, ""


def link_outputs(con: duckdb.DuckDBPyConnection, patterns: list[str] | None = None
                 ) -> dict[str, int]:
    """Create ``output_links`` and ``output_unlinked`` (see module docstring). Returns, per
    pattern, how many job-output files it matches for some job (0: a pattern that names
    nothing here, which the CLI warns about)."""
    files = _files(con)
    jobs = _jobs(con, {h for f in files if (h := host_from_path(f)) is not None})
    by_id: dict[str, list[Job]] = defaultdict(list)
    by_name: dict[str, list[Job]] = defaultdict(list)
    for j in jobs.values():
        for i in j.raw:
            by_id[i].append(j)
        if j.name:
            by_name[j.name].append(j)
    rx = [(p, {j.job_id: path_regex(p, JobNames(j.job_id, min(j.raw - {j.job_id},
                                                                  default=j.job_id), j.name))
               for j in jobs.values()}) for p in patterns or []]
    matched = {p: sum(any(r.search(f) for r in m.values()) for f in files) for p, m in rx}
    links: list[dict[str, Any]] = []
    unlinked: list[dict[str, Any]] = []
    picked: dict[str, tuple[OutFile, list[Job], str]] = {}
    for f in sorted(files.values(), key=lambda x: x.file):
        chosen: list[Job] = []
        method, note = "", ""
        steps: list[tuple[str, Any]] = [
            ("pattern", lambda f=f: [jobs[i] for _, m in rx for i, r in m.items()
                                     if r.search(f.file)]),
            ("path", lambda f=f: _by_path(f, by_id)),
            ("content", lambda f=f: [jobs[i] for i in sorted(f.content_ids) if i in jobs]
             or [j for i in sorted(f.content_ids) for j in by_id.get(i, [])]),
            ("record", lambda f=f: _by_record(f, jobs)),
            ("name", lambda f=f: _by_name(f, by_name)),
            ("window", lambda f=f: _window(f, jobs)),
        ]
        tried: list[str] = []
        for name, fn in steps:
            cands = list(dict.fromkeys(fn()))
            if not cands:
                continue
            chosen, note = _resolve(con, f, cands)
            method = name
            if chosen and name == "content" and f.span is not None:
                chosen = _chain_of(con, f, chosen, by_name)
            if chosen:
                break
            tried.append(f"{name}: {', '.join(j.job_id for j in cands)} ({note})")
        if chosen:
            picked[f.file] = (f, chosen, method)
        else:
            unlinked.append({"file": f.file, "reason": "; ".join(tried) or
                             "no job id in its name or lines, no scheduler record names "
                             "it, and its time fits no single job",
                             "first_ts": f.span[0] if f.span else None,
                             "last_ts": f.span[1] if f.span else None})
    _by_siblings(picked)
    for f, chosen, method in picked.values():
        links += [{"file": f.file, "job_id": j.job_id, "method": method,
                   "detail": _detail(method, f, j)} for j in chosen]
    _put(con, "output_links", links, pa.schema([("file", pa.string()), ("job_id", pa.string()),
                                                ("method", pa.string()),
                                                ("detail", pa.string())]))
    _put(con, "output_unlinked", unlinked, pa.schema([
        ("file", pa.string()), ("reason", pa.string()), ("first_ts", pa.float64()),
        ("last_ts", pa.float64())]))
    return matched


def _chain_of(con: duckdb.DuckDBPyConnection, f: OutFile, chosen: list[Job],
              by_name: dict[str, list[Job]]) -> list[Job]:
    """The jobs a file's lines name, and the others of their name whose executions hold its
    lines: Slurm prints its ``*** JOB N ... CANCELLED ***`` banner only for the jobs it
    cancels, so a chain appending to one file (``--open-mode=append``) names a few of its
    jobs (4 of 19 in the demo campaign) and holds the lines of all."""
    kin = list(dict.fromkeys(j for c in chosen if c.name for j in by_name.get(c.name, [])
                             if j not in chosen))
    if not kin:
        return chosen
    more, _ = _resolve(con, f, [*chosen, *kin])
    return [*chosen, *(j for j in more if j not in chosen)]


def _by_siblings(picked: dict[str, tuple[OutFile, list[Job], str]]) -> None:
    """A file without time stamps that several jobs could own (a torchrun rank's empty
    stderr.log) takes the job of the stamped files beside it, when they agree: its own
    directory first, then its parent's (up to two levels)."""
    for name, (f, chosen, method) in list(picked.items()):
        if len(chosen) < 2 or f.span is not None:
            continue
        for up in (1, 2):
            base = PurePath(name).parents[up - 1]
            near = {id(c[0]): c[0] for o, (g, c, _) in picked.items()
                    if o != name and len(c) == 1 and g.span is not None
                    and PurePath(o).is_relative_to(base)}
            if near:
                if len(near) == 1:
                    picked[name] = (f, list(near.values()), method)
                break


def _detail(method: str, f: OutFile, j: Job) -> str:
    if method == "record":
        return "scheduler record: " + "; ".join(j.outputs)
    if method == "content":
        return "the file names job " + ", ".join(sorted(f.content_ids))
    if method == "name":
        return f"job name {j.name} in the path, time inside its executions"
    if method == "window":
        return "its time stamps lie inside this job's executions only"
    if method == "path":
        return "job id in the file's path"
    return "--job-output pattern"


def _put(con: duckdb.DuckDBPyConnection, name: str, rows: list[dict[str, Any]],
         schema: pa.Schema) -> None:
    con.register("tmp_links", pa.Table.from_pylist(rows, schema))
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM tmp_links")
    con.unregister("tmp_links")
