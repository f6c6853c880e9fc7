"""Kubernetes: a container incarnation that dies before printing anything is still seen
(issue 13, item 5), from the kubelet's events, the pod status and the PyTorchJob.

Fixtures are the simulator's Kubernetes flavour (``kubectl get events|pods|pytorchjob -o
json`` written as kubectl writes them, see pipeline/simulate/writers_k8s.py and
sample_logs/real_formats/k8s/NOTES.md) with the objects a crash loop at start-up adds: the
kubelet's ``Started container pytorch`` Event (once, or folded by its event correlator into
one Event with ``count`` and ``firstTimestamp``..``lastTimestamp``), and the pod's
``restartCount``/``lastState``. The pod's log is left as it was: those incarnations printed
nothing.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate

POD = "llama-pretrain-master-0"


def _z(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _t(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(UTC)


@pytest.fixture(scope="module")
def k8s(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    logs = tmp_path_factory.mktemp("k8s") / "logs"
    simulate(presets.get("demo"), 7, logs, Settings(log_interval=1), flavour="k8s")
    out = logs.parent / "base"
    ingest(expand_inputs([str(logs)]), out)
    return logs, analyze_db(out / "tormortem.duckdb")


def _started(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("reason") == "Started"
            and e["involvedObject"]["name"] == POD]


def _with(logs: Path, tmp: Path, edit: Any) -> dict[str, Any]:
    """Analyse a copy of the campaign whose events.json ``edit`` changed."""
    new = tmp / "logs"
    import shutil

    shutil.copytree(logs, new)
    path = new / "k8s" / "events.json"
    doc = json.loads(path.read_text())
    edit(doc["items"])
    path.write_text(json.dumps(doc, indent=4, sort_keys=True) + "\n")
    ingest(expand_inputs([str(new)]), tmp / "out")
    return analyze_db(tmp / "out" / "tormortem.duckdb")


def _gap(base: dict[str, Any], logs: Path) -> tuple[datetime, datetime]:
    """The repair gap after the fourth interruption: end of attempt 3 (its last line) -> the
    container start of attempt 4 (its Started event; its first line comes later)."""
    end = _t(base["runs"][0]["attempts"][3]["end"])
    items = json.loads((logs / "k8s" / "events.json").read_text())["items"]
    nxt = min(_t(e["lastTimestamp"]) for e in _started(items) if _t(e["lastTimestamp"]) > end)
    return end, nxt


def test_one_silent_incarnation_from_its_started_event(k8s: tuple[Path, dict[str, Any]],
                                                       tmp_path: Path) -> None:
    logs, base = k8s
    end, nxt = _gap(base, logs)
    at = end + (nxt - end) / 2

    def edit(items: list[dict[str, Any]]) -> None:
        ev = copy.deepcopy(_started(items)[0])
        ev["firstTimestamp"] = ev["lastTimestamp"] = _z(at)
        ev["metadata"]["name"] = f"{POD}.silent0001"
        items.append(ev)

    got = _with(logs, tmp_path, edit)
    r, b = got["runs"][0], base["runs"][0]
    assert len(r["attempts"]) == len(b["attempts"]) + 1
    assert len(r["interruptions"]) == len(b["interruptions"]) + 1
    silent = [a for a in r["attempts"] if a["source"] == "k8s_silent"]
    assert len(silent) == 1
    assert _t(silent[0]["start"]) == at.replace(microsecond=0)
    assert _t(silent[0]["end"]) <= nxt and silent[0]["last_iteration"] is None
    # the work done is unchanged; the gap is now startup of the silent attempt + repair
    for k in ("t_opt", "lost", "ckpt_save"):
        assert r["components"][k] == pytest.approx(b["components"][k])
    assert abs(sum(r["components"].values()) - r["t_obs_s"]) <= 1e-6 * r["t_obs_s"]
    assert r["t_obs_s"] == pytest.approx(b["t_obs_s"])


@pytest.mark.slow  # ~2-4 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_a_crash_loop_folded_into_one_event(k8s: tuple[Path, dict[str, Any]],
                                            tmp_path: Path) -> None:
    """Three start-ups that printed nothing, one Event with count 3: three attempts, the
    middle one's start approximate."""
    logs, base = k8s
    end, nxt = _gap(base, logs)
    first = (end + timedelta(seconds=60)).replace(microsecond=0)
    last = (nxt - timedelta(seconds=120)).replace(microsecond=0)

    def edit(items: list[dict[str, Any]]) -> None:
        ev = copy.deepcopy(_started(items)[0])
        ev["count"] = 3
        ev["firstTimestamp"], ev["lastTimestamp"] = _z(first), _z(last)
        ev["metadata"]["name"] = f"{POD}.loop0001"
        items.append(ev)

    got = _with(logs, tmp_path, edit)
    silent = [a for a in got["runs"][0]["attempts"] if a["source"] == "k8s_silent"]
    assert [_t(a["start"]) for a in silent] == [first, first + (last - first) / 2, last]
    assert len(got["runs"][0]["interruptions"]) == len(base["runs"][0]["interruptions"]) + 3


@pytest.mark.slow  # ~2-4 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_restart_count_beyond_what_is_seen_is_warned(k8s: tuple[Path, dict[str, Any]],
                                                     tmp_path: Path) -> None:
    logs, base = k8s
    new = tmp_path / "logs"
    import shutil

    shutil.copytree(logs, new)
    pods = json.loads((new / "k8s" / "pods.json").read_text())
    for p in pods["items"]:
        if p["metadata"]["name"] == POD:
            for cs in p["status"]["containerStatuses"]:
                cs["restartCount"] += 5
    (new / "k8s" / "pods.json").write_text(json.dumps(pods, indent=4, sort_keys=True) + "\n")
    ingest(expand_inputs([str(new)]), tmp_path / "out")
    got = analyze_db(tmp_path / "out" / "tormortem.duckdb")
    w = [x for x in got["warnings"] if x["code"] == "restarts_unseen"]
    assert len(w) == 1 and POD in w[0]["message"]
    assert got["runs"][0]["fidelity"] == "incomplete"
    assert base["warnings"] == []
