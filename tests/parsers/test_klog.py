"""Logs of klog / glog programs (Kubernetes components, NVIDIA's device plugin) -> the klog dialect.

Header: k8s.io/klog/v2 klog.go and golang/glog glog.go ``formatHeader``
(``Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg``). The lines are as users pasted them:
kube-scheduler's ``docker logs`` in kubernetes-sigs/kubespray#3956, a reflector warning in
hwameistor/scheduler#7, the node lifecycle controller and the panic that followed in
kubernetes/kubernetes#117555, the controller's per-node status line in
kubernetes/kubernetes#85221; the device plugin's Xid line is NVIDIA/k8s-device-plugin
internal/rm/health.go (``klog.Infof("XidCriticalError: Xid=%d on Device=%s; marking device
as unhealthy.", ...)``).
"""

from __future__ import annotations

from typing import Any

import pytest

from parsers import registry
from parsers.driver import parse_text
from parsers.klog import KlogParser
from parsers.text import TextParser

SCHEDULER = """\
I1228 08:59:55.829255       1 feature_gate.go:190] feature gates: map[Initializers:false PersistentLocalVolumes:false VolumeScheduling:false MountPropagation:false]
W1228 08:59:55.829541       1 server.go:162] WARNING: all flags than --config are deprecated. Please begin using a config file ASAP.
I1228 08:59:55.936918       1 server.go:554] Version: v1.9.7
I1228 08:59:55.937296       1 factory.go:837] Creating scheduler from algorithm provider 'DefaultProvider'
I1228 08:59:55.937500       1 server.go:573] starting healthz server on 0.0.0.0:10251
W0402 08:27:17.957515       1 reflector.go:324] k8s.io/client-go/informers/factory.go:134: failed to list *v1.CSINode: Get "https://127.0.0.1:6443/apis/storage.k8s.io/v1/csinodes?limit=500&resourceVersion=0": dial tcp 127.0.0.1:6443: connect: connection refused
"""  # noqa: E501

CONTROLLER = """\
I1111 18:40:28.403362       1 controller_utils.go:121] Update ready status of pods on node [gce-scale-cluster-minion-group-2-rkpf]
I0423 18:37:30.629784       1 node_lifecycle_controller.go:1082] Condition Ready of node ip-10-5-43-93.ap-south-1.compute.internal was never updated by kubelet
I0423 18:37:30.647620       1 node_lifecycle_controller.go:882] Node ip-10-5-43-93.ap-south-1.compute.internal is unresponsive as of 2023-04-23 18:37:30.647604493 +0000 UTC m=+271180.572213061. Adding it to the Taint queue.
E0423 18:37:30.649331       1 runtime.go:78] Observed a panic: "invalid memory address or nil pointer dereference" (runtime error: invalid memory address or nil pointer dereference)
goroutine 288383 [running]:
"""  # noqa: E501

PLUGIN = ("I0501 10:00:00.000000       1 health.go:164] XidCriticalError: Xid=79 on Device="
          "GPU-3b3b2c1e-7f4d-11ee-b962-0242ac120002; marking device as unhealthy.\n")

#: the same lines as a container runtime writes them (/var/log/pods/.../0.log, CRI format)
CRI = "".join(f"2024-05-01T00:00:0{i}.123456789Z stderr F {x}\n"
              for i, x in enumerate(SCHEDULER.splitlines()))


#: copies of a text parsed: enough lines for the vectorised plan (base.SMALL_CHUNK)
COPIES = 60


def accounting(text: str, path: str, monkeypatch: pytest.MonkeyPatch,
               prefilter: str) -> tuple[tuple[int, ...], list[dict[str, Any]]]:
    """Accounting of ``COPIES`` copies of ``text``, divided by ``COPIES``; the first
    copy's rows."""
    monkeypatch.setenv("TORMORTEM_PREFILTER", prefilter)
    events, _, acct = parse_text(KlogParser, text * COPIES, path)
    got = (acct.read, acct.events, acct.irrelevant, acct.unparsed)
    assert all(x % COPIES == 0 for x in got)
    rows = events.to_pylist()
    return tuple(x // COPIES for x in got), rows[:len(rows) // COPIES]


@pytest.mark.parametrize(("text", "path"), [
    (SCHEDULER, "kube-scheduler.log"), (CONTROLLER, "kube-controller-manager.log"),
    (CRI, "var/log/pods/kube-system_kube-scheduler-cp1_0b1f/kube-scheduler/0.log"),
    (SCHEDULER + PLUGIN, "nvidia-device-plugin.log")])
def test_klog_files_are_sniffed_as_klog(text: str, path: str) -> None:
    cls, _ = registry.detect(text, path)
    assert cls is KlogParser


def test_a_job_output_of_glog_lines_is_not_klog() -> None:
    cls, _ = registry.detect(SCHEDULER, "slurm-4242.out")
    assert cls is not KlogParser
    assert KlogParser.sniff("Traceback (most recent call last):\n" * 5, "x.log") == 0


@pytest.mark.parametrize("prefilter", ["1", "0"])
def test_info_lines_nobody_claims_are_irrelevant_the_rest_unparsed(
        prefilter: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # 4 + 2 INFO lines irrelevant; 2 W, 1 E and the goroutine line unparsed; the node
    # lifecycle controller's taint line is an event (a signature of the k8s table)
    got, rows = accounting(SCHEDULER + CONTROLLER, "kube-controller-manager.log",
                           monkeypatch, prefilter)
    assert got == (11, 1, 6, 4)
    assert [(r["kind"], r["code"], r["host"], r["line_no"]) for r in rows] == [
        ("k8s_event", "NodeNotReady", "ip-10-5-43-93.ap-south-1.compute.internal", 9)]
    # the text dialect kept every one of them unparsed
    monkeypatch.setenv("TORMORTEM_PREFILTER", prefilter)
    _, _, acct = parse_text(TextParser, SCHEDULER + CONTROLLER, "x.log")
    assert (acct.irrelevant, acct.unparsed) == (0, 10)


@pytest.mark.parametrize("prefilter", ["1", "0"])
def test_an_info_line_with_a_signal_is_an_event(prefilter: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    got, rows = accounting(SCHEDULER + PLUGIN, "node017/nvidia-device-plugin.log", monkeypatch,
                           prefilter)
    assert got == (7, 1, 4, 2)
    assert [(r["kind"], r["code"], r["host"]) for r in rows] == [("xid", "79", "node017")]


@pytest.mark.parametrize("prefilter", ["1", "0"])
def test_behind_a_cri_prefix(prefilter: str, monkeypatch: pytest.MonkeyPatch) -> None:
    got, _ = accounting(CRI, "0.log", monkeypatch, prefilter)
    assert got == (6, 0, 4, 2)
