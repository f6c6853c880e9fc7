"""Logs of Kubernetes components and other klog / glog programs: ``KlogParser`` (``klog``).

kube-controller-manager, kube-scheduler, kube-apiserver, kube-proxy, the kubelet outside
journald (``--log-file``, ``kubectl logs``) and the GPU operator's Go daemons log through
k8s.io/klog, which prints every line behind the header of Google's glog (klog/v2 klog.go and
golang/glog glog.go, ``formatHeader``: ``Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg``; L is
the severity I, W, E or F, the thread id space-padded to 7 columns). As pasted in
kubernetes/kubernetes#117555::

    I0423 18:37:30.647620       1 node_lifecycle_controller.go:882] Node ip-10-5-43-93.ap-s...
    E0423 18:37:30.649331       1 runtime.go:78] Observed a panic: "invalid memory address ...
    goroutine 288383 [running]:

Such a file used to be text of no known layout, every line a recogniser does not claim
UNPARSED: the 1.3 M "Update ready status of pods on node" lines of the benchmark's
controller-manager log all were. Decision: every line still goes through the prefix and
message layers (the text dialect, ``parsers.text``), and one rule differs: an INFO line (``I``)
no recogniser claims is NOISE -- the component's own chatter, as an INFO line of a DeepSpeed or
HF logger is in a job log. A W, E or F line nobody claims stays UNPARSED (a sample, mined for
templates: what a user should look at), and so does a line without the header (a panic's
goroutine dump, the lines of a multi-line value).

The header may stand behind a container runtime's CRI prefix (``/var/log/pods/.../0.log``:
``2024-05-01T00:00:00.123456789Z stderr F I0501 ...``, kubelet/kuberuntime logs.go) or behind
``kubectl logs --timestamps``' RFC 3339 stamp. Sniffing: at least 3 and 60% of the first
non-blank lines carry the header (any severity); a job's output (a job id in its name, .out or
.err) is left to the job-log dialect, which scores higher as soon as a framework's marker is in
its first bytes anyway.
"""

from __future__ import annotations

import re
from typing import ClassVar

import polars as pl

from parsers.base import NOISE, UNPARSED, head_lines
from parsers.paths import job_from_path
from parsers.text import Masks, TextParser, _masks

#: what may stand before the header: a CRI log line's stamp, stream and tag, or kubectl's stamp
_BEFORE = (r"(?:[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(?:Z|[+-][0-9]{2}:[0-9]{2}) "
           r"(?:(?:stdout|stderr) [FP] )?)?")
_HEADER = r"[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+ +[0-9]+ [^ \]]+:[0-9]+\] "
#: a klog line of any severity (sniffing), and an INFO line (NOISE when nobody claims it);
#: one regex for polars (Rust) and Python alike: ASCII classes only
ANY = "^" + _BEFORE + "[IWEF]" + _HEADER
INFO = "^" + _BEFORE + "I" + _HEADER
_ANY = re.compile(ANY)
_INFO = re.compile(INFO)


class KlogParser(TextParser):
    """A klog/glog program's log: the text dialect, with unclaimed INFO lines NOISE."""

    name: ClassVar[str] = "klog"
    description: ClassVar[str] = (
        "log of a Kubernetes component or another klog/glog program (kube-controller-manager, "
        "kube-scheduler, kubelet --log-file, kubectl logs): INFO lines no signature claims "
        "are irrelevant")

    MAX_SCORE: ClassVar[int] = 60
    #: its unclaimed INFO lines are NOISE: not the text dialect's accounting
    SIG_ROWS: ClassVar[bool] = False

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        if path.endswith((".out", ".err")) and job_from_path(path):
            return 0
        lines = [x for x in head_lines(head, 50) if x.strip()]
        if len(lines) > 1 and not head.endswith("\n"):
            lines = lines[:-1]  # a head cut inside a line
        hits = sum(1 for x in lines if _ANY.match(x))
        return 60 if hits >= 3 and hits >= 0.6 * len(lines) else 0

    def parse_line(self, text: str, line_no: int) -> int:
        r = super().parse_line(text, line_no)
        return NOISE if r == UNPARSED and _INFO.match(text) else r

    def masks(self, lines: pl.Series) -> Masks:
        m, shapes = _masks(lines, {"info": INFO})
        m["blank"] = m["blank"] | m.pop("info")  # the plan's NOISE of non-candidates
        return m, shapes


PARSERS = [KlogParser]
