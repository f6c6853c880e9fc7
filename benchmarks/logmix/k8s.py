"""k8s: a busy GPU Kubernetes cluster's control-plane and node-agent logs.

``k8s/`` holds:

* ``events.txt`` (about 1/3): ``kubectl get events -A`` of a week: NAMESPACE, LAST SEEN (age,
  apimachinery pkg/util/duration ``HumanDuration``), TYPE, REASON, OBJECT, MESSAGE, padded as
  kubectl's tabwriter pads (printers.go ``eventColumnDefinitions``; sample_logs/real_formats/k8s
  and tests/data/formats/k8s.jsonl ``kubectl-get-events``). Messages: scheduler ``Successfully
  assigned %s/%s to %s``, kubelet ``Container image %q already present on machine``, ``Created
  container %s``, ``Started container %s``, ``Stopping container %s``, job controller ``Created
  pod: %s`` and ``Job completed``, cronjob controller ``Saw completed job: %s, status: %v`` and
  ``Deleted job %s``; now and then a ``BackOff`` or ``FailedScheduling`` warning.
* ``kubelet-<node>.log`` (about 1/3, 16 nodes): ``journalctl -u kubelet`` short format with
  klog headers: reconciler_common.go ``"operationExecutor.VerifyControllerAttachedVolume started
  for volume ..."``, operation_generator.go ``"MountVolume.SetUp succeeded for volume ..."``,
  kubelet.go ``"SyncLoop ADD"``, ``"SyncLoop (PLEG): event for pod"`` (ContainerStarted /
  ContainerDied), ``"SyncLoop (probe)"``, kubelet_getters.go ``"Pod status is inconsistent
  ..."`` (public kubelet journals quoted in kubernetes issues; k8s.jsonl ``journalctl-short+
  glog``).
* ``kube-controller-manager.log`` (about 1/3): the pod log of kube-controller-manager (klog):
  leaderelection.go ``successfully acquired lease``, replica_set.go ``"Finished syncing"
  kind="ReplicaSet"``, controller_utils.go ``"Update ready status of pods on node"``, request.go
  client-side throttling (the lines of k8s.jsonl ``glog`` groups).
"""

from __future__ import annotations

import heapq
from pathlib import Path

import numpy as np

from logmix.common import EPOCH_S, Sized

NS = ("research", "prod-train", "genai", "team-llm", "batch-eval")
WEEK = 7 * 86400.0
KUBELET_NODES = 16


def human_duration(s: float) -> str:
    """apimachinery pkg/util/duration/duration.go ``HumanDuration``."""
    sec = int(s)
    if sec < 120:
        return f"{max(sec, 0)}s"
    m = sec // 60
    if m < 10:
        return f"{m}m{sec % 60}s" if sec % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = m // 60
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 192:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    return f"{h // 24}d"


def _uid(rng: np.random.Generator) -> str:
    h = f"{int(rng.integers(0, 1 << 62)):016x}{int(rng.integers(0, 1 << 62)):016x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def _klog(t: float, pid: int, site: str) -> str:
    s = str(np.datetime64(int((EPOCH_S + t) * 1e6), "us"))
    return f"I{s[5:7]}{s[8:10]} {s[11:26]} {pid:7d} {site}] "


def _journal(t: float) -> str:
    s = str(np.datetime64(int(EPOCH_S + t), "s"))
    mon = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
           "Dec")[int(s[5:7]) - 1]
    return f"{mon} {s[8:10]} {s[11:19]}"


def _pod_events(rng: np.random.Generator, t: float) -> list[tuple[float, str, str, str, str, str]]:
    """(t, ns, type, reason, object, message) of one batch job's pod lifecycle."""
    ns = NS[int(rng.integers(len(NS)))]
    job = f"eval-{int(rng.integers(0, 1 << 30)):08x}"
    pod = f"{job}-{''.join('bcdfghjklmnpqrstvwxz2456789'[int(i)] for i in rng.integers(0, 27, 5))}"
    node = f"gpu-node-{int(rng.integers(1, 2049)):04d}"
    img = "nvcr.io/nvidia/pytorch:24.05-py3"
    run = float(rng.exponential(1800.0)) + 30.0
    out = [(t, ns, "Normal", "SuccessfulCreate", f"job/{job}", f"Created pod: {pod}"),
           (t + 0.5, ns, "Normal", "Scheduled", f"pod/{pod}",
            f"Successfully assigned {ns}/{pod} to {node}"),
           (t + 2.0, ns, "Normal", "Pulled", f"pod/{pod}",
            f'Container image "{img}" already present on machine'),
           (t + 2.1, ns, "Normal", "Created", f"pod/{pod}", "Created container main"),
           (t + 2.4, ns, "Normal", "Started", f"pod/{pod}", "Started container main")]
    r = float(rng.random())
    if r < 0.02:
        out.append((t + run, ns, "Warning", "BackOff", f"pod/{pod}",
                    f"Back-off restarting failed container main in pod {pod}_{ns}({_uid(rng)})"))
    elif r < 0.04:
        out.insert(1, (t + 0.2, ns, "Warning", "FailedScheduling", f"pod/{pod}",
                       "0/2048 nodes are available: 2048 Insufficient nvidia.com/gpu. "
                       "preemption: 0/2048 nodes are available: 2048 No preemption victims "
                       "found for incoming pod.."))
    else:
        out += [(t + run, ns, "Normal", "Completed", f"job/{job}", "Job completed"),
                (t + run + 1.0, ns, "Normal", "SawCompletedJob", f"cronjob/{job[:13]}",
                 f"Saw completed job: {job}, status: Complete"),
                (t + run + 60.0, ns, "Normal", "SuccessfulDelete", f"cronjob/{job[:13]}",
                 f"Deleted job {job}")]
    return out


def events(path: Path, size: int, rng: np.random.Generator) -> None:
    """A week of events, oldest first; columns padded to the widest value of the listing."""
    heap: list[tuple[float, int, str, str, str, str, str]] = []
    widths = (len("batch-eval"), 9, 7, len("SuccessfulCreate"), len("pod/eval-12345678-abcde"))
    now = WEEK + 3600.0

    def row(t: float, ns: str, typ: str, reason: str, obj: str, msg: str) -> str:
        cols = (ns, human_duration(now - t), typ, reason, obj)
        return "   ".join(f"{c:<{n}}" for c, n in zip(cols, widths, strict=True)) + "   " + msg

    t, seq = 0.0, 0
    gap = WEEK / max(1.0, size / 900.0)  # ~900 bytes of events per job: the listing spans a week
    with Sized(path, size) as w:
        w.write([row(now, "NAMESPACE", "TYPE", "REASON", "OBJECT", "MESSAGE")
                 .replace("0s       ", "LAST SEEN", 1)])
        while not w.full:
            for _ in range(2000):
                t += float(rng.exponential(gap))
                for e in _pod_events(rng, t):
                    seq += 1
                    heapq.heappush(heap, (e[0], seq, *e[1:]))
            lines = []
            while heap and heap[0][0] < t - 86400.0:
                e = heapq.heappop(heap)
                lines.append(row(e[0], *e[2:]))
            w.write(lines)


def kubelet(path: Path, size: int, node: str, rng: np.random.Generator) -> None:
    """One node's kubelet journal: per pod, its volume set-up, start, probe and death."""
    pid = int(rng.integers(1000, 9000))
    heap: list[tuple[float, int, str, str]] = []
    t, seq = 0.0, 0

    def at(tt: float, site: str, msg: str) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(heap, (tt, seq, site, msg))

    with Sized(path, size) as w:
        while not w.full:
            for _ in range(100):
                t += float(rng.exponential(120.0))
                ns = NS[int(rng.integers(len(NS)))]
                pod = f"eval-{int(rng.integers(0, 1 << 30)):08x}-x{int(rng.integers(0, 99999)):05d}"
                uid = _uid(rng)
                vol = f"kube-api-access-{int(rng.integers(0, 1 << 24)):06x}"
                spec = (f'volume \\"{vol}\\" (UniqueName: \\"kubernetes.io/projected/'
                        f'{uid}-{vol}\\") pod \\"{pod}\\" (UID: \\"{uid}\\") " pod="{ns}/{pod}"')
                at(t, "kubelet.go:2430", f'"SyncLoop ADD" source="api" pods=["{ns}/{pod}"]')
                at(t + 0.1, "reconciler_common.go:258", '"operationExecutor.'
                   f"VerifyControllerAttachedVolume started for {spec}")
                at(t + 0.3, "operation_generator.go:721",
                   f'"MountVolume.SetUp succeeded for {spec}')
                run = float(rng.exponential(1800.0)) + 30.0
                for dt, typ in ((2.0, "ContainerStarted"), (2.1, "ContainerStarted"),
                                (run, "ContainerDied")):
                    at(t + dt, "kubelet.go:2457", '"SyncLoop (PLEG): event for pod" '
                       f'pod="{ns}/{pod}" event={{"ID":"{uid}","Type":"{typ}",'
                       f'"Data":"{rng.bytes(32).hex()}"}}')
                at(t + 3.0, "kubelet.go:2545", '"SyncLoop (probe)" probe="readiness" '
                   f'status="ready" pod="{ns}/{pod}"')
                at(t + 5.0, "kubelet_getters.go:218", '"Pod status is inconsistent with cached '
                   'status for pod, a reconciliation should be triggered" '
                   f'pod="kube-system/kube-proxy-{int(rng.integers(0, 1 << 20)):05x}"')
            lines = []
            while heap and heap[0][0] < t - 86400.0:
                tt, _, site, msg = heapq.heappop(heap)
                lines.append(f"{_journal(tt)} {node} kubelet[{pid}]: {_klog(tt, pid, site)}{msg}")
            w.write(lines)


def controller_manager(path: Path, size: int, rng: np.random.Generator) -> None:
    t = 0.0
    with Sized(path, size) as w:
        w.write([_klog(0.0, 1, "leaderelection.go:258") + "successfully acquired lease "
                 "kube-system/kube-controller-manager"])
        while not w.full:
            lines = []
            for _ in range(100):
                t += float(rng.exponential(2.0))
                r = float(rng.random())
                if r < 0.6:
                    lines.append(_klog(t, 1, "replica_set.go:676") + '"Finished syncing" '
                                 'kind="ReplicaSet" key="kube-system/coredns-'
                                 f'{int(rng.integers(0, 1 << 40)):010x}" '
                                 f'duration="{float(rng.exponential(60.0)):.3f}ms"')
                elif r < 0.95:
                    node = f"gpu-node-{int(rng.integers(1, 2049)):04d}"
                    lines.append(_klog(t, 1, "controller_utils.go:109") + '"Update ready status '
                                 f'of pods on node" node="{node}"')
                else:
                    lines.append(_klog(t, 1, "request.go:682") + "Waited for "
                                 f"{float(rng.exponential(3.0)):.9f}s due to client-side "
                                 "throttling, not priority and fairness, request: GET:https://"
                                 "10.96.0.1:443/api/v1/namespaces/kube-system/endpoints?limit=500")
            w.write(lines)


def cluster(out: Path, size: int, seed: int) -> tuple[list[Path], list[Path]]:
    rng = np.random.default_rng(seed)
    d = out / "k8s"
    files = [d / "events.txt", d / "kube-controller-manager.log"]
    events(files[0], size // 3, rng)
    controller_manager(files[1], size // 3, rng)
    for i in range(KUBELET_NODES):
        p = d / f"kubelet-gpu-node-{i + 1:04d}.log"
        kubelet(p, (size - 2 * (size // 3)) // KUBELET_NODES, f"gpu-node-{i + 1:04d}", rng)
        files.append(p)
    return [d], files
