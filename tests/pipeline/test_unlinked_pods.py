"""A Kubernetes campaign whose pod log was saved under a name that is not the pod's
(``kubectl logs llama-pretrain-master-0 > train.log``): its attempts are inferred from the log
alone, and the pod records (container starts, exit codes, the PyTorchJob's name) go unused.
That used to happen without a word; it is an ``unlinked_pods`` warning now."""

from __future__ import annotations

import shutil
from pathlib import Path

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate


def _warnings(logs: Path, out: Path) -> list[dict[str, object]]:
    ingest(expand_inputs([str(logs)]), out)
    return list(analyze_db(out / "tormortem.duckdb")["warnings"])


def test_a_pod_log_under_another_name_is_said(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    simulate(presets.get("demo"), 7, logs, Settings(log_interval=1), flavour="k8s")
    assert not [w for w in _warnings(logs, tmp_path / "a") if w["code"] == "unlinked_pods"]
    (log,) = (logs / "pods").rglob("*.log")
    shutil.move(log, logs / "train.log")
    shutil.rmtree(logs / "pods")
    w = [w for w in _warnings(logs, tmp_path / "b") if w["code"] == "unlinked_pods"]
    assert len(w) == 1 and "llama-pretrain-master-0" in str(w[0]["message"])
    assert str(w[0]["files"]) == str([str(logs / "train.log")])
