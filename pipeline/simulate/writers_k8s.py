"""Kubernetes objects of a simulated campaign: the core/v1 Event list (``kubectl get events -o
json``), the Pod list (``kubectl get pods -o json``) and the Kubeflow PyTorchJob (``kubectl get
pytorchjob NAME -o json``). JSON is written as kubectl prints it: 4-space indent, keys sorted.

Event texts (reason / message / source), as the components record them:

* kubelet (pkg/kubelet/kuberuntime, pkg/kubelet/images, event reasons pkg/kubelet/events):
  ``Pulled`` "Container image %q already present on machine", ``Created`` "Created container
  %s", ``Started`` "Started container %s", ``Killing`` "Stopping container %s", ``BackOff``
  "Back-off restarting failed container %s in pod %s" (pod = format.Pod: ``name_ns(uid)``);
  node events "Node %s status is now: %s" (``NodeNotSchedulable``, recordNodeSchedulableEvent);
  ``SystemOOM`` "System OOM encountered, victim process: %s, pid: %d" (pkg/kubelet/oom).
* node lifecycle controller (pkg/controller/nodelifecycle, util/controller_utils.go): node
  ``NodeNotReady`` "Node %s status is now: NodeNotReady" (source node-controller) and, on each
  pod of the node, Warning ``NodeNotReady`` "Node is not ready" (MarkPodsNotReady).
* taint eviction (pkg/controller/tainteviction/taint_eviction.go emitPodDeletionEvent):
  ``TaintManagerEviction`` "Marking for deletion Pod %s" (namespace/name; the reference has no
  uid), source taint-eviction-controller.
* scheduler (events.k8s.io recorder: eventTime, action, reportingController/Instance, empty
  source): ``Scheduled`` action Binding "Successfully assigned %v/%v to %v" (schedule_one.go);
  ``Preempted`` action Preempting "Preempted by pod %v on node %v" (framework/preemption);
  ``FailedScheduling`` "0/N nodes are available: ..." with a ``series`` while it repeats
  (layout as in sample_logs/real_formats/k8s/pods.json).
* training-operator (pkg/controller.v1/pytorch/pytorchjob_controller.go, common pod control):
  ``SuccessfulCreatePod`` "Created pod: %v", ``PyTorchJobSucceeded`` "PyTorchJob %s is
  successfully completed."; conditions ``PyTorchJobCreated`` "PyTorchJob %s is created.",
  ``PyTorchJobRunning`` "PyTorchJob %s is running.".

Event object names are ``<object>.<hex unix nanoseconds>`` as client-go's recorder makes them;
the list is in name order, as the API server returns keys.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipeline.simulate import writers_joblog as jl
from pipeline.simulate.logsink import WATCHDOG_CATEGORIES
from pipeline.simulate.params import Settings
from pipeline.simulate.records import Attempt
from pipeline.simulate.timefmt import Clock

NS = "default"
CONTAINER = "pytorch"  #: training-operator's default container name
IMAGE = "nvcr.io/nvidia/pytorch:24.01-py3"
OPERATOR = "pytorchjob-controller"
SCHEDULER = "default-scheduler"
JOB_LABEL = "training.kubeflow.org/job-name"


def new_uid(rng: np.random.Generator) -> str:
    """A version-4 UUID drawn from ``rng`` (deterministic per seed)."""
    b = bytearray(rng.bytes(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=4, sort_keys=True) + "\n"


@dataclass
class Pod:
    """One pod object (a replica keeps its name; a recreated pod gets a new uid)."""

    name: str
    rtype: str  #: Master / Worker
    index: int
    uid: str
    node: str
    created: float
    scheduled: float
    restarts: int = 0  #: container restartCount (incarnation number of the current one)
    started: float = 0.0  #: current container startedAt
    cid: str = ""  #: current containerID
    last: dict[str, Any] | None = None  #: lastState.terminated
    final: dict[str, Any] | None = None  #: state.terminated at the end
    gone: bool = False  #: deleted (node lost, preempted, drained): recreated at the next start
    extra: dict[str, Any] = field(default_factory=dict)

    def ref(self) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "name": self.name, "namespace": NS,
                "uid": self.uid}


def node_ref(node: str, uid: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "name": node, "uid": uid}


class EventLog:
    """Events collected during the campaign; ``document`` returns the List."""

    def __init__(self, clock: Clock, rng: np.random.Generator) -> None:
        self.clock, self.rng = clock, rng
        self.items: dict[str, dict[str, Any]] = {}
        self.rv = 88000000
        self.epoch_ns = int(clock.epoch.timestamp()) * 1_000_000_000

    def _meta(self, obj_name: str, t: float) -> dict[str, Any]:
        ns = self.epoch_ns + round(t * 1e6) * 1000
        name = f"{obj_name}.{ns:x}"
        while name in self.items:
            ns += 1
            name = f"{obj_name}.{ns:x}"
        self.rv += 1
        return {"creationTimestamp": self.clock.k8s(t), "name": name, "namespace": NS,
                "resourceVersion": str(self.rv), "uid": new_uid(self.rng)}

    def add(self, t: float, obj: dict[str, Any], reason: str, message: str,
            etype: str = "Normal", component: str = "kubelet", host: str | None = None,
            count: int = 1, t_last: float | None = None, container: bool = False) -> None:
        """A core/v1 event recorded through client-go's record.EventRecorder."""
        inv = dict(obj)
        if container:
            inv["fieldPath"] = f"spec.containers{{{CONTAINER}}}"
        meta = self._meta(inv["name"], t)
        src: dict[str, str] = {"component": component}
        if host:
            src["host"] = host
        self.items[meta["name"]] = {
            "apiVersion": "v1", "count": count, "eventTime": None,
            "firstTimestamp": self.clock.k8s(t), "involvedObject": inv, "kind": "Event",
            "lastTimestamp": self.clock.k8s(t if t_last is None else t_last),
            "message": message, "metadata": meta, "reason": reason,
            "reportingComponent": component if component == "kubelet" else "",
            "reportingInstance": host or "", "source": src, "type": etype}

    def add_new(self, t: float, obj: dict[str, Any], reason: str, action: str, message: str,
                etype: str = "Normal", count: int = 1, t_last: float | None = None,
                related: dict[str, Any] | None = None) -> None:
        """A scheduler event (events.k8s.io recorder, read back through core/v1)."""
        meta = self._meta(obj["name"], t)
        ev: dict[str, Any] = {
            "action": action, "apiVersion": "v1", "eventTime": self.clock.iso(t),
            "firstTimestamp": None, "involvedObject": dict(obj), "kind": "Event",
            "lastTimestamp": None, "message": message, "metadata": meta, "reason": reason,
            "reportingComponent": SCHEDULER, "reportingInstance": f"{SCHEDULER}-cp-1",
            "source": {}, "type": etype}
        if related is not None:
            ev["related"] = related
        if count > 1 and t_last is not None:
            ev["series"] = {"count": count, "lastObservedTime": self.clock.iso(t_last)}
        self.items[meta["name"]] = ev

    def document(self) -> dict[str, Any]:
        return {"apiVersion": "v1", "items": [self.items[k] for k in sorted(self.items)],
                "kind": "List", "metadata": {"resourceVersion": ""}}


def terminated(clock: Clock, cid: str, code: int, reason: str, start: float,
               end: float) -> dict[str, Any]:
    """core/v1 ContainerStateTerminated."""
    return {"containerID": cid, "exitCode": code, "finishedAt": clock.k8s(end),
            "reason": reason, "startedAt": clock.k8s(start)}


def _resources(gpn: int) -> dict[str, Any]:
    lim = {"nvidia.com/gpu": str(gpn)}
    return {"limits": dict(lim), "requests": dict(lim)}


def pod_doc(p: Pod, clock: Clock, job: str, job_uid: str, gpn: int, image_id: str,
            host_ip: str, pod_ip: str, end: float) -> dict[str, Any]:
    """The pod as ``kubectl get pods -o json`` shows it after the job succeeded."""
    cs = {"containerID": p.cid, "image": IMAGE, "imageID": image_id,
          "lastState": {"terminated": p.last} if p.last else {}, "name": CONTAINER,
          "ready": False, "restartCount": p.restarts, "started": False,
          "state": {"terminated": p.final} if p.final else
          {"running": {"startedAt": clock.k8s(p.started)}}}
    done = p.final is not None
    conds = [
        {"lastProbeTime": None, "lastTransitionTime": clock.k8s(p.scheduled),
         "status": "True", "type": "PodScheduled"},
        {"lastProbeTime": None, "lastTransitionTime": clock.k8s(end if done else p.started),
         "status": "False" if done else "True", "type": "Ready"},
    ]
    if done:
        conds[1]["reason"] = "PodCompleted"
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "creationTimestamp": clock.k8s(p.created),
            "labels": {JOB_LABEL: job, "training.kubeflow.org/operator-name": OPERATOR,
                       "training.kubeflow.org/replica-index": str(p.index),
                       "training.kubeflow.org/replica-type": p.rtype.lower()},
            "name": p.name, "namespace": NS,
            "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "blockOwnerDeletion": True,
                                 "controller": True, "kind": "PyTorchJob", "name": job,
                                 "uid": job_uid}],
            "resourceVersion": str(p.extra.get("rv", 0)), "uid": p.uid},
        "spec": {"containers": [{"image": IMAGE, "name": CONTAINER,
                                 "resources": _resources(gpn)}],
                 "nodeName": p.node, "restartPolicy": "OnFailure"},
        "status": {"conditions": conds, "containerStatuses": [cs], "hostIP": host_ip,
                   "phase": "Succeeded" if done else "Running", "podIP": pod_ip,
                   "qosClass": "BestEffort", "startTime": clock.k8s(p.scheduled)},
    }


def pytorchjob_doc(clock: Clock, job: str, uid: str, workers: int, gpn: int, created: float,
                   running: float, end: float) -> dict[str, Any]:
    """The PyTorchJob after success: Created, Running (status False: kubeflow common
    filterOutCondition flips it, keeping its times, when Succeeded is appended), Succeeded."""
    def spec(n: int) -> dict[str, Any]:
        return {"replicas": n, "restartPolicy": "OnFailure",
                "template": {"spec": {"containers": [
                    {"image": IMAGE, "name": CONTAINER,
                     "resources": {"limits": {"nvidia.com/gpu": gpn}}}]}}}

    def cond(ctype: str, status: str, t: float, msg: str) -> dict[str, Any]:
        return {"lastTransitionTime": clock.k8s(t), "lastUpdateTime": clock.k8s(t),
                "message": msg, "reason": f"PyTorchJob{ctype}", "status": status,
                "type": ctype}

    sel = f"{JOB_LABEL}={job},training.kubeflow.org/operator-name={OPERATOR}," \
          "training.kubeflow.org/replica-type="
    replicas = {"Master": spec(1)}
    status_r: dict[str, Any] = {"Master": {"selector": sel + "master", "succeeded": 1}}
    if workers:
        replicas["Worker"] = spec(workers)
        status_r["Worker"] = {"selector": sel + "worker", "succeeded": workers}
    return {
        "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
        "metadata": {"creationTimestamp": clock.k8s(created), "generation": 1, "name": job,
                     "namespace": NS, "resourceVersion": "88999999", "uid": uid},
        "spec": {"pytorchReplicaSpecs": replicas,
                 "runPolicy": {"cleanPodPolicy": "None", "suspend": False}},
        "status": {
            "completionTime": clock.k8s(end),
            "conditions": [
                cond("Created", "True", created, f"PyTorchJob {job} is created."),
                cond("Running", "False", running, f"PyTorchJob {job} is running."),
                cond("Succeeded", "True", end, f"PyTorchJob {job} is successfully completed."),
            ],
            "replicaStatuses": status_r, "startTime": clock.k8s(running)},
    }


def failure_lines(a: Attempt, s: Settings, rng: np.random.Generator, gpn: int, clock: Clock,
                  seq: int) -> tuple[list[str], int]:
    """Output of master-0's torchrun at the failure (the Slurm flavour's job-output lines
    without srun/slurmstepd); nothing when the container is killed (OOM, preemption)."""
    f = a.fault
    assert f is not None
    if f.category in ("oom_host", "preemption", "scheduler", "node_failure"):
        return [], seq
    host = a.nodes[0]
    rank = f.rank if f.rank is not None and f.rank < gpn else int(rng.integers(gpn))
    pid = int(rng.integers(10000, 60000))
    out: list[str] = []
    exitcode = 1
    if f.category in WATCHDOG_CATEGORIES and not f.in_startup:
        seq += int(rng.integers(1000, 5000))
        op = 40 * max(a.last_iteration, 1) + seq % 40  # collective sequence number
        ran = max(int(min(f.detect_s * 1000.0, s.nccl_timeout_ms + 90)),
                  s.nccl_timeout_ms + 1)
        out += jl.watchdog(rank, op, ran + int(rng.integers(0, 40)), s.nccl_timeout_ms, 1)
        exitcode = -6
    elif f.category == "network":
        peer = f"10.0.{int(rng.integers(0, 255))}.{int(rng.integers(1, 255))}"
        out.append(jl.nccl_ib_warn(host, pid, pid + int(rng.integers(30, 90)), rank, peer,
                                   int(rng.integers(30000, 60000))))
    else:
        out += jl.exception_lines(f.category, rank, s.ckpt_dir, a.last_iteration)
    stamp = clock.dt(a.end - 1.0).strftime("%Y-%m-%d_%H:%M:%S")
    out += jl.child_failed(host, rank, rank, exitcode, pid, stamp)
    return out, seq


def host_ip(node: str) -> str:
    """Node InternalIP (status.hostIP of its pods), from the node's number."""
    m = re.search(r"(\d+)$", node)
    i = int(m.group(1)) if m else 0
    return f"10.42.{i // 250}.{i % 250 + 2}"
