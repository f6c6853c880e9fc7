"""Field conversions shared by the sacct text and JSON parsers.

Sources: sacct(1) (field list, ``--parsable``/``--parsable2``), Slurm's
src/sacct/print.c, and the openapi/data_parser job schemas (dbv0.0.38 in 22.05,
data_parser v0.0.39..v0.0.41 in 23.02..24.x), checked on real output (see NOTES.md).
"""

from __future__ import annotations

import re
from datetime import tzinfo
from typing import Any

from parsers.base import head_lines
from parsers.timeutil import later_fold_us

_STEP_ID = re.compile(r"^(\d+(?:_(?:\d+|\[[^\]]*\]))?(?:\+\d+)?)(?:\.(\w+))?$")
_STATE = re.compile(r"^([A-Z_]+)\+?(?:\s+(.*))?$")
_EXIT = re.compile(r"^(\d+):(\d+)$")


def split_job_step(jobid: str) -> tuple[str, str | None]:
    """sacct JobID -> (job, step): ``1234`` -> (1234, None); ``1234.batch`` -> (1234, batch);
    ``1234_5.0`` -> (1234_5, 0); ``1234+0.extern`` -> (1234+0, extern)."""
    m = _STEP_ID.match(jobid)
    if not m:
        raise ValueError(f"not a Slurm job id: {jobid!r}")
    return m.group(1), m.group(2)


def split_state(text: str) -> tuple[str, str | None]:
    """``CANCELLED by 1000`` -> (CANCELLED, "by 1000"); ``COMPLETED`` -> (COMPLETED, None)."""
    m = _STATE.match(text.strip())
    if not m:
        raise ValueError(f"not a Slurm state: {text!r}")
    return m.group(1), (m.group(2) or None)


def split_exit(text: str) -> tuple[int | None, int | None]:
    """sacct ``ExitCode`` ``1:0`` -> (1, 0); ``0:9`` -> (0, 9); empty -> (None, None)."""
    text = text.strip()
    if not text:
        return None, None
    m = _EXIT.match(text)
    if not m:
        raise ValueError(f"not an exit code: {text!r}")
    return int(m.group(1)), int(m.group(2))


def gpus_from_tres(text: str) -> int | None:
    """GPUs in a TRES string (``AllocTRES``): ``gres/gpu=8`` wins; otherwise the typed
    entries (``gres/gpu:h100=4``) are summed. None when no GPU entry is present.

    Slurm lists both ``gres/gpu=N`` and ``gres/gpu:<type>=N`` when the type is tracked
    (AccountingStorageTRES=gres/gpu,gres/gpu:h100), so adding them up would double count."""
    total: int | None = None
    typed = 0
    seen_typed = False
    for item in text.split(","):
        key, _, val = item.partition("=")
        if key == "gres/gpu":
            total = _count(val)
        elif key.startswith("gres/gpu:"):
            seen_typed = True
            typed += _count(val) or 0
    if total is not None:
        return total
    return typed if seen_typed else None


def gpus_from_gres(text: str) -> int | None:
    """Old ``AllocGRES`` form: ``gpu:8`` / ``gpu:h100:8`` (comma separated)."""
    found = None
    for item in text.split(","):
        parts = item.split("(")[0].split(":")
        if parts[0] == "gpu" and len(parts) >= 2 and parts[-1].isdigit():
            found = (found or 0) + int(parts[-1])
    return found


def _count(val: str) -> int | None:
    val = val.strip()
    return int(val) if val.isdigit() else None


def tres_list_gpus(items: Any) -> int | None:
    """GPUs from a JSON ``tres.allocated`` list (``{"type": "gres", "name": "gpu", "count": 8}``
    and ``"name": "gpu:h100"``), with the same no-double-count rule as ``gpus_from_tres``."""
    if not isinstance(items, list):
        return None
    total: int | None = None
    typed = 0
    seen_typed = False
    for it in items:
        if not isinstance(it, dict) or it.get("type") != "gres":
            continue
        name = it.get("name") or ""
        count = it.get("count")
        if not isinstance(count, int) or count < 0:
            continue
        if name == "gpu":
            total = count
        elif name.startswith("gpu:"):
            seen_typed = True
            typed += count
    if total is not None:
        return total
    return typed if seen_typed else None


def noval(v: Any) -> int | None:
    """A JSON number that may be wrapped: ``5`` or ``{"set": true, "infinite": false,
    "number": 5}`` (data_parser v0.0.39+). Unset / infinite -> None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v)
    if isinstance(v, dict):
        if not v.get("set", True) or v.get("infinite"):
            return None
        return noval(v.get("number"))
    return None


def epoch_us(v: Any) -> int | None:
    """Epoch seconds (plain or wrapped) -> microseconds; 0 / unset -> None."""
    n = noval(v)
    if not n or n <= 0:
        return None
    return n * 1_000_000


def json_exit(v: Any) -> tuple[int | None, int | None]:
    """``exit_code`` object -> (exit code, signal).

    22.05 (dbv0.0.38): ``{"status": "SIGNALED", "return_code": null, "signal": {"signal_id":
    9, "name": "Killed"}}`` or ``{"status": "SUCCESS", "return_code": 0}``; 23.02+:
    ``{"status": ["ERROR"], "return_code": {"set": true, "number": 1}, "signal": {"id":
    {"set": false, ...}, "name": ""}}``."""
    if not isinstance(v, dict):
        return None, None
    code = noval(v.get("return_code"))
    sig = None
    s = v.get("signal")
    if isinstance(s, dict):
        sig = noval(s.get("signal_id")) if "signal_id" in s else noval(s.get("id"))
    return code, sig


def first_str(v: Any) -> str | None:
    """``"FAILED"`` or ``["FAILED", ...]`` -> ``"FAILED"``."""
    if isinstance(v, list):
        v = v[0] if v else None
    return v if isinstance(v, str) and v else None


#: ``sacct --parsable2 --delimiter=X`` (sacct(1): "--delimiter: ASCII characters used to
#: separate the fields when specifying the -p or -P options", no quoting): a header line
#: beginning with JobID / JobIDRaw and one of these
HEADER_DELIM = re.compile(r"^\s*jobid(?:raw)?([,;\t])", re.IGNORECASE)
#: columns whose values hold commas: TRES lists (``billing=8,cpu=8,gres/gpu=8``), host lists
#: of several prefixes (``a[01-02],b05``), and free text (job name, command line, ...)
_TRES = ("alloctres", "reqtres", "allocgres", "reqgres", "tres", "tresusageintot")
_FREE = ("jobname", "submitline", "comment", "workdir", "constraints", "reason", "account")
_HOST_PART = re.compile(r"^[A-Za-z][\w.\-]*(?:\[[\d,\-]+\])?$")


def _bracket_split(text: str, delim: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(depth - 1, 0)
        elif ch == delim and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def split_delimited(text: str, delim: str, cols: dict[str, int], ncols: int) -> list[str] | None:
    """A row of ``sacct -P --delimiter=X``, its fields, or None if the delimiter inside values
    leaves it ambiguous (then the row is counted unparsed). Fields are split outside ``[...]``
    (host ranges); the parts left over belong to one column: each column that can hold the
    delimiter is tried, and taken if its parts look like it (``=`` in every TRES part, a host
    list's parts hosts; free text anything) -- a checked column over free text, and only when
    one fits."""
    f = _bracket_split(text, delim)
    extra = len(f) - ncols
    if extra <= 0:
        return f if extra == 0 else None
    fits: list[tuple[bool, list[str]]] = []
    for name, i in cols.items():
        if name in _TRES:
            ok = all("=" in x for x in f[i:i + extra + 1])
        elif name == "nodelist":
            ok = all(_HOST_PART.match(x) for x in f[i:i + extra + 1])
        else:
            ok = name in _FREE
        if ok:
            fits.append((name in _FREE, [*f[:i], delim.join(f[i:i + extra + 1]),
                                         *f[i + extra + 1:]]))
    checked = [r for free, r in fits if not free]
    if len(checked) == 1:
        return checked[0]
    return fits[0][1] if not checked and len(fits) == 1 else None


# -- a sacct text file's note (parsers/sacct.py) ---------------------------------------------
def columns_note(cols: dict[str, int] | None) -> str | None:
    """Columns the analysis needs that the header lacks (plain ``sacct``'s default format has
    no Start, End or NodeList)."""
    missing = [c for c in ("Start", "End", "NodeList") if c.lower() not in (cols or {})]
    if not missing:
        return None
    names = " or ".join([", ".join(missing[:-1]), missing[-1]] if len(missing) > 1
                        else missing)
    return (f"no {names} column: its records give no "
            + ("times (attempts come from the job output's own lines)"
               if "Start" in missing or "End" in missing else "nodes")
            + "; print them with sacct --parsable2 --duplicates -o JobID,JobIDRaw,State,"
            "ExitCode,Submit,Start,End,NNodes,NodeList,AllocTRES")


def cut_note(cut: dict[str, int], whole: tuple[str, ...]) -> str | None:
    """Fixed-width columns cut to their width (``+``): kept as printed, or (a column in
    ``whole``) the rows unread."""
    if not cut:
        return None
    cols = ", ".join(f"{n} ({k:,} rows)" for n, k in sorted(cut.items()))
    lost = any(n in whole for n in cut)
    return (f"sacct's fixed-width columns cut to their width ('+'): {cols}"
            + ("; those rows are unread: print them whole with sacct --parsable2, or "
               "widen the columns (--format=JobID%20,Start%20,End%20,NodeList%500,...)"
               if lost else "; the values are kept as printed"))


def rows_note(lines: list[int], what: str, then: str) -> str | None:
    """``N <what> (line a, b, c ...): <then>`` for rows that were not read."""
    if not lines:
        return None
    shown = ", ".join(map(str, lines[:3])) + " ..." * (len(lines) > 3)
    return f"{len(lines):,} {what} (line {shown}): {then}"


_ELAPSED = re.compile(r"(?:(\d+)-)?(\d+):(\d\d):(\d\d)")


def elapsed_s(text: str | None) -> int | None:
    """sacct's ``Elapsed`` in seconds: ``[D-]HH:MM:SS`` as Slurm's ``secs2time_str``
    (src/common/parse_time.c) prints it (``INVALID``, ``UNLIMITED``, empty: None)."""
    m = _ELAPSED.fullmatch(text.strip()) if text else None
    if m is None:
        return None
    return (int(m.group(1) or 0) * 86400 + int(m.group(2)) * 3600 + int(m.group(3)) * 60
            + int(m.group(4)))


def fold_by_elapsed(start: int | None, end: int | None, start_text: str | None,
                    end_text: str | None, elapsed: str | None, tz: tzinfo
                    ) -> tuple[int | None, int | None]:
    """(start, end) with a stamp of the hour daylight saving repeats read as its second pass
    where that, and only that, makes ``End - Start`` the record's ``Elapsed`` (sacct prints
    local stamps without a zone: a job that ends in the second pass of the repeated hour
    read as the first ends an hour early, ``parsers.dstfold``)."""
    el = elapsed_s(elapsed)
    if el is None or start is None or end is None or abs(end - start - el * 1_000_000) <= 1e6:
        return start, end
    later_end = later_fold_us(end_text, tz) if end_text else None
    if later_end is not None and abs(later_end - start - el * 1_000_000) <= 1e6:
        return start, later_end
    later_start = later_fold_us(start_text, tz) if start_text else None
    if later_start is not None and abs(end - later_start - el * 1_000_000) <= 1e6:
        return later_start, end
    return start, end


#: job states (src/common/slurm_protocol_defs.c job_state_string): a cut one is the state it
#: is the start of (OUT_OF_ME+), a cut ``CANCELLED by N`` is CANCELLED
STATES = ("BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL",
           "OUT_OF_MEMORY", "PENDING", "PREEMPTED", "RUNNING", "REQUEUED", "RESIZING",
           "REVOKED", "SUSPENDED", "TIMEOUT")


#: a job or step id as sacct prints it first in a row (``12``, ``12_3``, ``12_[1-4]``,
#: ``12+0`` (heterogeneous), ``12.batch``, ``12.0``)
_ROW_ID = re.compile(r"^\s*\d+(?:_\d+|_\[[\d,\-%]+\]|\+\d+)?(?:\.(?:batch|extern|interactive|\d+))?"
                     r"(?:\||\s)")
_ROW_STATE = re.compile(r"(?:^|[|\s])(?:" + "|".join(STATES) + r")\+?(?:$|[|\s])")


def headerless_note(head: str) -> str | None:
    """The note for a file of sacct rows without their header (``sacct -n`` /
    ``--noheader``): most of its first lines start with a job id and name a job state.
    Such rows cannot be mapped to columns (any order and subset can be asked for), so the
    file stays unparsed and this says how to print it readable."""
    lines = [ln for ln in head_lines(head, 20) if ln.strip()]
    if any("jobid" in ln.lower() for ln in lines):
        return None
    rows = [ln for ln in lines if _ROW_ID.match(ln) and _ROW_STATE.search(ln)]
    if not lines or len(rows) * 2 < len(lines) or len(rows) == 0:
        return None
    return ("looks like sacct rows without their header line (-n/--noheader); columns cannot "
            "be named: run sacct again without -n, e.g. sacct --parsable2 --duplicates -o "
            "JobID,JobIDRaw,State,ExitCode,Submit,Start,End,NNodes,NodeList,AllocTRES")
