"""``simulate --noise realistic``: the background volume a real campaign leaves beside its signal.

``--noise none`` (the default) writes only what the analysis needs: job output, scheduler logs
and the kernel lines of nodes with events (plus a few healthy ones). A real campaign's logs are
mostly something else, and ingest speed must be measured on that. ``realistic`` adds:

* every node of the pool gets a ``nodes/<node>/kern.log`` holding its healthy syslog chatter for
  the whole campaign (``noise_syslog``: systemd timers, cron, ssh sessions, chrony, snapd,
  rsyslog, audit, mlx5; kubelet, containerd and CNI lines in the Kubernetes flavour), merged in
  time order with the kernel event lines the campaign wrote there; kernel lines keep the uptime
  of the boot the campaign's own lines show;
* every attempt's output begins with NCCL_DEBUG=INFO start-up lines of every rank
  (``noise_nccl``; Slurm: all ranks in ``slurm-<id>.out``, as srun merges them; Kubernetes: the
  ranks of master-0's pod, the only pod log written).

The noise has its own random stream (derived from the seed, independent of the campaign's), so
the campaign, truth.json and every signal line are the same bytes with and without it, and a
test checks that the analysis is the same. Volume (measured on the demo preset): about 3 KB of
syslog per node-hour (4-5 KB with the kubelet lines of the Kubernetes flavour) and 3.6 KB of
NCCL output per rank and attempt; the demo preset grows from 3.8 to 18 MB; llama3-54d (2,304
nodes for 54 days, 16,384 ranks x 421 attempts) would write about 9 GB of syslog and 25 GB of
NCCL output.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from pipeline.simulate import noise_nccl, noise_syslog
from pipeline.simulate.records import Attempt

LEVELS = ("none", "realistic")
_TAG = 0x6E6F697365  # "noise": keeps these streams apart from params.STREAMS


def rng_for(seed: int, *key: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, _TAG, *key])))


def startup_hook(seed: int, gpus_per_node: int, first_node_only: bool
                 ) -> Callable[[Attempt], list[str]]:
    """Lines to write at the start of an attempt's output: NCCL INFO of its ranks."""
    rng = rng_for(seed, 1)

    def lines(a: Attempt) -> list[str]:
        blocks = noise_nccl.job_startup(a.nodes, gpus_per_node, rng)
        if first_node_only:
            return next(blocks)
        return [x for b in blocks for x in b]

    return lines


def write_node_logs(out: Path, nodes: list[str], t_end: float, seed: int, epoch_s: float,
                    kubelet: bool) -> int:
    """Every node's healthy syslog over the campaign merged into ``nodes/<node>/kern.log``;
    returns the lines added."""
    stamps = noise_syslog.Stamps(epoch_s, "precise")
    added = 0
    for i, node in enumerate(nodes):
        path = out / "nodes" / node / "kern.log"
        own = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        timed = [(_wall(x, epoch_s), x) for x in own]
        gen = noise_syslog.NodeSyslog(node, rng_for(seed, 2, i), kubelet=kubelet,
                                      epoch_s=epoch_s)
        boots = _boots(timed)
        lines: list[tuple[float, str]] = []
        for lo, hi, origin in _segments(boots, gen.boot_t, t_end + 600.0):
            lines += noise_syslog.render(node, gen.entries(lo, hi), stamps, origin)
        added += len(lines)
        merged = sorted([(t, 0, x) for t, x in timed] + [(t, 1, x) for t, x in lines])
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", buffering=1 << 20) as f:
            f.write("\n".join(x for _, _, x in merged) + "\n")
    return added


def _wall(line: str, epoch_s: float) -> float:
    """Campaign time of a line in rsyslog's high-precision format."""
    u = np.datetime64(line[:26], "us").astype(np.int64) / 1e6
    return float(u) - epoch_s


def _boots(timed: list[tuple[float, str]]) -> list[tuple[float, float]]:
    """(campaign time, boot origin) at each kernel line of the campaign's own lines whose
    origin differs from the previous one (a reboot)."""
    out: list[tuple[float, float]] = []
    for t, x in timed:
        k = x.find(" kernel: [")
        if k < 0:
            continue
        up = float(x[k + 10:x.index("]", k)])
        origin = t - up
        if not out or abs(origin - out[-1][1]) > 1.0:
            out.append((t, origin))
    return out


def _segments(boots: list[tuple[float, float]], default: float, end: float
              ) -> list[tuple[float, float, float]]:
    """[lo, hi) windows of the campaign with the kernel's boot origin in each: a boot that
    the campaign's own lines show starts a window at its origin (before the first one, the
    node's ``default`` boot)."""
    marks: list[tuple[float, float]] = []
    if not boots or boots[0][1] > 0.0:
        marks.append((0.0, default))
    for _, origin in boots:
        marks.append((max(origin, 0.0), origin))
    ends = [m[0] for m in marks[1:]] + [end]
    return [(lo, hi, o) for (lo, o), hi in zip(marks, ends, strict=True) if hi > lo]
