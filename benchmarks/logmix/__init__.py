"""Log mixes for the ingest benchmark (benchmarks/bench_ingest.py --mix NAME).

Each mix writes about ``size`` bytes of one kind of log into a directory, deterministically
(seeded), in the formats the real programs print; every module names the printing code of each
line family. ``MIXES[name](out_dir, size, seed)`` returns the paths to ingest (files or
directories) and the files to count with ``wc -l``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from logmix import joblog, k8s, nccl, slurm, syslog

Mix = Callable[[Path, int, int], tuple[list[Path], list[Path]]]

MIXES: dict[str, Mix] = {
    "megatron": joblog.megatron,
    "kernel-noise": syslog.kernel_noise,
    "syslog-errors": syslog.syslog_errors,
    "nccl-info": nccl.nccl_info,
    "slurm": slurm.busy_cluster,
    "k8s": k8s.cluster,
    "kubectl-stamped": joblog.kubectl_stamped,
    "tqdm": joblog.tqdm_bars,
    "lightning": joblog.lightning,
    "unknown": joblog.unknown,
    "fleet-dir": syslog.fleet_dir,
}
