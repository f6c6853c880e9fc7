"""Pod objects (``kubectl get pod X -o json`` / ``kubectl get pods -o json``) -> ATTEMPTS
rows (one per known container incarnation) and ``pod_terminated`` / ``pod_evicted`` events.

Field names: Kubernetes core/v1 Pod (k8s.io/api/core/v1/types.go: PodStatus,
ContainerStatus, ContainerStateTerminated, PodCondition). Decisions:

* An attempt is one incarnation of the pod's *main* container: the one named ``pytorch``
  (the Kubeflow training-operator's default container name, PytorchJobDefaultContainerName),
  else the first entry of ``containerStatuses``. Sidecars give events, not attempts.
* ``lastState.terminated`` is incarnation ``restartCount - 1`` and ``state`` is incarnation
  ``restartCount``; job_id is ``<pod uid>#<incarnation>``. Kubernetes keeps only these two,
  so earlier incarnations of a pod that restarted more than once are not recoverable here.
  A container that is ``waiting`` (e.g. CrashLoopBackOff) has not started its current
  incarnation: no attempt row for it.
* State: ``OOMKilled`` -> OUT_OF_MEMORY, exit code 0 -> COMPLETED, other terminations ->
  FAILED, running -> RUNNING. The pod-level verdict overrides the current incarnation:
  ``status.reason`` Evicted, or a DisruptionTarget condition (PreemptionByScheduler,
  EvictionByEvictionAPI, TerminationByKubelet) -> PREEMPTED; DeletionByTaintManager,
  DeletionByPodGC, NodeLost (node unreachable) and Terminated (graceful node shutdown,
  pkg/kubelet/nodeshutdown) -> NODE_FAIL; DeadlineExceeded (activeDeadlineSeconds) ->
  TIMEOUT. The raw reason is kept in ``reason``.
* ``run_hint``: label ``training.kubeflow.org/job-name`` (training-operator
  common_types.go JobNameLabel), older ``pytorch-job-name`` / ``job-name``, else the name of
  the controlling owner reference.
* Event ``message`` for these JSON records is composed (there is no log line): the
  termination reason and exit code, followed by the container's termination message
  (``terminationMessagePolicy: FallbackToLogsOnError`` puts the log tail there).
"""

from __future__ import annotations

from typing import Any

from parsers.base import EVENT, NOISE, Parser
from parsers.k8s_common import as_dict, as_int, as_list, as_str, first_ts, pod_gpus, ts_of

MAIN_CONTAINER = "pytorch"
_RUN_LABELS = ("training.kubeflow.org/job-name", "pytorch-job-name", "job-name")
_VERDICT = {
    "Evicted": "PREEMPTED",
    "PreemptionByScheduler": "PREEMPTED",
    "EvictionByEvictionAPI": "PREEMPTED",
    "TerminationByKubelet": "PREEMPTED",
    "DeletionByTaintManager": "NODE_FAIL",
    "DeletionByPodGC": "NODE_FAIL",
    "NodeLost": "NODE_FAIL",
    "Terminated": "NODE_FAIL",
    "DeadlineExceeded": "TIMEOUT",
}
_MAX_MESSAGE = 2000


def run_hint(meta: dict[str, Any]) -> str | None:
    """The PyTorchJob (or Job) name that links this pod's attempts into a run."""
    labels = as_dict(meta.get("labels"))
    for key in _RUN_LABELS:
        v = as_str(labels.get(key))
        if v:
            return v
    owners = [as_dict(o) for o in as_list(meta.get("ownerReferences"))]
    for o in owners:
        if o.get("controller") is True and as_str(o.get("name")):
            return as_str(o.get("name"))
    return as_str(owners[0].get("name")) if owners else None


def term_state(reason: str | None, exit_code: int | None) -> str:
    if reason == "OOMKilled":
        return "OUT_OF_MEMORY"
    if exit_code == 0:
        return "COMPLETED"
    return "FAILED"


def _pick_main(statuses: list[dict[str, Any]]) -> dict[str, Any] | None:
    for cs in statuses:
        if cs.get("name") == MAIN_CONTAINER:
            return cs
    return statuses[0] if statuses else None


class PodReader:
    """Rows for one pod; ``read`` returns the pod's accounting status."""

    def __init__(self, p: Parser, pod: dict[str, Any], rec: int) -> None:
        self.p = p
        self.rec = rec
        self.tz = p.ctx.tz
        meta = as_dict(pod.get("metadata"))
        self.spec = as_dict(pod.get("spec"))
        self.status = as_dict(pod.get("status"))
        self.name = as_str(meta.get("name"))
        ns = as_str(meta.get("namespace")) or "default"
        self.uid = as_str(meta.get("uid")) or f"{ns}/{self.name}"
        self.run_hint = run_hint(meta)
        self.node = as_str(self.spec.get("nodeName"))
        self.created = meta.get("creationTimestamp")
        self.host = {"host": self.node, "host_from": "record"} if self.node else \
            p.host_fields(None)
        self.emitted = 0

    def read(self) -> int:
        verdict, vreason, vmsg, vts = self._verdict()
        statuses = [as_dict(c) for c in as_list(self.status.get("containerStatuses"))]
        main = _pick_main(statuses)
        cur_idx = 0
        for cs in statuses:
            is_main = cs is main
            rc = as_int(cs.get("restartCount")) or 0
            if is_main:
                cur_idx = rc
            last_t = as_dict(as_dict(cs.get("lastState")).get("terminated"))
            state = as_dict(cs.get("state"))
            cur_t = as_dict(state.get("terminated"))
            running = as_dict(state.get("running"))
            if last_t:
                self._terminated(cs, last_t, max(rc - 1, 0), is_main, None, None)
            if cur_t:
                self._terminated(cs, cur_t, rc, is_main, verdict, vreason)
            elif running and is_main:
                self._record(rc, "RUNNING", None, None, None, running.get("startedAt"), None)
        for cs in (as_dict(c) for c in as_list(self.status.get("initContainerStatuses"))):
            t = as_dict(as_dict(cs.get("state")).get("terminated"))
            if t and as_int(t.get("exitCode")) not in (0, None):
                self._terminated(cs, t, 0, False, None, None)
        if verdict is not None:
            if main is None:  # evicted/lost before any container status was recorded
                self._record(0, verdict, vreason, None, None, self.status.get("startTime"),
                             vts)
            self.p.events.add(ts=vts[0], ts_flag=vts[1], kind="pod_evicted", code=vreason,
                              job_id=f"{self.uid}#{cur_idx}", device=self.name,
                              message=vmsg, line_no=self.rec, source="k8s_pod",
                              format="k8s_pod", **self.host)
            self.emitted += 1
        return EVENT if self.emitted else NOISE

    def _verdict(self) -> tuple[str | None, str | None, str | None, tuple[int | None, str]]:
        """Pod-level end verdict: (state, reason, message, (ts, flag))."""
        reason = as_str(self.status.get("reason"))
        message = as_str(self.status.get("message"))
        conds = [as_dict(c) for c in as_list(self.status.get("conditions"))]
        disruption = next((c for c in conds if c.get("type") == "DisruptionTarget"
                           and c.get("status") == "True"), None)
        if reason not in _VERDICT and disruption is not None:
            reason = as_str(disruption.get("reason"))
            message = as_str(disruption.get("message")) or message
        if reason not in _VERDICT:
            return None, None, None, (None, "missing")
        ready = next((c for c in conds if c.get("type") == "Ready"
                      and c.get("status") == "False"), {})
        finished = [as_dict(as_dict(as_dict(c).get("state")).get("terminated")).get("finishedAt")
                    for c in as_list(self.status.get("containerStatuses"))]
        latest = max((f for f in finished if isinstance(f, str)), default=None)
        ts = first_ts(self.tz, (disruption or {}).get("lastTransitionTime"), latest,
                      ready.get("lastTransitionTime"))
        return _VERDICT[reason or ""], reason, message, ts

    def _terminated(self, cs: dict[str, Any], t: dict[str, Any], idx: int, is_main: bool,
                    verdict: str | None, vreason: str | None) -> None:
        reason = as_str(t.get("reason"))
        code = as_int(t.get("exitCode"))
        sig = as_int(t.get("signal"))
        cname = as_str(cs.get("name")) or "?"
        text = f"container {cname} terminated: {reason or 'no reason'} (exit code {code}"
        text += f", signal {sig})" if sig else ")"
        tmsg = as_str(t.get("message"))
        if tmsg:
            text = f"{text}: {tmsg.strip()}"[:_MAX_MESSAGE]
        ts, flag = ts_of(t.get("finishedAt"), self.tz)
        self.p.events.add(ts=ts, ts_flag=flag, kind="pod_terminated", code=reason,
                          job_id=f"{self.uid}#{idx}", value=float(code) if code is not None
                          else None, device=cname, message=text, line_no=self.rec,
                          source="k8s_pod", format="k8s_pod", **self.host)
        self.emitted += 1
        if is_main:
            state = verdict or term_state(reason, code)
            self._record(idx, state, vreason or reason, code, sig, t.get("startedAt"),
                         ts_of(t.get("finishedAt"), self.tz))

    def _record(self, idx: int, state: str, reason: str | None, code: int | None,
                sig: int | None, started: Any, end: tuple[int | None, str] | None) -> None:
        submit = ts_of(self.created, self.tz)[0] if idx == 0 else None
        self.p.records.add(
            source="k8s_pod", job_id=f"{self.uid}#{idx}", name=self.name,
            run_hint=self.run_hint, state=state, reason=reason, exit_code=code, signal=sig,
            submit=submit, start=ts_of(started, self.tz)[0],
            end=end[0] if end else None, nodes=[self.node] if self.node else None,
            node_count=1 if self.node else None, gpus=pod_gpus(self.spec),
            restart_count=idx, line_no=self.rec)
        self.emitted += 1


def handle_pod(p: Parser, pod: dict[str, Any], rec: int) -> int:
    """Rows for one Pod object (record number ``rec``); EVENT if any row, else NOISE."""
    return PodReader(p, pod, rec).read()
