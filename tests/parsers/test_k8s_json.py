"""kubectl -o json documents: events (core/v1, events.k8s.io/v1), pods, PyTorchJobs.

Field names: k8s.io/api core/v1/types.go (Event, Pod, ContainerStatus, PodCondition),
events/v1/types.go; Kubeflow training-operator pkg/apis/kubeflow.org/v1 (common_types.go,
pytorch_types.go). Messages: see sample_logs/real_formats/k8s/NOTES.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from parsers.k8s_json import K8sEventsJsonParser, K8sPodParser, PyTorchJobParser
from tests.parsers.util import parse, pick

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "real_formats" / "k8s"
UID3 = "5b1c6a2e-8f0d-4d7b-9a51-2f3c4e5d6a7b"
UID1 = "a41f0c9d-3e2b-4c5a-9d8e-7f6a5b4c3d2e"
UIDM = "c2d3e4f5-a6b7-4c8d-9e0f-1a2b3c4d5e6f"
JOBUID = "f0e1d2c3-b4a5-4968-8776-5a4b3c2d1e0f"
REC_KEYS = ("source", "job_id", "name", "run_hint", "state", "reason", "exit_code", "signal",
            "submit", "start", "end", "nodes", "node_count", "gpus", "restart_count", "line_no")


def ev(ts: str | None, host: str | None, kind: str, job: str | None, code: str | None,
       value: float | None, device: str | None) -> dict[str, Any]:
    return {"ts": ts, "host": host, "kind": kind, "job_id": job, "rank": None, "code": code,
            "iteration": None, "value": value, "device": device}


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def test_core_v1_events() -> None:
    events, records, acct = parse(K8sEventsJsonParser, sample("events.json"), "events.json")
    assert pick(events) == [
        # eventTime-only event from the scheduler; host from "Successfully assigned ... to"
        ev("2024-05-14T08:58:02.418392Z", "node017", "k8s_event", UID3, "Scheduled", 1.0,
           "pod/llama-pretrain-worker-3"),
        # node-problem-detector kernel-monitor event on the Node (source.host)
        ev("2024-05-14T09:41:07Z", "node017", "k8s_event", None, "OOMKilling", 1.0,
           "node/node017"),
        ev("2024-05-14T09:57:40Z", "node017", "k8s_event", UID3, "BackOff", 7.0,
           "pod/llama-pretrain-worker-3"),
        # the same BackOff event's first occurrence (count 7: firstTimestamp .. lastTimestamp)
        ev("2024-05-14T09:41:12Z", "node017", "k8s_event_first", UID3, "BackOff", 7.0,
           "pod/llama-pretrain-worker-3"),
        ev("2024-05-14T09:50:03Z", "node021", "k8s_event", None, "NodeNotReady", 1.0,
           "node/node021"),
        ev("2024-05-14T09:56:11Z", None, "k8s_event", JOBUID, "PyTorchJobRestarting", 1.0,
           "pytorchjob/llama-pretrain"),
    ]
    assert [e["ts_flag"] for e in events] == ["exact"] * 6
    assert [e["host_from"] for e in events] == ["record"] * 5 + ["unknown"]
    assert events[5]["message"] == (
        "PyTorchJob llama-pretrain is restarting because 1 Worker replica(s) failed.")
    assert {e["source"] for e in events} == {"k8s_events_json"}
    assert [e["line_no"] for e in events] == [1, 2, 3, 3, 4, 5]
    assert records == []
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (5, 5, 0, 0)


def test_events_k8s_io_v1() -> None:
    events, _, acct = parse(K8sEventsJsonParser, sample("events-events.k8s.io-v1.json"),
                            "ev.json")
    assert pick(events) == [
        # scheduler preemption: "Preempted by pod %v on node %v", regarding = the victim
        ev("2024-05-14T10:12:44.913027Z", "node030", "k8s_event",
           "9b8a7f6e-5d4c-4b3a-8f2e-1d0c9b8a7f6e", "Preempted", 1.0, "pod/llama-eval-worker-0"),
    ]
    assert events[0]["format"] == "events.k8s.io/v1"
    assert acct.events == 1


def test_bad_items_accounted() -> None:
    doc = {"apiVersion": "v1", "kind": "List", "items": [
        "not an object",
        {"metadata": {"name": "x"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "llama-pretrain-master-0",
                                                            "namespace": "default"}},
    ]}
    events, records, acct = parse(K8sEventsJsonParser, json.dumps(doc), "x.json")
    assert events == [] and records == []
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (3, 0, 1, 2)
    assert acct.samples[0] == (1, "item 1: not an object: not an object")


def test_events_without_their_times(tmp_path: Path) -> None:
    """The sample's first event with its times taken out (a tool that trimmed fields): its
    metadata.creationTimestamp is the time; with that gone too it is kept untimed and the
    file's note counts it. Such events were read untimed without a word, and moved a
    campaign's start by 4 minutes."""
    from parsers.driver import parse_file
    from parsers.reader import InputFile

    doc = json.loads(sample("events.json"))
    first = doc["items"][0]
    for k in ("lastTimestamp", "firstTimestamp", "eventTime"):
        first.pop(k, None)
    created = first["metadata"]["creationTimestamp"]
    events, _, _ = parse(K8sEventsJsonParser, json.dumps(doc), "events.json")
    assert events[0]["ts"].isoformat().replace("+00:00", "Z") == created
    assert events[0]["ts_flag"] == "exact"
    del first["metadata"]["creationTimestamp"]
    f = tmp_path / "events.json"
    f.write_text(json.dumps(doc))
    got: list[Any] = []
    res = parse_file(InputFile(f, str(f)), got.append, lambda b: None,
                     source=K8sEventsJsonParser)
    rows = [r for b in got for r in b.to_pylist()]
    assert rows[0]["ts"] is None and rows[0]["ts_flag"] == "missing"
    assert all(r["ts"] is not None for r in rows[1:])
    assert res.note is not None and res.note.startswith("1 event(s) carry no time")


def test_pods_attempts_and_events() -> None:
    events, records, acct = parse(K8sPodParser, sample("pods.json"), "pods.json")
    assert pick(records, REC_KEYS) == [
        {"source": "k8s_pod", "job_id": f"{UIDM}#0", "name": "llama-pretrain-master-0",
         "run_hint": "llama-pretrain", "state": "RUNNING", "reason": None, "exit_code": None,
         "signal": None, "submit": "2024-05-14T08:58:01Z", "start": "2024-05-14T08:58:11Z",
         "end": None, "nodes": ["node009"], "node_count": 1, "gpus": 8, "restart_count": 0,
         "line_no": 1},
        # kubelet eviction: status.reason Evicted + DisruptionTarget TerminationByKubelet
        {"source": "k8s_pod", "job_id": f"{UID1}#0", "name": "llama-pretrain-worker-1",
         "run_hint": "llama-pretrain", "state": "PREEMPTED", "reason": "Evicted",
         "exit_code": 137, "signal": None, "submit": "2024-05-14T08:58:01Z",
         "start": "2024-05-14T08:58:10Z", "end": "2024-05-14T10:07:33Z",
         "nodes": ["node012"], "node_count": 1, "gpus": 8, "restart_count": 0, "line_no": 2},
        # lastState.terminated OOMKilled = incarnation restartCount-1; state.running = #1
        {"source": "k8s_pod", "job_id": f"{UID3}#0", "name": "llama-pretrain-worker-3",
         "run_hint": "llama-pretrain", "state": "OUT_OF_MEMORY", "reason": "OOMKilled",
         "exit_code": 137, "signal": None, "submit": "2024-05-14T08:58:01Z",
         "start": "2024-05-14T08:58:09Z", "end": "2024-05-14T09:41:07Z",
         "nodes": ["node017"], "node_count": 1, "gpus": 8, "restart_count": 0, "line_no": 3},
        {"source": "k8s_pod", "job_id": f"{UID3}#1", "name": "llama-pretrain-worker-3",
         "run_hint": "llama-pretrain", "state": "RUNNING", "reason": None, "exit_code": None,
         "signal": None, "submit": None, "start": "2024-05-14T09:58:02Z", "end": None,
         "nodes": ["node017"], "node_count": 1, "gpus": 8, "restart_count": 1, "line_no": 3},
    ]
    assert pick(events) == [
        ev("2024-05-14T10:07:33Z", "node012", "pod_terminated", f"{UID1}#0", "Error", 137.0,
           "pytorch"),
        ev("2024-05-14T10:07:31Z", "node012", "pod_evicted", f"{UID1}#0", "Evicted", None,
           "llama-pretrain-worker-1"),
        ev("2024-05-14T09:41:07Z", "node017", "pod_terminated", f"{UID3}#0", "OOMKilled",
           137.0, "pytorch"),
    ]
    assert events[2]["message"] == "container pytorch terminated: OOMKilled (exit code 137)"
    assert events[1]["message"].startswith("The node was low on resource: memory.")
    # the Pending (unschedulable) pod has no execution: recognised, no signal
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (4, 3, 1, 0)


def _pod(status: dict[str, Any], labels: dict[str, str] | None = None,
         owners: list[dict[str, Any]] | None = None) -> str:
    meta: dict[str, Any] = {"name": "llama-pretrain-worker-2", "namespace": "default",
                            "uid": "u2", "creationTimestamp": "2024-05-14T08:58:01Z"}
    if labels is not None:
        meta["labels"] = labels
    if owners is not None:
        meta["ownerReferences"] = owners
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                       "spec": {"nodeName": "node014", "containers": [
                           {"name": "istio-proxy"}, {"name": "pytorch"}]},
                       "status": status})


def test_pod_completed_main_container_and_sidecar() -> None:
    # single Pod object (kubectl get pod X -o json); main container is "pytorch", not the
    # first one; older pytorch-operator label; termination message with the log tail
    status = {"phase": "Succeeded", "containerStatuses": [
        {"name": "istio-proxy", "restartCount": 0, "state": {"terminated": {
            "exitCode": 0, "reason": "Completed", "startedAt": "2024-05-14T08:58:05Z",
            "finishedAt": "2024-05-15T02:00:03Z"}}},
        {"name": "pytorch", "restartCount": 0, "state": {"terminated": {
            "exitCode": 0, "reason": "Completed", "startedAt": "2024-05-14T08:58:09Z",
            "finishedAt": "2024-05-15T02:00:01Z", "message": "training done\n"}}},
    ]}
    events, records, _ = parse(K8sPodParser, _pod(status, {"pytorch-job-name": "llama-old"}),
                               "pod.json")
    assert [(r["job_id"], r["state"], r["reason"], r["exit_code"], r["run_hint"])
            for r in records] == [("u2#0", "COMPLETED", "Completed", 0, "llama-old")]
    assert [(e["code"], e["device"], e["value"]) for e in events] == [
        ("Completed", "istio-proxy", 0.0), ("Completed", "pytorch", 0.0)]
    assert events[1]["message"] == (
        "container pytorch terminated: Completed (exit code 0): training done")


def test_pod_failed_signal_and_owner_run_hint() -> None:
    status = {"phase": "Running", "containerStatuses": [
        {"name": "pytorch", "restartCount": 2,
         "lastState": {"terminated": {"exitCode": 134, "reason": "Error", "signal": 6,
                                      "startedAt": "2024-05-14T09:00:00Z",
                                      "finishedAt": "2024-05-14T09:30:00Z"}},
         "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
    owners = [{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "llama-pretrain",
               "controller": True, "uid": "j"}]
    events, records, _ = parse(K8sPodParser, _pod(status, {}, owners), "pod.json")
    assert [(r["job_id"], r["state"], r["exit_code"], r["signal"], r["run_hint"],
             r["restart_count"]) for r in records] == [
        ("u2#1", "FAILED", 134, 6, "llama-pretrain", 1)]
    assert events[0]["message"] == (
        "container pytorch terminated: Error (exit code 134, signal 6)")


def test_pytorchjob_restarting() -> None:
    events, records, acct = parse(PyTorchJobParser, sample("pytorchjob.json"), "ptj.json")
    assert pick(events) == [
        ev("2024-05-14T08:58:00Z", None, "pytorchjob_condition", JOBUID, "Created", None,
           "llama-pretrain"),
        ev("2024-05-14T10:07:35Z", None, "pytorchjob_condition", JOBUID, "Restarting", None,
           "llama-pretrain"),
    ]
    assert events[1]["message"] == ("PyTorchJobRestarting: PyTorchJob llama-pretrain is "
                                    "restarting because 1 Worker replica(s) failed.")
    assert pick(records, REC_KEYS) == [
        {"source": "pytorchjob", "job_id": JOBUID, "name": "llama-pretrain",
         "run_hint": "llama-pretrain", "state": "RUNNING", "reason": "PyTorchJobRestarting",
         "exit_code": None, "signal": None, "submit": "2024-05-14T08:58:00Z",
         "start": "2024-05-14T08:58:02Z", "end": None, "nodes": None, "node_count": 8,
         "gpus": 64, "restart_count": None, "line_no": 1},
    ]
    assert acct.events == 1


def test_pytorchjob_succeeded_list() -> None:
    # conditions as training-operator leaves them: Running set to False when the job
    # succeeds (pkg/util/status.go filterOutCondition)
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
           "metadata": {"name": "llama-sft", "namespace": "default", "uid": "j2",
                        "creationTimestamp": "2024-05-01T00:00:00Z"},
           "spec": {"pytorchReplicaSpecs": {"Worker": {"template": {"spec": {"containers": [
               {"name": "pytorch", "resources": {"requests": {"nvidia.com/gpu": "4"}}}]}}}}},
           "status": {"conditions": [
               {"type": "Created", "status": "True", "reason": "PyTorchJobCreated",
                "message": "PyTorchJob llama-sft is created.",
                "lastTransitionTime": "2024-05-01T00:00:00Z"},
               {"type": "Running", "status": "False", "reason": "PyTorchJobRunning",
                "message": "PyTorchJob default/llama-sft is running.",
                "lastTransitionTime": "2024-05-01T00:00:30Z"},
               {"type": "Succeeded", "status": "True", "reason": "PyTorchJobSucceeded",
                "message": "PyTorchJob default/llama-sft successfully completed.",
                "lastTransitionTime": "2024-05-01T06:00:00Z"}],
               "startTime": "2024-05-01T00:00:05Z"}}
    doc = json.dumps({"apiVersion": "v1", "kind": "List", "items": [job]})
    events, records, _ = parse(PyTorchJobParser, doc, "jobs.json")
    assert [(r["state"], r["reason"], r["end"].isoformat(), r["gpus"], r["node_count"])
            for r in records] == [
        ("COMPLETED", "PyTorchJobSucceeded", "2024-05-01T06:00:00+00:00", 4, 1)]
    assert events[1]["message"] == (
        "PyTorchJobRunning: PyTorchJob default/llama-sft is running. (status False)")


def test_mixed_list_dispatches_by_kind() -> None:
    pods = json.loads(sample("pods.json"))["items"][:1]
    job = json.loads(sample("pytorchjob.json"))
    doc = json.dumps({"apiVersion": "v1", "kind": "List", "items": [job, *pods]})
    _, records, acct = parse(PyTorchJobParser, doc, "mixed.json")
    assert [r["source"] for r in records] == ["pytorchjob", "k8s_pod"]
    assert acct.events == 2


def test_invalid_json_is_unparsed_file() -> None:
    events, records, acct = parse(K8sPodParser, '{"apiVersion": "v1", "items": [', "p.json")
    assert events == [] and records == []
    assert acct.unparsed == acct.read == 1


SNIFF = {
    "events.json": "k8s_events_json",
    "events-events.k8s.io-v1.json": "k8s_events_json",
    "pods.json": "k8s_pod",
    "pytorchjob.json": "pytorchjob",
}
PARSERS = {"k8s_events_json": K8sEventsJsonParser, "k8s_pod": K8sPodParser,
           "pytorchjob": PyTorchJobParser}


@pytest.mark.parametrize(("name", "owner"), sorted(SNIFF.items()))
def test_sniff_only_own_shape(name: str, owner: str) -> None:
    head = sample(name)
    for pname, cls in PARSERS.items():
        score = cls.sniff(head, name)
        if pname == owner:
            assert score >= 90, pname
        else:
            assert score < 30, pname


@pytest.mark.parametrize("head", [
    # Slurm sacct --json
    '{\n  "meta": {\n    "plugin": {\n      "type": "openapi/v0.0.39"\n    }\n  },\n  "jobs": [\n',
    "[ 8123.456789] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen "
    "off the bus.\n",
    "LAST SEEN   TYPE      REASON    OBJECT         MESSAGE\n",
])
def test_sniff_others_low(head: str) -> None:
    for cls in PARSERS.values():
        assert cls.sniff(head, "x.json") < 30


@pytest.mark.parametrize(("head", "is_doc"), [
    # slurmctld's envelope (src/common/log.c, LogTimeFormat=iso8601_ms): a log, not an array
    ("[2024-05-01T10:00:00.123] sched: Allocate JobId=12 NodeList=n[1-4] #CPUs=8 "
     "Partition=gpu\n", False),
    ("[1, 2, 3]\n", False),
    # `kubectl get pods -o json | jq .items`, an empty list, a document, kubectl's YAML
    ('[\n  {\n    "apiVersion": "v1",\n    "kind": "Pod"\n  }\n]\n', True),
    ("  []\n", True),
    ('\n{\n    "apiVersion": "v1",\n    "items": []\n}\n', True),
    ("apiVersion: v1\nkind: Pod\n", True),
])
def test_what_looks_like_a_document(head: str, is_doc: bool) -> None:
    from parsers.k8s_json import _is_json

    assert _is_json(head) is is_doc


@pytest.mark.parametrize("items", ["[]", "null"])
def test_an_empty_list_is_read_with_nothing_missing(tmp_path: Path, items: str) -> None:
    """``kubectl get events -o json`` with no events prints an empty List (kubectl's printer,
    ``"items": []``; some clients write null). It was 'no known layout; read as text', which
    analyze reports as unread input (fault probe: a namespace whose events expired)."""
    from parsers.driver import parse_file
    from parsers.reader import InputFile
    from parsers.registry import detect

    f = tmp_path / "events.json"
    f.write_text('{\n    "apiVersion": "v1",\n    "items": ' + items + ',\n    "kind": "List",\n'
                 '    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
    assert detect(f.read_text(), str(f))[0] is K8sEventsJsonParser
    res = parse_file(InputFile(f, str(f)), lambda b: None, lambda b: None)
    assert res.source == "k8s_events_json" and res.note is None
    assert (res.acct.read, res.acct.unparsed) == (0, 0)
