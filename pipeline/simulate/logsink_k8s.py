"""Writes a Kubernetes-flavour campaign: one Kubeflow PyTorchJob (Master + Workers, one pod per
node, ``restartPolicy: OnFailure``) whose containers the kubelet restarts in place after a
failure; a pod whose node is lost, preempted or drained is deleted and the operator recreates it
(same name, new uid) on another node.

Layout::

    k8s/events.json            kubectl get events -o json (core/v1 List), the whole campaign
    k8s/pods.json              kubectl get pods -o json at the end (restartCount, lastState)
    k8s/pytorchjob.json        kubectl get pytorchjob NAME -o json at the end
    pods/<pod>/<pod>.log       kubectl logs --timestamps of the master-0 container (global rank
                               0), every incarnation appended (as --previous logs concatenated)
    nodes/<node>/kern.log      kernel lines, as in the Slurm flavour

Category -> outcome: node_failure: node NotReady, pod NotReady, taint eviction deletes the pod;
preemption: scheduler preemption (PREEMPTED) or cordon + drain (REQUEUED) deletes the pod;
oom_host: SystemOOM on the node, container OOMKilled exit 137; every other category: containers
end Error, exit code 1. Pods on healthy nodes end Error 1 too (their collectives fail).

Assumptions: events.json holds every event of the campaign (the API server keeps events one
hour by default: as if an exporter had collected them); the pod log of deleted pods was kept by a
log collector. Above ``FULL_EVENTS_MAX_PODS`` pods, per-pod container events are written only for
the pods involved in an interruption (master-0, the faulty pod, recreated pods).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from pipeline.simulate import writers_joblog as jl
from pipeline.simulate import writers_k8s as wk
from pipeline.simulate.logsink import BUF
from pipeline.simulate.params import Settings
from pipeline.simulate.records import Attempt
from pipeline.simulate.timefmt import Clock
from pipeline.simulate.writers_kernel import KernelLogs

FULL_EVENTS_MAX_PODS = 64
DELETED = {"node_failure": "NODE_FAIL", "preemption": "PREEMPTED"}


class K8sLogSink:
    def __init__(self, out: Path, s: Settings, gpus_per_node: int, target: int,
                 save_every: int, rng: np.random.Generator, nodes: int,
                 cluster_nodes: int) -> None:
        self.out, self.s, self.gpn, self.save_every = out, s, gpus_per_node, save_every
        self.clock = Clock(s.epoch)
        self.rng = rng
        self.cluster = cluster_nodes
        self.kern = KernelLogs(self.clock, rng)
        self.meg = jl.MegatronLog(s, self.clock, target, rng)
        self.ev = wk.EventLog(self.clock, rng)
        self.job = s.job_name
        self.job_uid = wk.new_uid(rng)
        self.image_id = "nvcr.io/nvidia/pytorch@sha256:" + rng.bytes(32).hex()
        self.node_uid: dict[str, str] = {}
        self.pods: list[wk.Pod] = []
        self.n = nodes
        self.full = nodes <= FULL_EVENTS_MAX_PODS
        self.names: list[tuple[str, int, str, str | None]] = []  #: truth per attempt
        self.prev: Attempt | None = None
        self.t_first = 0.0
        self.log: TextIO | None = None
        self.last_t = 0.0
        self.seq = 0
        self.startup: Callable[[Attempt], list[str]] | None = None  #: noise.startup_hook
        for d in ("k8s", "pods", "nodes"):
            (out / d).mkdir(parents=True, exist_ok=True)

    def _pod_name(self, r: int) -> str:
        return f"{self.job}-master-0" if r == 0 else f"{self.job}-worker-{r - 1}"

    def _job_ref(self) -> dict[str, Any]:
        return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": self.job,
                "namespace": wk.NS, "uid": self.job_uid}

    def _node(self, node: str) -> dict[str, Any]:
        uid = self.node_uid.setdefault(node, wk.new_uid(self.rng))
        return wk.node_ref(node, uid)

    def _new_pod(self, r: int, node: str, created: float, scheduled: float) -> wk.Pod:
        p = wk.Pod(self._pod_name(r), "Master" if r == 0 else "Worker", max(0, r - 1),
                   wk.new_uid(self.rng), node, created, scheduled)
        self.ev.add(created, self._job_ref(), "SuccessfulCreatePod", f"Created pod: {p.name}",
                    component=wk.OPERATOR)
        p.extra.update(ip=f"10.244.{int(self.rng.integers(256))}.{int(self.rng.integers(2, 255))}",
                       rv=self.ev.rv + 1)
        return p

    def _w(self, t: float, lines: list[str]) -> None:
        assert self.log is not None
        self.last_t = max(self.last_t, t)
        stamp = self.clock.rfc3339nano(self.last_t)
        self.log.write("".join(f"{stamp} {x}\n" for x in lines))

    # -- Sink ---------------------------------------------------------------------------------
    def attempt_start(self, a: Attempt) -> None:
        prev, t = self.prev, a.start
        if prev is None:
            self.t_first = t
            self.pods = [self._new_pod(r, n, 0.2 + 0.01 * r, t - 2.0)
                         for r, n in enumerate(a.nodes)]
            moved = set(range(len(self.pods)))
            for p in self.pods:
                self.ev.add_new(p.scheduled, p.ref(), "Scheduled", "Binding",
                                f"Successfully assigned {wk.NS}/{p.name} to {p.node}")
        else:
            moved = self._reschedule(prev, a)
        gap = t - prev.end if prev is not None else 0.0
        for r, p in enumerate(self.pods):
            if r not in moved:
                p.restarts += 1
                if gap > 20.0 and (self.full or r == 0):  # kubelet crash-loop back-off
                    self.ev.add(t - gap + 10.0, p.ref(), "BackOff",
                                f"Back-off restarting failed container {wk.CONTAINER} in pod "
                                f"{p.name}_{wk.NS}({p.uid})", "Warning", host=p.node,
                                count=max(1, int(gap // 30.0)), t_last=t - 1.0, container=True)
            p.started = t
            p.cid = "containerd://" + self.rng.bytes(32).hex()
            if self.full or r == 0 or r in moved:
                ref = p.ref()
                self.ev.add(t - 0.6, ref, "Pulled", f'Container image "{wk.IMAGE}" already '
                            "present on machine", host=p.node, container=True)
                self.ev.add(t - 0.4, ref, "Created", f"Created container {wk.CONTAINER}",
                            host=p.node, container=True)
                self.ev.add(t, ref, "Started", f"Started container {wk.CONTAINER}",
                            host=p.node, container=True)
        m0 = self.pods[0]
        self.names.append((f"{m0.uid}#{m0.restarts}", m0.restarts, "RUNNING", None))
        (d := self.out / "pods" / m0.name).mkdir(parents=True, exist_ok=True)
        self.log = open(d / f"{m0.name}.log", "a", encoding="utf-8", buffering=BUF)  # noqa: SIM115
        if self.startup is not None:
            self._w(t, self.startup(a))

    def _reschedule(self, prev: Attempt, a: Attempt) -> set[int]:
        """Pods deleted at the last fault, or whose node left the allocation, are recreated
        on the nodes that joined it; returns their replica indices."""
        keep = set(a.nodes)
        moved = {r for r, p in enumerate(self.pods) if p.gone or p.node not in keep}
        free = sorted(keep - {p.node for r, p in enumerate(self.pods) if r not in moved},
                      key=a.nodes.index)
        f = prev.fault
        gap = a.start - prev.end
        for r, node in zip(sorted(moved), free, strict=True):
            old = self.pods[r]
            if not old.gone and f is not None and old.node == f.node:  # remediation drains it
                self.ev.add(prev.end + 2.0, self._node(old.node), "NodeNotSchedulable",
                            f"Node {old.node} status is now: NodeNotSchedulable", host=old.node)
            created = prev.end + min(5.0, gap / 4)
            p = self._new_pod(r, node, created, a.start - 2.0)
            if gap > 60.0:
                taint = "{node.kubernetes.io/unreachable: }" if f and f.category == \
                    "node_failure" else "{node.kubernetes.io/unschedulable: }"
                busy = self.cluster - 1
                self.ev.add_new(created + 1.0, p.ref(), "FailedScheduling", "Scheduling",
                                f"0/{self.cluster} nodes are available: 1 node(s) had "
                                f"untolerated taint {taint}, {busy} Insufficient nvidia.com/gpu."
                                f" preemption: 0/{self.cluster} nodes are available: "
                                f"{self.cluster} No preemption victims found for incoming pod..",
                                "Warning", count=max(1, int(gap // 60.0)), t_last=a.start - 30.0)
            self.ev.add_new(p.scheduled, p.ref(), "Scheduled", "Binding",
                            f"Successfully assigned {wk.NS}/{p.name} to {node}")
            self.pods[r] = p
        return moved

    def training_begin(self, a: Attempt, t: float) -> None:
        self._w(max(a.start, t - 1.0), self.meg.start(a))
        self._w(t, [self.meg.begin(t)])

    def iterations(self, a: Attempt, iters: np.ndarray, ends: np.ndarray,
                   durs: np.ndarray) -> None:
        logged = np.nonzero(iters % self.s.log_interval == 0)[0]
        for li, line in zip(logged, self.meg.iterations(iters, ends, durs), strict=True):
            self._w(float(ends[li]), [line])

    def save(self, a: Attempt, iteration: int, start: float, end: float | None,
             final: bool) -> None:
        e = end if end is not None else start
        if final:
            self._w(start, [self.meg.done(start)])
            self._w(e, self.meg.save(iteration, e - start, iteration % self.save_every == 0))
            return
        lines = self.meg.save(iteration, None if end is None else end - start, True)
        self._w(start, lines[:1])
        if len(lines) > 1:
            self._w(e, lines[1:])

    def attempt_end(self, a: Attempt) -> None:
        f = a.fault
        ck = self.clock
        if f is None:
            for p in self.pods:
                p.final = wk.terminated(ck, p.cid, 0, "Completed", a.start, a.end)
            self.close_log()
            self._set_name(a, "COMPLETED", "0")
        else:
            victim = next((r for r, p in enumerate(self.pods) if p.node == f.node), None)
            self._fault_events(a, victim)
            if not (victim == 0 and f.category in DELETED):
                lines, self.seq = wk.failure_lines(a, self.s, self.rng, self.gpn, self.clock,
                                                   self.seq)
                if lines:
                    self._w(a.end - 1.0, lines)
            self.close_log()
            state, code = "FAILED", "1"
            for r, p in enumerate(self.pods):
                if r == victim and f.category in DELETED:
                    p.gone = True
                    if r == 0:
                        state, code = DELETED[f.category], None  # type: ignore[assignment]
                    continue
                oom = r == victim and f.category == "oom_host"
                p.last = wk.terminated(ck, p.cid, 137 if oom else 1,
                                       "OOMKilled" if oom else "Error", a.start, a.end)
                if oom and r == 0:
                    state, code = "OUT_OF_MEMORY", "137"
            self._set_name(a, state, code)
            if f.node is not None:
                self.kern.fault(f.category, f.node, f.gpu, f.time)
                if f.category == "node_failure":
                    self.kern.reboot(f.node, a.end + float(self.rng.uniform(300.0, 900.0)))
        self.prev = a

    def _set_name(self, a: Attempt, state: str, code: str | None) -> None:
        self.names[a.index] = (*self.names[a.index][:2], state, code)

    def close_log(self) -> None:
        if self.log is not None:
            self.log.close()
            self.log = None

    def _fault_events(self, a: Attempt, victim: int | None) -> None:
        f = a.fault
        assert f is not None
        if f.node is None or victim is None:
            return
        p = self.pods[victim]
        if f.category == "node_failure":
            tn = f.time + min(40.0, 0.5 * f.detect_s)
            self.ev.add(tn, self._node(f.node), "NodeNotReady",
                        f"Node {f.node} status is now: NodeNotReady", component="node-controller")
            self.ev.add(tn + 0.1, p.ref(), "NodeNotReady", "Node is not ready", "Warning",
                        component="node-controller")
            ref = {k: v for k, v in p.ref().items() if k != "uid"}
            self.ev.add(a.end, ref, "TaintManagerEviction",
                        f"Marking for deletion Pod {wk.NS}/{p.name}",
                        component="taint-eviction-controller")
        elif f.category == "preemption":
            if a.state == "PREEMPTED":
                self.ev.add_new(f.time, p.ref(), "Preempted", "Preempting",
                                f"Preempted by pod {wk.new_uid(self.rng)} on node {f.node}")
            else:  # maintenance: cordon, then drain evicts the pod
                self.ev.add(f.time - 1.0, self._node(f.node), "NodeNotSchedulable",
                            f"Node {f.node} status is now: NodeNotSchedulable", host=f.node)
            self.ev.add(f.time + 0.05, p.ref(), "Killing", f"Stopping container {wk.CONTAINER}",
                        host=f.node, container=True)
        elif f.category == "oom_host":
            self.ev.add(f.time, self._node(f.node), "SystemOOM", "System OOM encountered, "
                        f"victim process: python, pid: {int(self.rng.integers(10000, 60000))}",
                        "Warning", host=f.node)

    # -- the end ------------------------------------------------------------------------------
    def close(self, nodes_seen: list[str], t_end: float) -> None:
        self.close_log()
        ck = self.clock
        self.ev.add(t_end + 1.0, self._job_ref(), "PyTorchJobSucceeded",
                    f"PyTorchJob {self.job} is successfully completed.", component=wk.OPERATOR)
        touched = set(self.kern.lines)
        for n in [n for n in nodes_seen if n not in touched][: self.s.healthy_noise_nodes]:
            self.kern.noise(n, 0.0, t_end)
        for node, lines in self.kern.sorted_lines().items():
            d = self.out / "nodes" / node
            d.mkdir(parents=True, exist_ok=True)
            (d / "kern.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
        k = self.out / "k8s"
        (k / "events.json").write_text(wk.dumps(self.ev.document()), encoding="utf-8")
        pods = [wk.pod_doc(p, ck, self.job, self.job_uid, self.gpn, self.image_id,
                           wk.host_ip(p.node), p.extra["ip"], t_end) for p in self.pods]
        doc = {"apiVersion": "v1", "items": pods, "kind": "List",
               "metadata": {"resourceVersion": ""}}
        (k / "pods.json").write_text(wk.dumps(doc), encoding="utf-8")
        (k / "pytorchjob.json").write_text(wk.dumps(wk.pytorchjob_doc(
            ck, self.job, self.job_uid, self.n - 1, self.gpn, 0.0, self.t_first, t_end + 1.0)),
            encoding="utf-8")

    def rename(self, doc: dict[str, Any]) -> None:
        """Name truth.json's attempts as parsers/k8s_pod.py names pod incarnations
        (``<master-0 uid>#<restart>``), with the container's view of state and exit code."""
        run = doc["runs"][0]
        for att in run["attempts"]:
            name, restart, state, code = self.names[att["index"]]
            att.update(attempt=name, job_id=name, restart=restart, state=state, exit_code=code)
        for it in run["interruptions"]:
            i = it["attempt_index"]
            name, _, state, code = self.names[i]
            nxt = self.names[i + 1][0]
            it.update(attempt=name, next_attempt=nxt, state=state, exit_code=code,
                      requeued_same_job=nxt.split("#")[0] == name.split("#")[0])

