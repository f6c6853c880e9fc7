"""Slurm's output-file name patterns and submission lines, read the way Slurm reads them.

* ``expand``: sbatch(1) "filename pattern" -- ``%%`` a percent sign, ``%A`` the array's
  master job id (the job id for a job that is not an array task), ``%a`` the array task id
  (Slurm writes 4294967294 for a job that is no array task), ``%j`` the job id (an array
  task's own id, ``SLURM_JOB_ID``), ``%J`` ``<job>.<step>``, ``%x`` the job name, ``%u``
  the user, ``%N`` the node's short host name, ``%n`` the node index, ``%s`` the step, ``%t``
  the task rank; a number between ``%`` and a numeric specifier zero-pads it (``%4a`` ->
  ``0007``); ``\\`` before anything stops expansion (the name is used as written). Fields
  the analysis does not know (the user, a host name that is the machine's and not Slurm's,
  the step or task of a per-task file) become wildcards, so the result is a regular
  expression over paths, not a path.
* ``submit_options``: the options of a recorded submission (sacct ``SubmitLine``:
  ``sbatch --parsable -J arr --array=0-2%1 -o /x/%A_%a.out t.sh``) that say where output
  went and what the job depends on: ``-o/--output``, ``-e/--error``, ``-D/--chdir``,
  ``-J/--job-name``, ``-d/--dependency``, ``-a/--array``, ``--open-mode``. Options after the
  script are the script's own and are not read.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

NO_TASK = "4294967294"
_SPEC = re.compile(r"%(\d*)([%AaJjxuNnst])")
_NUMERIC = set("AajJnst")
_OPTS = {"-o": "output", "--output": "output", "-e": "error", "--error": "error",
         "-D": "chdir", "--chdir": "chdir", "--workdir": "chdir", "-J": "job_name",
         "--job-name": "job_name", "-d": "dependency", "--dependency": "dependency",
         "-a": "array", "--array": "array", "--open-mode": "open_mode"}
#: options that take a value (so that their value is not read as the script)
_WITH_VALUE = set(_OPTS) | {"-p", "--partition", "-N", "--nodes", "-n", "--ntasks", "-t",
                            "--time", "-w", "--nodelist", "-x", "--exclude", "-A",
                            "--account", "-q", "--qos", "-c", "--cpus-per-task", "--mem",
                            "--gres", "-G", "--gpus", "--export", "-C", "--constraint",
                            "--mem-per-cpu", "--ntasks-per-node", "--gpus-per-node",
                            "-i", "--input", "--signal", "--begin", "--comment", "-M",
                            "--clusters", "--reservation", "--wckey", "--nice", "-S",
                            "--core-spec", "--mail-type", "--mail-user"}


@dataclass(frozen=True)
class JobNames:
    """What a job's output name can be made of."""

    job_id: str  #: sacct JobID (``12`` or ``12_3``)
    raw_id: str  #: the execution's own id (``%j``)
    name: str | None = None
    user: str | None = None


def expand(pattern: str, job: JobNames) -> str:
    """Regular expression (unanchored) of the paths ``pattern`` yields for ``job``."""
    if "\\" in pattern:
        return re.escape(pattern.replace("\\", ""))
    arr, _, task = job.job_id.partition("_")
    values = {"A": arr if task else job.raw_id, "a": task or NO_TASK, "j": job.raw_id,
              "x": job.name, "u": job.user}
    out: list[str] = []
    pos = 0
    for m in _SPEC.finditer(pattern):
        out.append(re.escape(pattern[pos:m.start()]))
        pos = m.end()
        pad, spec = m.group(1), m.group(2)
        if spec == "%":
            out.append("%")
            continue
        if spec == "J":
            out.append(re.escape(job.raw_id) + r"(?:\.\w+)?")
            continue
        v = values.get(spec)
        if v is None:  # N n s t u (unknown user): any text of a path component
            out.append(r"[^/]*")
            continue
        if pad and spec in _NUMERIC and v.isdigit():
            v = v.zfill(int(pad))
        out.append(re.escape(v))
    out.append(re.escape(pattern[pos:]))
    return "".join(out)


def pattern_problem(pattern: str) -> str | None:
    """What makes ``pattern`` no file-name pattern (``--job-output``), or None: empty, a
    directory (it ends in ``/``), or a ``%`` that is none of the fields above (``%q``, a ``%``
    at the end). A ``\\`` turns expansion off, so anything goes then (as in Slurm)."""
    if not pattern.strip():
        return "empty; give how the job output files are named, e.g. 'logs/%x-%j.out'"
    if pattern.endswith("/"):
        return (f"{pattern!r} names a directory; end it with the file name, e.g. "
                f"'{pattern}%x-%j.out'")
    if "\\" in pattern:
        return None
    bad = [m.group(0) if m.group(1) else f"{m.group(0)} at the end"
           for m in re.finditer(r"%\d*(.?)", pattern) if not _SPEC.fullmatch(m.group(0))]
    if bad:
        return (f"{pattern!r}: unknown field {', '.join(bad)}; Slurm's are %x name, %j job id, "
                "%A/%a array job/task, %J job.step, %N host, %n node index, %s step, %t task, "
                "%u user, %% a percent sign")
    return None


def path_regex(pattern: str, job: JobNames, work_dir: str | None = None) -> re.Pattern[str]:
    """A regex matching a collected file that is this job's output under ``pattern``: the
    pattern's file name, and as many of its directories as the file's path has in common
    (files are usually copied elsewhere to be analysed), anchored at the end."""
    if work_dir and not pattern.startswith("/"):
        pattern = work_dir.rstrip("/") + "/" + pattern
    parts = [p for p in pattern.split("/") if p]
    if not parts:
        return re.compile(r"(?!)")
    return re.compile(rf"(?:^|/){_nest(parts[:-1], job)}{expand(parts[-1], job)}$")


def _nest(dirs: list[str], job: JobNames) -> str:
    """``a/b/`` -> ``(?:(?:a/)?b/)?``: any trailing run of the directories."""
    rx = ""
    for d in dirs:
        rx = rf"(?:{rx}{expand(d, job)}/)?"
    return rx


def submit_options(line: str | None) -> dict[str, str]:
    """Output-related options of a submission command line (see module docstring)."""
    if not line:
        return {}
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    out: dict[str, str] = {}
    i = 1 if words and not words[0].startswith("-") else 0
    while i < len(words):
        w = words[i]
        if not w.startswith("-"):
            break  # the script: what follows are its own arguments
        key, eq, val = w.partition("=")
        if not eq and key in _WITH_VALUE and i + 1 < len(words):
            val = words[i + 1]
            i += 1
        elif not eq and len(key) > 2 and key[:2] in _OPTS and not key.startswith("--"):
            key, val = key[:2], key[2:]  # -oFILE
        name = _OPTS.get(key)
        if name is not None and val:
            out[name] = val
        i += 1
    return out


_DEP = re.compile(r"(?:after\w*|singleton)")


def dependency_ids(expr: str | None) -> list[str]:
    """Job ids a dependency expression waits for: ``afterany:12:13,afterok:14`` or
    scontrol's ``afterany:12(unfulfilled)`` -> [12, 13, 14]. ``singleton`` names none."""
    if not expr:
        return []
    ids: list[str] = []
    for part in re.split(r"[,?]", expr):
        kind, _, rest = part.partition(":")
        if not _DEP.fullmatch(kind.strip()):
            continue
        for tok in rest.split(":"):
            m = re.match(r"(\d+(?:_\d+)?)", tok)
            if m:
                ids.append(m.group(1))
    return ids
