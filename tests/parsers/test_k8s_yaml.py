"""``kubectl get ... -o yaml``: the same objects as ``-o json``, the same rows.

kubectl prints YAML by marshalling the JSON object (sigs.k8s.io/yaml over go-yaml: keys
sorted, two-space indent, list items at their key's indent, strings that would read as
another type quoted, timestamps among them). Each real-format JSON sample of
sample_logs/real_formats/k8s (see its NOTES.md), dumped that way, must give the rows, records
and accounting of the JSON, under the same sniffed parser.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from parsers import registry
from parsers.k8s_json import K8sPodParser
from tests.parsers.util import parse

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "real_formats" / "k8s"
NAMES = ["events.json", "events-events.k8s.io-v1.json", "pods.json", "pytorchjob.json"]


def _yaml(doc: object) -> str:
    return yaml.safe_dump(doc, default_flow_style=False, sort_keys=True)


def _same(a: list[dict[str, object]], b: list[dict[str, object]]) -> None:
    strip = ("file", "message")  # the file name; a message may quote the document
    assert [{k: v for k, v in r.items() if k not in strip} for r in a] == \
        [{k: v for k, v in r.items() if k not in strip} for r in b]


@pytest.mark.parametrize("name", NAMES)
def test_yaml_gives_the_json_rows(name: str) -> None:
    text = (SAMPLES / name).read_text()
    ytext = _yaml(json.loads(text))
    assert "\nitems:\n- " in ytext or name == "pytorchjob.json"
    cls, _ = registry.detect(text, name)
    ycls, _ = registry.detect(ytext, name.replace(".json", ".yaml"))
    assert cls is not None and ycls is cls
    ev, rec, acct = parse(cls, text, name)
    yev, yrec, yacct = parse(cls, ytext, name.replace(".json", ".yaml"))
    assert (yacct.read, yacct.events, yacct.irrelevant, yacct.unparsed) == (
        acct.read, acct.events, acct.irrelevant, acct.unparsed)
    assert ev or rec
    _same(yev, ev)
    _same(yrec, rec)


# `kubectl get pod llama-pretrain-worker-3 -o yaml` as kubectl prints it (a trimmed object;
# timestamps quoted by go-yaml, not read as dates), and the same pod again as a second
# document of a `---` stream with the timestamps left bare (a hand-edited file)
POD = """apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: "2024-05-14T08:57:40Z"
  name: llama-pretrain-worker-3
  namespace: default
  uid: 6f1d2c3b-8a9e-4b7c-9d0e-1f2a3b4c5d6e
spec:
  containers:
  - image: nvcr.io/nvidia/pytorch:24.01-py3
    name: pytorch
  nodeName: node012
status:
  containerStatuses:
  - containerID: containerd://1a2b3c
    image: nvcr.io/nvidia/pytorch:24.01-py3
    lastState:
      terminated:
        containerID: containerd://0f9e8d
        exitCode: 137
        finishedAt: "2024-05-14T10:12:09Z"
        reason: OOMKilled
        startedAt: "2024-05-14T08:58:02Z"
    name: pytorch
    ready: true
    restartCount: 1
    started: true
    state:
      running:
        startedAt: "2024-05-14T10:12:31Z"
  phase: Running
  startTime: "2024-05-14T08:57:40Z"
"""


def test_kubectl_pod_yaml_and_bare_timestamps() -> None:
    assert registry.detect(POD, "worker-3.yaml")[0] is K8sPodParser
    _, rec, acct = parse(K8sPodParser, POD, "worker-3.yaml")
    assert acct.events == 1 and [(r["state"], r["exit_code"]) for r in rec] == [
        ("OUT_OF_MEMORY", 137), ("RUNNING", None)]
    bare = POD.replace('"2024', "2024").replace('Z"', "Z")
    _, rec2, acct2 = parse(K8sPodParser, POD + "---\n" + bare, "two.yaml")
    assert acct2.read == 2 and len(rec2) == 2 * len(rec)
    assert [(r["start"], r["end"]) for r in rec2] == [(r["start"], r["end"]) for r in rec] * 2


def test_broken_yaml_is_quarantined_with_a_reason(tmp_path: Path) -> None:
    from parsers.driver import parse_file
    from parsers.reader import InputFile

    f = tmp_path / "pods.yaml"
    f.write_text(POD.replace("  name: pytorch\n", "  name: [pytorch\n"))
    res = parse_file(InputFile(f, "pods.yaml"), lambda b: None, lambda b: None)
    assert res.acct.events == 0 and res.note is not None and "not valid YAML" in res.note
