"""kernel-noise and fleet-dir: the syslog of many healthy GPU nodes, 1 Xid per ~20,000 lines.

The healthy chatter is ``pipeline.simulate.noise_syslog`` (systemd timers and sessions, cron,
sshd, logind, chronyd, snapd, rsyslogd, audit, mlx5 ``Link up``, kubelet, containerd, CNI; boots
with the NVIDIA module banners and nvidia-persistenced; its docstring cites the printing code
of each), in rsyslog's traditional file format (Ubuntu's default: ``May  7 06:45:12 host
ident: msg``, kernel lines with imklog's ``[uptime]``). The Xid lines are NVIDIA's
``NVRM: Xid (PCI:%04x:%02x:%02x): %d, pid=%s, name=%s, %s`` (open-gpu-kernel-modules
src/nvidia/src/kernel/gpu/rc/kernel_rc.c ``krcReportXid_IMPL``), with the message texts of the
Xid lines in tests/data/formats/nvidia.jsonl.

* ``kernel-noise``: one file ``syslog`` as a central rsyslog collector writes it: 2,048 nodes'
  lines interleaved in time order.
* ``fleet-dir``: ``nodes/node0000..node2047/kern.log`` (each node's own file, about 3/4 of the
  bytes) plus ``jobs/slurm-<id>.out`` job logs (Megatron output with every rank's NCCL INFO
  start-up, ``logmix.joblog``).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from logmix import joblog
from logmix.common import EPOCH_S, Sized
from pipeline.simulate.noise_syslog import NodeSyslog, Stamps, render

NODES = 2048
XID_EVERY = 20_000
BUS = ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")
XIDS = (
    "79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been "
    "detected on GPU in the framebuffer at physAddr 0x12d815900 partition 7, subpartition 3",
    "63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x000000012d815900) marked "
    "for remapping, reset gpu to activate.",
    "94, pid='<unknown>', name=<unknown>, Contained: SM (0x1). RST: No, D-RST: No",
    "95, pid='<unknown>', name=<unknown>, Uncontained: LTC Data (0x1,0x0). RST: Yes, D-RST: No",
    "119, pid=687595, name=nv_queue, Timeout waiting for RPC from GSP1! Expected function 10 "
    "(FREE) (0xa55a0210 0x0).",
    "13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 8, SM 1): "
    "Misaligned Address",
    "43, pid=240561, name=pt_main_thread, Ch 0000002b",
    "31, pid=1319585, Ch 00000022, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_15 "
    "faulted @ 0x7fdc_5a33e000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
)
WINDOW = 600.0
REBOOTS_PER_NODE_HOUR = 1 / 720  #: about one reboot per node and month


class Fleet:
    """Healthy nodes and the Xid lines among their chatter."""

    def __init__(self, seed: int, nodes: int = NODES) -> None:
        ss = np.random.SeedSequence(seed)
        self.rng = np.random.default_rng(ss.spawn(1)[0])
        self.nodes = [NodeSyslog(f"node{i:04d}", np.random.default_rng(c), kubelet=True,
                                 epoch_s=EPOCH_S)
                      for i, c in enumerate(ss.spawn(nodes))]
        self.stamps = Stamps(EPOCH_S, "traditional")
        self.until_xid = int(self.rng.integers(XID_EVERY // 2, XID_EVERY * 3 // 2))

    def node_window(self, n: NodeSyslog, t0: float, t1: float) -> list[tuple[float, str]]:
        entries = n.entries(t0, t1)
        if self.rng.random() < REBOOTS_PER_NODE_HOUR * (t1 - t0) / 3600.0:
            entries += n.boot(t0 + float(self.rng.random()) * (t1 - t0 - 100.0))
        return render(n.host, entries, self.stamps, n.boot_t)

    def xids(self, lines: list[tuple[float, str]], n: NodeSyslog) -> list[tuple[float, str]]:
        """Replace the chatter line at every ~20,000th position by an Xid of that node."""
        self.until_xid -= len(lines)
        while self.until_xid <= 0 and lines:
            k = len(lines) - 1 + self.until_xid
            k = max(0, min(k, len(lines) - 1))
            t = lines[k][0]
            msg = f"NVRM: Xid (PCI:0000:{BUS[int(self.rng.integers(8))]}:00): " \
                  f"{XIDS[int(self.rng.integers(len(XIDS)))]}"
            lines[k] = (t, f"{self.stamps(t)} {n.host} kernel: [{t - n.boot_t:12.6f}] {msg}")
            self.until_xid += int(self.rng.integers(XID_EVERY // 2, XID_EVERY * 3 // 2))
        return lines


def kernel_noise(out: Path, size: int, seed: int) -> tuple[list[Path], list[Path]]:
    fleet = Fleet(seed)
    path = out / "syslog"
    t = 0.0
    with Sized(path, size) as w:
        while not w.full:
            batch: list[tuple[float, str]] = []
            for n in fleet.nodes:
                batch += fleet.xids(fleet.node_window(n, t, t + WINDOW), n)
            batch.sort(key=lambda x: x[0])
            w.write(x for _, x in batch)
            t += WINDOW
    return [path], [path]


def fleet_dir(out: Path, size: int, seed: int) -> tuple[list[Path], list[Path]]:
    """2,048 node logs (3/4 of ``size``) and 8 job logs (1/4)."""
    fleet = Fleet(seed)
    per_node = size * 3 // 4 // NODES
    files = []
    for n in fleet.nodes:
        path = out / "nodes" / n.host / "kern.log"
        t = 0.0
        with Sized(path, per_node) as w:
            while not w.full:
                w.write(x for _, x in fleet.xids(fleet.node_window(n, t, t + 3600.0), n))
                t += 3600.0
        files.append(path)
    jobs = 8
    for j in range(jobs):
        path = out / "jobs" / f"slurm-{7001 + j}.out"
        joblog.megatron_job(path, (size - size * 3 // 4) // jobs, seed * 100 + j,
                            hosts=[f"node{(16 * j + k) % NODES:04d}" for k in range(16)])
        files.append(path)
    return [out], files


#: lines a k8s GPU node prints in bulk while pods crash-loop and jobs start and stop, each with
#: an anchor of some recogniser (so each goes through Python): kubelet's
#: ``klog.ErrorS(err, "Error syncing pod, skipping", "pod", klog.KObj(pod), "podUID", uid)``
#: (kubernetes pkg/kubelet/pod_workers.go) in klog's header ``E0501 00:30:41.290775    1226
#: file.go:line]``; containerd's logrus ``level=error`` lines; nvidia-peermem's
#: ``nv_get_p2p_free_callback:127 ERROR detected invalid context`` (open-gpu-kernel-modules
#: kernel-open/nvidia-peermem/nvidia-peermem.c, as pasted in Mellanox/nv_peer_memory#120);
#: the NVIDIA module banner (kernel-open/nvidia/nv.c); sshd's kex errors (openssh sshd.c)
ERROR_LINES = (
    ("kubelet[{pid}]", "E{md} {hms}.{us:06d}    {pid} pod_workers.go:1301] \"Error syncing pod, "
     "skipping\" err=\"failed to \\\"StartContainer\\\" for \\\"main\\\" with CrashLoopBackOff: "
     "\\\"back-off 5m0s restarting failed container=main pod=train-{j}-worker-{r}_default"
     "({uid})\\\"\" pod=\"default/train-{j}-worker-{r}\" podUID=\"{uid}\""),
    ("containerd[{pid}]", "time=\"{iso}.{us:06d}000Z\" level=error msg=\"failed to handle "
     "container TaskExit event &TaskExit{{ContainerID:{cid},ID:{cid},Pid:{pid2},ExitStatus:137,"
     "ExitedAt:{iso}.{us:06d}000Z,XXX_unrecognized:[],}}\" error=\"failed to stop container: "
     "context deadline exceeded: unknown\""),
    ("kernel", "[{up}] nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid "
     "context, skipping further processing"),
    ("kernel", "[{up}] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 "
     "18:56:32 UTC 2023"),
    ("sshd[{pid2}]", "error: kex_exchange_identification: Connection closed by remote host"),
)
ERROR_EVERY = 4  #: one line in 4 is one of ERROR_LINES


def syslog_errors(out: Path, size: int, seed: int) -> tuple[list[Path], list[Path]]:
    """kernel-noise's collector file with every 4th line replaced by one of ``ERROR_LINES``
    (same node and second): the per-line cost of lines the prefilter cannot drop."""
    fleet = Fleet(seed)
    rng = np.random.default_rng(seed + 1)
    path = out / "syslog"
    t, k = 0.0, 0
    with Sized(path, size) as w:
        while not w.full:
            batch: list[tuple[float, str]] = []
            for n in fleet.nodes:
                batch += fleet.node_window(n, t, t + WINDOW)
            batch.sort(key=lambda x: x[0])
            for i in range(k % ERROR_EVERY, len(batch), ERROR_EVERY):
                ts, line = batch[i]
                host = line[16:].split(" ", 1)[0]
                ident, msg = ERROR_LINES[int(rng.integers(len(ERROR_LINES)))]
                g = time.gmtime(EPOCH_S + ts)
                v = {"pid": int(rng.integers(900, 4000)), "pid2": int(rng.integers(1000, 99999)),
                     "md": time.strftime("%m%d", g), "hms": time.strftime("%H:%M:%S", g),
                     "iso": time.strftime("%Y-%m-%dT%H:%M:%S", g), "us": int(rng.integers(10**6)),
                     "up": f"{ts % 3e6:12.6f}", "j": int(rng.integers(9999)),
                     "r": int(rng.integers(64)), "cid": f"{int(rng.integers(1 << 62)):016x}" * 4,
                     "uid": f"5c2b7c0f-1e3a-b2c3-4d5e-{int(rng.integers(1 << 40)):012x}"}
                batch[i] = (ts, f"{line[:16]}{host} {ident.format(**v)}: {msg.format(**v)}")
            k += len(batch)
            w.write(x for _, x in batch)
            t += WINDOW
    return [path], [path]
