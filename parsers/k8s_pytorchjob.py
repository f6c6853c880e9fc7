"""Kubeflow PyTorchJob objects (``kubectl get pytorchjob NAME -o json``, or a List) ->
one ATTEMPTS row per job and a ``pytorchjob_condition`` event per status condition.

Field names: kubeflow/training-operator pkg/apis/kubeflow.org/v1 (pytorch_types.go:
PyTorchJobSpec.runPolicy / elasticPolicy / pytorchReplicaSpecs; common_types.go: JobStatus
conditions / replicaStatuses / startTime / completionTime, JobCondition type / status /
reason / message / lastUpdateTime / lastTransitionTime). Condition types: Created, Running,
Restarting, Succeeded, Failed, Suspended; reasons ``PyTorchJob<Type>`` (training-operator
util.NewReason, and the older pytorch-operator constants).

Decisions:

* The job's state is the type of the last condition whose status is "True" (the operator
  appends the newest condition last and sets Running to False when the job finishes):
  Succeeded -> COMPLETED, Failed -> FAILED, Running / Restarting -> RUNNING (the job as a
  whole is still active; ``reason`` says PyTorchJobRestarting), Created -> PENDING,
  Suspended -> SUSPENDED.
* start = status.startTime; end = status.completionTime, else the terminal condition's
  lastTransitionTime for a finished job.
* gpus = sum over replica types of replicas x the pod template's ``nvidia.com/gpu`` limit;
  node_count = total replicas (one pod per node, the usual layout for GPU training).
  ``replicas`` defaults to 1 when absent (ReplicaSpec doc).
* runPolicy.backoffLimit and elasticPolicy.maxRestarts have no column in ATTEMPTS; the
  number of restarts is not in the job status (replicaStatuses has active / succeeded /
  failed only), so restart_count stays null.
"""

from __future__ import annotations

from typing import Any

from parsers.base import EVENT, Parser
from parsers.k8s_common import as_dict, as_int, as_list, as_str, first_ts, pod_gpus, ts_of

_STATE = {
    "Created": "PENDING",
    "Running": "RUNNING",
    "Restarting": "RUNNING",
    "Suspended": "SUSPENDED",
    "Succeeded": "COMPLETED",
    "Failed": "FAILED",
}


def handle_pytorchjob(p: Parser, job: dict[str, Any], rec: int) -> int:
    """Rows for one PyTorchJob object (record number ``rec``): always an attempt row."""
    tz = p.ctx.tz
    meta = as_dict(job.get("metadata"))
    spec = as_dict(job.get("spec"))
    status = as_dict(job.get("status"))
    name = as_str(meta.get("name"))
    ns = as_str(meta.get("namespace")) or "default"
    uid = as_str(meta.get("uid")) or f"{ns}/{name}"
    conds = [as_dict(c) for c in as_list(status.get("conditions"))]
    for c in conds:
        ts, flag = first_ts(tz, c.get("lastTransitionTime"), c.get("lastUpdateTime"))
        text = ": ".join(x for x in (as_str(c.get("reason")), as_str(c.get("message"))) if x)
        st = as_str(c.get("status"))
        if st and st != "True":
            text = f"{text} (status {st})"
        p.events.add(ts=ts, ts_flag=flag, kind="pytorchjob_condition",
                     code=as_str(c.get("type")), job_id=uid, device=name, message=text,
                     line_no=rec, host=None, host_from="unknown", source="pytorchjob",
                     format="pytorchjob")
    true = [c for c in conds if c.get("status") == "True"]
    last = true[-1] if true else (conds[-1] if conds else {})
    ctype = as_str(last.get("type"))
    state = _STATE.get(ctype, ctype.upper()) if ctype else None
    end = ts_of(status.get("completionTime"), tz)[0]
    if end is None and state in ("COMPLETED", "FAILED"):
        end = first_ts(tz, last.get("lastTransitionTime"), last.get("lastUpdateTime"))[0]
    gpus: int | None = None
    replicas = 0
    for rs in (as_dict(r) for r in as_dict(spec.get("pytorchReplicaSpecs")).values()):
        n = as_int(rs.get("replicas"))
        n = 1 if n is None else n
        replicas += n
        g = pod_gpus(as_dict(as_dict(rs.get("template")).get("spec")))
        if g is not None:
            gpus = (gpus or 0) + n * g
    p.records.add(source="pytorchjob", job_id=uid, name=name, run_hint=name, state=state,
                  reason=as_str(last.get("reason")),
                  submit=ts_of(meta.get("creationTimestamp"), tz)[0],
                  start=ts_of(status.get("startTime"), tz)[0], end=end,
                  node_count=replicas or None, gpus=gpus, line_no=rec)
    return EVENT
