"""What a log file's path says: the host (``slurmd-n4.log``, ``node017/kern.log``) and the
Slurm job id (``slurm-1234.out``) a file belongs to, when its name or folders tell.

Used by ``FileContext.for_path`` (the rows' ``host_from`` / job hints) and by the analysis's
linking of job output to attempts (``pipeline/analyze/links.py``)."""

from __future__ import annotations

import re
from pathlib import PurePath

#: a directory named like a host: letters then digits (node017, dgx-042, tmn1), rack-style
#: (r12-n3) or an EC2-style ip-10-0-0-1
_HOST_DIR = re.compile(r"^[a-z][a-z_-]*\d+$|^[a-z]+\d+(?:-[a-z]+\d+)+$|^ip(?:-\d{1,3}){4}$",
                       re.IGNORECASE)
#: ... but not one of the words people number their own folders with (run2, test1, v3, ...)
_NOT_HOST_DIR = re.compile(
    r"^(?:run|runs|test|tests|tmp|temp|v|ver|version|rev|log|logs|data|out|output|job|jobs|"
    r"slurm|attempt|part|exp|experiment|day|week|seed|trial|rank|epoch|step|iter|chunk|batch|"
    r"shard|ckpt|checkpoint|build|case|sample|sample_logs|campaign|backup|copy|old|new)"
    r"[-_]?\d+$", re.IGNORECASE)
#: folders a host's log tree has between the host's folder and the file (``node017/var/log/
#: kern.log``, ``node017/2024-05-01/syslog``): looked through; any other folder ends the search
#: (``h1/demo/jobs/slurm-1001.out`` is no file of a host h1)
_TREE_DIR = re.compile(r"^(?:var|log|logs|syslog|journal|kern|kernel|dmesg|slurm|slurmd|"
                       r"\d{4}-?\d\d-?\d\d)$", re.IGNORECASE)
_LOG_WORD = r"(?:kern|kernel|syslog|messages|dmesg|journal|slurmd|syslogd)"
_HOST_IN_NAME = [
    re.compile(rf"^{_LOG_WORD}[._-](?P<h>[a-z][a-z0-9-]*\d[a-z0-9-]*)(?:\.|$)", re.I),
    re.compile(rf"^(?P<h>[a-z][a-z0-9-]*\d[a-z0-9-]*)[._-]{_LOG_WORD}(?:\.|$)", re.I),
    re.compile(r"(?:^|[._-])(?P<h>(?:node|gpu|host|worker|compute|nid)[-_]?\d+[a-z0-9-]*)",
               re.I),
]


def host_from_path(path: str) -> str | None:
    """Host named by the file's name or its directory: ``slurmd-n4.log``, ``kern-node017.log``,
    ``node017.kern.log``, ``node017/kern.log``. The file name wins over directories (a user's
    ``run2/slurmd-n4.log`` is n4's); a directory counts only if named like a host and not like
    a numbered folder (run2, test1, v3 ...), and only as the file's folder or above folders of
    a log tree (``node017/var/log/kern.log``, ``_TREE_DIR``). None when nothing looks like a
    host name."""
    p = PurePath(path)
    for pat in _HOST_IN_NAME:
        m = pat.search(p.name)
        if m:
            return m.group("h")
    for part in reversed(p.parent.parts[-3:]):
        if _HOST_DIR.match(part) and not _NOT_HOST_DIR.match(part):
            return part
        if not _TREE_DIR.match(part):
            break
    return None


_JOB_FILE = re.compile(r"(?:slurm|job)[-_](\d+(?:_\d+)?)(?:[._-]|$)", re.IGNORECASE)


def job_from_path(path: str) -> str | None:
    """Job id from Slurm's default output names (``slurm-1234.out``, ``slurm-1234_5.out``)."""
    m = _JOB_FILE.search(PurePath(path).name)
    return m.group(1) if m else None
