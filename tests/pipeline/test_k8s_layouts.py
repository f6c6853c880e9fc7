"""Kubernetes container logs as the kubelet keeps them, not as ``kubectl logs`` prints them.

Log collectors (fluent-bit, Vector, a tar of a node's /var/log) take the kubelet's own files:
``/var/log/pods/NS_POD_UID/CONTAINER/N.log`` and ``/var/log/containers/POD_NS_CONTAINER-ID.log``
(kubernetes pkg/kubelet/kuberuntime: BuildPodLogsDirectory, legacyLogSymlink), each line in
the CRI format ``<RFC3339Nano> <stdout|stderr> <F|P> <message>`` (cri-api's log format,
written by containerd/CRI-O). The simulated Kubernetes campaign with its pod log moved to
either layout must give the analysis of ``kubectl logs --timestamps POD > POD.log``: every
line was unparsed (the CRI stream and tag were not peeled), and the pod's name (for its
kubelet events, its job's run) came from ``0.log``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate

UID = "0c2826cd-7d9c-4adb-b991-8a1b54d47f92"
CID = "4f" * 32


def _summary(doc: dict[str, Any]) -> list[Any]:
    r = doc["runs"][0]
    # (not the nodes: a kubectl log saved as pods/POD/POD.log names its folder as the host, a
    # kubelet file none, and a user-code fault's node then differs; nothing else does)
    return [r["run"], round(r["tor"], 9), {k: round(v, 6) for k, v in r["components"].items()},
            [i["category"] for i in r["interruptions"]]]


@pytest.mark.parametrize("layout", ["pods", "containers"])
def test_kubelet_log_files_read_as_kubectl_logs(tmp_path: Path, layout: str) -> None:
    logs = tmp_path / "logs"
    simulate(presets.get("demo"), 7, logs, Settings(log_interval=1), flavour="k8s")
    (logs / "truth.json").unlink()
    ingest(expand_inputs([str(logs)]), tmp_path / "kubectl")
    want = _summary(analyze_db(tmp_path / "kubectl" / "tormortem.duckdb"))
    pod = "llama-pretrain-master-0"
    src = logs / "pods" / pod / f"{pod}.log"
    dst = (logs / "var" / "log" / "pods" / f"default_{pod}_{UID}" / "pytorch" / "0.log"
           if layout == "pods" else
           logs / "var" / "log" / "containers" / f"{pod}_default_pytorch-{CID}.log")
    dst.parent.mkdir(parents=True)
    dst.write_text(re.sub(r"^(\S+Z) ", r"\1 stdout F ", src.read_text(), flags=re.M))
    shutil.rmtree(logs / "pods")
    ingest(expand_inputs([str(logs)]), tmp_path / "cri")
    got = analyze_db(tmp_path / "cri" / "tormortem.duckdb")
    assert _summary(got) == want
