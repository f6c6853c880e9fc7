"""Node logs that spell a node's name otherwise than the scheduler (pipeline/analyze/hosts.py).

The demo campaign (sample_logs/demo, truth.json) with its rsyslog kernel logs rewritten the
way real nodes write them: fully qualified (rsyslog ``$PreserveFQDN on``) or upper case. Every
root cause and its node must stay the truth's: it lost all five GPU faults before (their Xid
lines on ``node007.cluster.example.org`` matched no attempt's ``node007``).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from parsers.reader import expand_inputs
from pipeline.analyze.hosts import alias_hosts
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest

DEMO = Path(__file__).resolve().parents[2] / "sample_logs" / "demo"
TRUTH = json.loads((DEMO / "truth.json").read_text())["runs"][0]


@pytest.mark.parametrize("spell", [lambda h: f"{h}.cluster.example.org", str.upper])
def test_node_names_spelled_otherwise_keep_their_evidence(tmp_path: Path, spell) -> None:  # type: ignore[no-untyped-def]
    logs = tmp_path / "logs"
    shutil.copytree(DEMO, logs)
    (logs / "truth.json").unlink()
    for p in (logs / "nodes").rglob("kern.log"):
        p.write_text(re.sub(r"^(\S+) (node\d+) ", lambda m: f"{m.group(1)} {spell(m.group(2))} ",
                            p.read_text(), flags=re.M))
    ingest(expand_inputs([str(logs)]), tmp_path / "out")
    run = analyze_db(tmp_path / "out" / "tormortem.duckdb")["runs"][0]
    got = [(i["category"], i.get("node")) for i in run["interruptions"]]
    want = [(i["category"], i.get("node")) for i in TRUTH["interruptions"]]
    assert [c for c, _ in got] == [c for c, _ in want]
    assert [n for (c, n), (_, t) in zip(got, want, strict=True) if c == "gpu_hardware"] == \
        [t for c, t in want if c == "gpu_hardware"]


def test_a_label_two_nodes_share_maps_nowhere_and_k8s_fqdn_nodes_are_found() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE attempts AS SELECT * FROM (VALUES "
                "(['ip-10-0-1-23.ec2.internal', 'gpu1.a']), (['gpu1.b'])) t(nodes)")
    con.execute("CREATE TABLE events AS SELECT * FROM (VALUES "
                "(1, 'ip-10-0-1-23', 'kernel', NULL), (2, 'GPU1', 'kernel', NULL), "
                "(3, 'gpu1.a', 'kernel', NULL)) t(event_id, host, kind, code)")
    assert alias_hosts(con) == 1
    assert con.execute("SELECT event_id, host FROM events ORDER BY event_id").fetchall() == [
        (1, "ip-10-0-1-23.ec2.internal"), (2, "GPU1"), (3, "gpu1.a")]
