"""kubectl events tables -> k8s_event rows.

Formats: kubernetes pkg/printers/internalversion/printers.go (eventColumnDefinitions,
printEvent), staging/src/k8s.io/kubectl/pkg/cmd/events/event_printer.go (kubectl events),
apimachinery pkg/util/duration/duration.go (ages), kubectl tabwriter (padding 3, min width 6).
Messages: see sample_logs/real_formats/k8s/NOTES.md.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from parsers.k8s_events import K8sEventsParser, parse_seen
from tests.parsers.util import parse, pick

MTIME = datetime(2024, 5, 14, 10, 0, 0, tzinfo=UTC)
SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "real_formats" / "k8s"
UID3 = "5b1c6a2e-8f0d-4d7b-9a51-2f3c4e5d6a7b"


def row(ts: str | None, host: str | None, code: str, device: str,
        value: float | None = None) -> dict[str, object]:
    return {"ts": ts, "host": host, "kind": "k8s_event", "job_id": None, "rank": None,
            "code": code, "iteration": None, "value": value, "device": device}


@pytest.mark.parametrize(("cell", "want"), [
    ("63s", (63, None)),
    ("7m30s", (450, None)),
    ("52m", (3120, None)),
    ("5h3m", (18180, None)),
    ("3d4h", (273600, None)),
    ("2y10d", (2 * 365 * 86400 + 10 * 86400, None)),
    ("115s (x7 over 18m)", (115, 7)),
    ("<unknown>", (None, None)),
])
def test_parse_seen(cell: str, want: tuple[int | None, int | None]) -> None:
    # duration.HumanDuration forms; "(x%d over %s)" from kubectl events getInterval
    assert parse_seen(cell) == want


def test_parse_seen_rejects() -> None:
    with pytest.raises(ValueError):
        parse_seen("Normal")


def test_all_namespaces_table() -> None:
    # `kubectl get events -A` (NAMESPACE column first); layout as kubebb/core PR #130 shows
    text = (
        "NAMESPACE   LAST SEEN   TYPE      REASON         OBJECT                        MESSAGE\n"
        # kube-scheduler schedule_one.go "Successfully assigned %v/%v to %v"
        "default     52m         Normal    Scheduled      pod/llama-pretrain-worker-3   "
        "Successfully assigned default/llama-pretrain-worker-3 to node017\n"
        # kubelet kuberuntime_container.go "Started container %s"
        "default     52m         Normal    Started        pod/llama-pretrain-worker-3   "
        "Started container pytorch\n"
        # node lifecycle controller RecordNodeStatusChange "Node %s status is now: %s"
        "default     9m12s       Normal    NodeNotReady   node/node021                  "
        "Node node021 status is now: NodeNotReady\n"
        # nodelifecycle MarkPodsNotReady: Warning NodeNotReady "Node is not ready"
        "default     9m12s       Warning   NodeNotReady   pod/llama-pretrain-worker-5   "
        "Node is not ready\n"
        "\n"
        "this line is not part of any listing\n"
        "No resources found in kube-public namespace.\n"
    )
    events, records, acct = parse(K8sEventsParser, text, "events.txt", mtime=MTIME)
    assert pick(events) == [
        row("2024-05-14T09:08:00Z", "node017", "Scheduled", "pod/llama-pretrain-worker-3"),
        row("2024-05-14T09:08:00Z", None, "Started", "pod/llama-pretrain-worker-3"),
        row("2024-05-14T09:50:48Z", "node021", "NodeNotReady", "node/node021"),
        row("2024-05-14T09:50:48Z", None, "NodeNotReady", "pod/llama-pretrain-worker-5"),
    ]
    assert [e["ts_flag"] for e in events] == ["relative"] * 4
    assert events[2]["message"] == "Node node021 status is now: NodeNotReady"
    assert events[2]["host_from"] == "line"
    assert [e["line_no"] for e in events] == [2, 3, 4, 5]
    assert records == []
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (8, 4, 3, 1)
    assert acct.samples == [(7, "this line is not part of any listing")]


def test_wide_table_source_host_and_count() -> None:
    # `kubectl get events -o wide`: SUBOBJECT, SOURCE ("kubelet, node012" from
    # formatEventSource), FIRST SEEN, COUNT, NAME
    text = (SAMPLES / "events-wide.txt").read_text()
    events, _, acct = parse(K8sEventsParser, text, "events-wide.txt", mtime=MTIME)
    assert pick(events) == [
        row("2024-05-14T09:19:00Z", "node009", "Pulled", "pod/llama-pretrain-master-0", 1.0),
        row("2024-05-14T09:48:00Z", "node012", "SystemOOM", "node/node012", 1.0),
        row("2024-05-14T09:49:00Z", "node012", "Evicted", "pod/llama-pretrain-worker-1", 1.0),
        row("2024-05-14T09:49:00Z", "node012", "Killing", "pod/llama-pretrain-worker-1", 1.0),
        # scheduler instance is not the node: host from "Preempted by pod <uid> on node X"
        row("2024-05-14T09:54:00Z", "node030", "Preempted", "pod/llama-eval-worker-0", 1.0),
        row("2024-05-14T09:58:00Z", "node017", "BackOff", "pod/llama-pretrain-worker-3", 7.0),
    ]
    assert events[2]["message"] == (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 91396Ki. "
        "Container pytorch was using 1834992Ki, request is 0, has larger consumption of memory.")
    assert {e["format"] for e in events} == {"k8s_events-wide"}
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (7, 6, 1, 0)


def test_kubectl_events_repeat_unknown_and_multiline_message() -> None:
    text = (SAMPLES / "kubectl-events.txt").read_text()
    events, _, acct = parse(K8sEventsParser, text, "kubectl-events.txt", mtime=MTIME)
    assert pick(events) == [
        row("2024-05-14T09:08:00Z", "node017", "Scheduled", "Pod/llama-pretrain-worker-3"),
        row("2024-05-14T09:58:05Z", None, "BackOff", "Pod/llama-pretrain-worker-3", 7.0),
        row(None, None, "FailedMount", "Pod/llama-pretrain-worker-6"),
    ]
    assert events[2]["ts_flag"] == "missing"
    # pkg/util/mount: "mount failed: %v\nMounting command: %s\nMounting arguments: %s\nOutput: %s"
    assert events[2]["message"].splitlines() == [
        'MountVolume.SetUp failed for volume "ckpt" : mount failed: exit status 32',
        "Mounting command: mount",
        "Mounting arguments: -t nfs 10.0.0.5:/export/ckpt /var/lib/kubelet/pods/"
        "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b/volumes/kubernetes.io~nfs/ckpt",
        "Output: mount.nfs: Connection timed out",
    ]
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (7, 6, 1, 0)


def test_watch_output_not_aligned() -> None:
    # `kubectl get events -w` flushes each line on its own: columns not aligned to the header
    text = (
        "LAST SEEN   TYPE     REASON    OBJECT                        MESSAGE\n"
        "0s    Normal   Scheduled   pod/llama-pretrain-worker-5   "
        "Successfully assigned default/llama-pretrain-worker-5 to node024\n"
        "0s          Warning   BackOff   pod/llama-pretrain-worker-3   "
        f"Back-off restarting failed container pytorch in pod "
        f"llama-pretrain-worker-3_default({UID3})\n"
    )
    events, _, acct = parse(K8sEventsParser, text, "watch.txt", mtime=MTIME)
    assert pick(events) == [
        row("2024-05-14T10:00:00Z", "node024", "Scheduled", "pod/llama-pretrain-worker-5"),
        row("2024-05-14T10:00:00Z", None, "BackOff", "pod/llama-pretrain-worker-3"),
    ]
    assert acct.unparsed == 0


def test_old_layout_kind_and_event_name() -> None:
    # kubectl <= 1.10 columns (printers.go eventColumns: LASTSEEN FIRSTSEEN COUNT NAME KIND
    # SUBOBJECT TYPE REASON SOURCE MESSAGE); NAME is "<object>.<hex>"
    text = (
        "LASTSEEN   FIRSTSEEN   COUNT     NAME                                       KIND"
        "      SUBOBJECT                  TYPE      REASON    SOURCE             MESSAGE\n"
        "2m         2m          1         llama-pretrain-worker-3.15a3b2c1d0e9f8a7   Pod "
        "      spec.containers{pytorch}   Normal    Killing   kubelet, node017   "
        "Killing container with id docker://pytorch:Need to kill Pod\n"
    )
    events, _, acct = parse(K8sEventsParser, text, "old.txt", mtime=MTIME)
    assert pick(events) == [
        row("2024-05-14T09:58:00Z", "node017", "Killing", "pod/llama-pretrain-worker-3", 1.0),
    ]
    assert events[0]["format"] == "k8s_events-table-old"
    assert acct.unparsed == 0


def test_no_mtime_gives_missing_ts() -> None:
    text = ("LAST SEEN   TYPE     REASON      OBJECT         MESSAGE\n"
            "12m         Warning  SystemOOM   node/node012   System OOM encountered\n")
    events, _, _ = parse(K8sEventsParser, text, "e.txt")
    # parse_text without mtime: the temp file's mtime is "now", so ts is set but relative
    assert events[0]["ts_flag"] == "relative"
    assert events[0]["host"] == "node012"


def test_malformed_rows_unparsed() -> None:
    text = ("LAST SEEN   TYPE      REASON    OBJECT         MESSAGE\n"
            "\n"
            "yesterday   Warning   BackOff   pod/x          something\n"
            "-----\n")
    events, _, acct = parse(K8sEventsParser, text, "e.txt", mtime=MTIME)
    assert events == []
    assert (acct.events, acct.irrelevant, acct.unparsed) == (0, 2, 2)


def test_sample_files_fully_accounted() -> None:
    for name in ("events-all-namespaces.txt", "events-wide.txt", "kubectl-events.txt"):
        _, _, acct = parse(K8sEventsParser, (SAMPLES / name).read_text(), name, mtime=MTIME)
        assert acct.unparsed == 0, name
        assert acct.events == acct.read - 1, name  # all but the header


@pytest.mark.parametrize("name", ["events-all-namespaces.txt", "events-wide.txt",
                                  "kubectl-events.txt"])
def test_sniff_own(name: str) -> None:
    assert K8sEventsParser.sniff((SAMPLES / name).read_text(), name) >= 90


@pytest.mark.parametrize("head", [
    # NVIDIA open-gpu-kernel-modules Xid line in dmesg
    "[ 8123.456789] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen "
    "off the bus.\n",
    # slurmctld log line
    "[2024-05-14T10:00:00.123] _job_complete: JobId=1234 WEXITSTATUS 1\n",
    # kubectl get pods (not events)
    "NAME                      READY   STATUS    RESTARTS   AGE\n"
    "llama-pretrain-master-0   1/1     Running   0          52m\n",
    '{\n    "apiVersion": "v1",\n    "items": [\n',
])
def test_sniff_others_low(head: str) -> None:
    assert K8sEventsParser.sniff(head, "x.log") < 30
