"""sacct output: ``--parsable2`` / ``--parsable`` text and ``--json`` documents.

Both produce one ATTEMPTS record per job row (``step`` null) and per step row (``batch``,
``extern``, ``0``, ...), plus one ``job_state`` event per job (allocation) row:
``code`` = state, ``value`` = exit code, ``ts`` = End (Start when the job has not ended),
``host`` null, ``device`` = the NodeList expression.

Decisions where reality is ambiguous:

* ``reason`` is the text after the state (``CANCELLED by 1000`` -> ``by 1000``). sacct's
  ``Reason`` column is the scheduler's pending/hold reason (``None``, ``BeginTime``); it is
  not an end reason and is not used.
* ``--duplicates`` prints one row per run of a requeued job (same JobID); each row is its own
  record. Without it sacct shows only the last run (and JSON always shows every run).
* A file without a header line (``--noheader``) cannot be mapped to columns: its rows are
  UNPARSED, and sniffing does not claim such a file.
* Plain ``sacct`` (no ``-p``/``-P``) prints fixed-width columns: a header, a line of dashes
  that gives each column's width, then the rows (src/sacct/print.c via print_fields: each
  field ``%-*s`` or ``%*s`` of its width, one space apart; a longer value is cut to the
  width with a ``+`` as its last character, ``OUT_OF_ME+``). Columns are read by those
  widths. A row whose job id, times, exit code, node count or node list were cut is
  UNPARSED (a cut time or node list is not data); a cut state is the one state it starts
  (``OUT_OF_ME+``, ``CANCELLED+``), a cut TRES gives no GPU count, a cut job name is kept
  as printed; the file's note says which columns were cut and how to print them whole
  (``--parsable2``, or ``--format=NodeList%500,...``).
* ``SubmitLine`` (Slurm >= 21.08), ``WorkDir`` and, from 23.02, ``StdOut``/``StdErr`` are kept
  on the job record (the analysis links job output files with them). A SubmitLine holding
  ``|`` splits into more fields than the header has: the surplus is joined back into it.
  ``JobIDRaw`` of an array task (``JobID`` ``2_0``, ``JobIDRaw`` ``4``) is its own job id
  (``SLURM_JOB_ID``, Slurm's ``%j``): kept as ``job_id_raw``. Checked on Slurm 22.05.
* Slurm 22.05's ``sacct --json`` (openapi/dbv0.0.38) reports plain non-zero exits as
  ``{"status": "SUCCESS", "return_code": 0}`` (exit 3 shows as 0; signals and OOM's 125
  survive). The parser keeps what the JSON says; the pipeline reconciles with ``--parsable2``.
"""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from parsers import hostlist
from parsers.base import (
    EVENT,
    NOISE,
    UNPARSED,
    DocumentParser,
    FileContext,
    LineParser,
    Parser,
    head_lines,
)
from parsers.k8s_json import load_document
from parsers.slurm_sacct_fields import (
    HEADER_DELIM,
    STATES,
    columns_note,
    cut_note,
    epoch_us,
    first_str,
    fold_by_elapsed,
    gpus_from_gres,
    gpus_from_tres,
    json_exit,
    noval,
    rows_note,
    split_delimited,
    split_exit,
    split_job_step,
    split_state,
    tres_list_gpus,
)
from parsers.timeutil import TimeError, parse_iso

_NULL_TIMES = ("", "Unknown", "None", "N/A")
_YAML_JOBS = re.compile(r"(?m)^jobs:")
_KNOWN_COLS = ("jobid", "jobidraw", "jobname", "state", "exitcode", "start", "end", "nodelist",
               "alloctres", "submit", "nnodes", "partition", "derivedexitcode", "elapsed",
               "submitline", "workdir")


_DASHES = re.compile(r"^ *-+(?: +-+)* *$")
#: columns whose cut value makes a row unreadable (fixed-width output)
_WHOLE = ("jobid", "jobidraw", "exitcode", "start", "end", "submit", "nodelist", "nnodes")
class SacctTextParser(LineParser):
    """``sacct --parsable2`` (``|``-separated) or ``--parsable`` (trailing ``|``), any column
    order or subset, with or without step rows; or plain ``sacct``'s fixed-width columns."""

    chronological: ClassVar[bool] = False  #: a table: rows in job order, not time order
    name: ClassVar[str] = "sacct"
    description: ClassVar[str] = ("sacct --parsable2 / --parsable text, or its fixed-width "
                                  "columns (header line required)")

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.cols: dict[str, int] | None = None
        self.ncols = 0
        self.trailing = False
        self.spans: list[tuple[int, int]] | None = None  #: fixed-width columns
        self._header_text: str | None = None  #: a fixed-width header, before its dashes
        self._cut: dict[str, int] = {}  #: fixed-width column -> rows where it was cut
        self.delim = "|"  #: --delimiter=X (with -p/-P), from the header line
        self._backwards: list[int] = []  #: lines of records that end before they start
        #: lines of rows that could not be read (a field too many or few: a delimiter inside
        #: a value such as a JobName with '|'; a time or node list that is no such thing)
        self._bad: list[int] = []
        self._clusters: dict[str, set[str]] = {}  #: job id -> clusters (``sacct -M``, Cluster)

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        lines = [ln for ln in head_lines(head, 6) if ln.strip()]
        if not lines:
            return 0
        if "|" in lines[0]:
            cols = [c.strip().lower() for c in lines[0].split("|")]
        elif m := HEADER_DELIM.match(lines[0]):
            cols = [c.strip().lower() for c in lines[0].split(m.group(1))]
        elif len(lines) > 1 and _DASHES.match(lines[1]):
            cols = lines[0].lower().split()
        else:
            return 0
        if "jobid" not in cols and "jobidraw" not in cols:
            return 0
        known = sum(1 for c in cols if c in _KNOWN_COLS)
        return 95 if known >= 2 else 60

    def parse_line(self, text: str, line_no: int) -> int:
        if not text.strip():
            return NOISE
        if self.cols is None and (m := HEADER_DELIM.match(text)):
            self.delim = m.group(1)
        if self.delim != "|":
            return self._delimited(text, line_no)
        if "|" not in text:
            return self._fixed(text, line_no)
        fields = text.split("|")
        if self.cols is None or (fields[0].strip().lower() in ("jobid", "jobidraw")):
            return self._header(fields)
        if self.trailing and fields and fields[-1] == "":
            fields = fields[:-1]
        sl = self.cols.get("submitline")
        if len(fields) > self.ncols and sl is not None:  # a '|' inside the submit line
            extra = len(fields) - self.ncols
            fields = [*fields[:sl], "|".join(fields[sl:sl + extra + 1]),
                      *fields[sl + extra + 1:]]
        if len(fields) != self.ncols:
            return self._unread(line_no)
        return self._emit(fields, text, line_no)

    def _emit(self, fields: list[str], text: str, line_no: int) -> int:
        try:
            self._row(fields, text, line_no)
        except Backwards:
            self._backwards.append(line_no)
            self._refresh_note()
            return UNPARSED
        except (ValueError, TimeError, hostlist.HostlistError):
            return self._unread(line_no)
        return EVENT

    def finish(self) -> None:
        """A file whose last line is no whole record was cut (analyze's ``records_cut`` says
        so): that line is not counted among the unread rows too."""
        if self._bad and self._bad[-1] == self.acct.read:
            self._bad.pop()
            self._refresh_note()
        if self.cols is not None and not len(self.records) and not self._bad \
                and not self._backwards:
            # a header alone: the jobs whose output is there have no record, and the run
            # would be rebuilt from that output with no word (fault probe M5)
            self.file_note = ("a header and no record: sacct printed no job for its "
                              "selection (check its -S/-E window, --allusers, -j)")
        shared = sorted(j for j, c in self._clusters.items() if len(c) > 1)
        if shared:  # job ids are per cluster: one id of two clusters read as a requeue (H9)
            self.file_note = "; ".join(n for n in (self.file_note, (
                f"{len(shared)} job id(s) in the records of several clusters (e.g. {shared[0]}: "
                f"{', '.join(sorted(self._clusters[shared[0]]))}): their executions are mixed "
                "as requeues; give one cluster's records (sacct -M NAME)")) if n)

    def _unread(self, line_no: int) -> int:
        """A row that is no record: counted unparsed (with its sample), and the file's note
        says so, so that analyze warns (``unread_input``): its job's execution is missing."""
        self._bad.append(line_no)
        self._refresh_note()
        return UNPARSED

    def _refresh_note(self) -> None:
        self.file_note = "; ".join(n for n in (
            columns_note(self.cols), cut_note(self._cut, _WHOLE),
            rows_note(self._backwards, "record(s) end before they start", "not read, as no "
                      "time of theirs can be trusted (check them with sacct -j JOBID)"),
            rows_note(self._bad, "row(s) could not be read", "their executions are missing; "
                      "a value holding '|' needs sacct --parsable2 --delimiter=X (rows in "
                      "unparsed_samples)")) if n) or None

    def _delimited(self, text: str, line_no: int) -> int:
        """A line of ``sacct -P --delimiter=X`` (``slurm_sacct_fields.split_delimited``)."""
        if self.cols is None or HEADER_DELIM.match(text):
            return self._header(text.split(self.delim))
        if self.trailing and text.endswith(self.delim):
            text = text[:-1]
        fields = split_delimited(text, self.delim, self.cols, self.ncols)
        if fields is None:
            return self._unread(line_no)
        return self._emit(fields, text, line_no)

    def _fixed(self, text: str, line_no: int) -> int:
        """A line of the fixed-width output: its header, its dashes, or a row."""
        low = text.lower().split()
        if "jobid" in low or "jobidraw" in low:
            self._header_text = text
            return NOISE
        if _DASHES.match(text):
            if self._header_text is None:
                return UNPARSED
            self.spans = [(m.start(), m.end()) for m in re.finditer(r"-+", text)]
            self.cols = {self._header_text[a:b].strip().lower(): i
                         for i, (a, b) in enumerate(self.spans)}
            self.ncols, self.trailing, self._header_text = len(self.spans), False, None
            self._refresh_note()
            return NOISE
        if self.spans is None or self.cols is None:
            return UNPARSED
        fields = [text[a:b] for a, b in self.spans]
        cut = [n for n, i in self.cols.items()
               if len(fields[i]) == self.spans[i][1] - self.spans[i][0]
               and fields[i].endswith("+")]
        for n in cut:
            self._cut[n] = self._cut.get(n, 0) + 1
        self._refresh_note()
        if any(n in _WHOLE for n in cut):
            return UNPARSED
        for n in cut:  # a cut TRES says nothing sure of the GPUs; a cut state, its start
            i = self.cols[n]
            if n in ("alloctres", "allocgres"):
                fields[i] = ""
            elif n == "state":
                base = fields[i].strip()[:-1].split(" ")[0]
                known = [k for k in STATES if k.startswith(base)]
                if len(known) != 1:
                    return UNPARSED
                fields[i] = known[0]
        return self._emit(fields, text, line_no)

    def _header(self, fields: list[str]) -> int:
        names = [f.strip().lower() for f in fields]
        if "jobid" not in names and "jobidraw" not in names:
            return UNPARSED
        self.trailing = names[-1] == ""
        if self.trailing:
            names = names[:-1]
        self.cols = {n: i for i, n in enumerate(names)}
        self.ncols = len(names)
        self._refresh_note()
        return NOISE

    def _get(self, fields: list[str], col: str) -> str | None:
        assert self.cols is not None
        i = self.cols.get(col)
        return fields[i].strip() if i is not None else None

    def _time(self, text: str | None) -> int | None:
        if text is None or text in _NULL_TIMES:
            return None
        if text.isdigit() and len(text) >= 9:  # SLURM_TIME_FORMAT=%s: seconds since the epoch
            return int(text) * 1_000_000
        return parse_iso(text, self.ctx.tz)[0]

    def _row(self, f: list[str], text: str, line_no: int) -> None:
        jobid = self._get(f, "jobid") or self._get(f, "jobidraw")
        if not jobid:
            raise ValueError("row without a job id")
        job, step = split_job_step(jobid)
        if step is None and (cluster := self._get(f, "cluster")):
            self._clusters.setdefault(job, set()).add(cluster)
        state = reason = None
        st = self._get(f, "state")
        if st:
            state, reason = split_state(st)
        exit_code, signal = split_exit(self._get(f, "exitcode") or "")
        nodelist = self._get(f, "nodelist")
        nodes = hostlist.expand(nodelist) if nodelist is not None else None
        nn = self._get(f, "nnodes")
        tres = self._get(f, "alloctres")
        gres = self._get(f, "allocgres")
        gpus = gpus_from_tres(tres) if tres else (gpus_from_gres(gres) if gres else None)
        name = self._get(f, "jobname") or None
        start_text, end_text = self._get(f, "start"), self._get(f, "end")
        start, end = fold_by_elapsed(self._time(start_text), self._time(end_text), start_text,
                                     end_text, self._get(f, "elapsed"), self.ctx.tz)
        _check_order(start, end)
        raw = self._get(f, "jobidraw")
        raw_job = split_job_step(raw)[0] if raw else None
        extra = {"job_id_raw": raw_job if raw_job and raw_job != job else None,
                 "submit_line": self._get(f, "submitline") or None,
                 "work_dir": self._get(f, "workdir") or None,
                 "std_out": self._get(f, "stdout") or None,
                 "std_err": self._get(f, "stderr") or None} if step is None else {}
        self.records.add(job_id=job, step=step, name=name, **extra,
                         run_hint=name if step is None else None, state=state, reason=reason,
                         exit_code=exit_code, signal=signal,
                         submit=self._time(self._get(f, "submit")), start=start, end=end,
                         nodes=nodes, node_count=int(nn) if nn and nn.isdigit() else None,
                         gpus=gpus, line_no=line_no)
        if step is None:
            ts = end if end is not None else start
            self.events.add(ts=ts, ts_flag="assumed_tz" if ts is not None else "missing",
                            host_from="unknown", kind="job_state", job_id=job, code=state,
                            value=float(exit_code) if exit_code is not None else None,
                            device=nodelist or None, message=text, line_no=line_no)


class SacctJsonParser(DocumentParser):
    """``sacct --json`` or ``--yaml`` (and slurmrestd ``/slurmdb/.../jobs``): Slurm 22.05
    (openapi dbv0.0.38) and 23.02..24.x (data_parser v0.0.39..v0.0.41) shapes. One unit per
    job."""

    name: ClassVar[str] = "sacct_json"
    description: ClassVar[str] = "sacct --json or --yaml document (Slurm 22.05 .. 24.x)"

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        h = head.lstrip()
        if h.startswith("{"):
            if '"jobs"' not in head:
                return 0
            ours = "openapi/dbv0.0." in head or "openapi/slurmdbd" in head \
                or '"allocation_nodes"' in head
            return 95 if ours else 0
        # sacct --yaml (21.08+): the same tree through libyaml (data_parser's YAML serializer)
        if _YAML_JOBS.search(head) and ("openapi/" in head or "allocation_nodes:" in head):
            return 95
        return 0

    def parse_document(self, data: bytes) -> None:
        doc = load_document(data)
        jobs = doc.get("jobs") if isinstance(doc, dict) else None
        if not isinstance(jobs, list):
            raise json.JSONDecodeError("no 'jobs' list in the document", "", 0)
        for i, job in enumerate(jobs, start=1):
            status = UNPARSED
            if isinstance(job, dict):
                try:
                    self._job(job, i)
                    status = EVENT
                except (ValueError, TypeError, KeyError, hostlist.HostlistError):
                    status = UNPARSED
            self.acct.note(status, i, json.dumps(job)[:500])

    def _job(self, job: dict[str, Any], rec: int) -> None:
        job_id = _json_job_id(job)
        state = first_str((job.get("state") or {}).get("current"))
        exit_code, signal = json_exit(job.get("exit_code"))
        t = job.get("time") or {}
        start, end = epoch_us(t.get("start")), epoch_us(t.get("end"))
        _check_order(start, end)
        nodes_expr = job.get("nodes") if isinstance(job.get("nodes"), str) else None
        name = job.get("name") or None
        kill_user = job.get("kill_request_user")
        reason = f"by {kill_user}" if state == "CANCELLED" and kill_user else None
        restarts = noval(job.get("restart_cnt")) if "restart_cnt" in job else None
        steps = job.get("steps") or []
        raw = noval(job.get("job_id"))
        self.records.add(job_id=job_id, step=None, name=name, run_hint=name, state=state,
                         job_id_raw=str(raw) if raw is not None and str(raw) != job_id
                         else None,
                         submit_line=_opt_str(job.get("submit_line")),
                         work_dir=_opt_str(job.get("working_directory")),
                         std_out=_opt_str(job.get("stdout_expanded") or job.get("stdout")),
                         std_err=_opt_str(job.get("stderr_expanded") or job.get("stderr")),
                         reason=reason, exit_code=exit_code, signal=signal,
                         submit=epoch_us(t.get("submission")), start=start, end=end,
                         nodes=hostlist.expand(nodes_expr),
                         node_count=noval(job.get("allocation_nodes")),
                         gpus=tres_list_gpus((job.get("tres") or {}).get("allocated")),
                         restart_count=restarts, line_no=rec)
        for s in steps:
            self._step(job_id, s, rec)
        ts = end if end is not None else start
        self.events.add(ts=ts, ts_flag="exact" if ts is not None else "missing",
                        host_from="unknown", kind="job_state", job_id=job_id, code=state,
                        value=float(exit_code) if exit_code is not None else None,
                        device=nodes_expr or None,
                        message=f"{job_id} {name} {state} exit_code={exit_code} "
                                f"signal={signal} nodes={nodes_expr}",
                        line_no=rec)

    def _step(self, job_id: str, s: dict[str, Any], rec: int) -> None:
        sid = (s.get("step") or {}).get("id")
        step = str(sid).rsplit(".", 1)[-1] if sid is not None else None
        nodes = s.get("nodes") or {}
        node_list = nodes.get("list")
        if not isinstance(node_list, list):
            node_list = hostlist.expand(nodes.get("range"))
        exit_code, signal = json_exit(s.get("exit_code"))
        t = s.get("time") or {}
        self.records.add(job_id=job_id, step=step, name=(s.get("step") or {}).get("name"),
                         state=first_str(s.get("state")), exit_code=exit_code, signal=signal,
                         start=epoch_us(t.get("start")), end=epoch_us(t.get("end")),
                         nodes=[str(n) for n in node_list], node_count=noval(nodes.get("count")),
                         gpus=tres_list_gpus((s.get("tres") or {}).get("allocated")),
                         line_no=rec)


class Backwards(ValueError):
    """A record that ends before it starts."""


def _check_order(start: int | None, end: int | None) -> None:
    """A record that ends before it starts cannot be placed in time: it is not read (the
    line is counted unparsed, with a sample, and the file's note says why), so its job's
    attempts come from its output and the analysis says so (``no_record``), rather than from
    times that cannot both be right."""
    if start is not None and end is not None and end < start:
        raise Backwards("End before Start")


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _json_job_id(job: dict[str, Any]) -> str:
    """``job_id`` as sacct's JobID prints it: array task ``<array job>_<task>``, het component
    ``<het leader>+<offset>``, else the plain id."""
    arr = job.get("array") or {}
    arr_job = noval(arr.get("job_id"))
    task = noval(arr.get("task_id"))
    if arr_job and task is not None:
        return f"{arr_job}_{task}"
    het = job.get("het") or {}
    het_job = noval(het.get("job_id"))
    off = noval(het.get("job_offset"))
    if het_job and off is not None:
        return f"{het_job}+{off}"
    jid = noval(job.get("job_id"))
    if jid is None:
        raise ValueError("job without job_id")
    return str(jid)


PARSERS: list[type[Parser]] = [SacctTextParser, SacctJsonParser]
