"""``simulate --noise realistic``: the background volume carries no signal.

The same seed with and without the noise must give the same campaign (truth), the same events
and the same analysis, while the noise adds many lines, all accounted as irrelevant; ``none``
(the default) writes exactly what it wrote before (sample_logs/demo is checked byte for byte in
test_logs.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import duckdb
import pytest

from parsers.reader import expand_inputs
from pipeline.analyze.run import analyze_db
from pipeline.ingest.run import ingest
from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import SimulateError, simulate

ITER = 3000  #: a day of the demo preset: several interruptions, seconds to run


def _run(base: Path, flavour: str, noise: str, seed: int) -> tuple[dict[str, Any], Path]:
    logs, out = base / f"{flavour}-{noise}", base / f"{flavour}-{noise}-db"
    truth = simulate(presets.get("demo"), seed, logs, Settings(log_interval=1),
                     target_iterations=ITER, flavour=flavour, noise=noise)
    ingest(expand_inputs([str(logs)]), out)
    return truth, out / "tormortem.duckdb"


def _normalised(doc: Any) -> Any:
    """The analysis without what must differ: where a line sits (directory, line number), and
    the raw excerpt of the output around an unexplained attempt's last event (``output_tail``:
    the file's lines as they are, NCCL start-up lines of the next attempt included; only its
    length is kept). Keys are normalised too: attempt ids name their file."""
    if isinstance(doc, dict):
        return {_normalised(k): len(v) if k == "output_tail" else _normalised(v)
                for k, v in doc.items()}
    if isinstance(doc, list):
        return [_normalised(v) for v in doc]
    if isinstance(doc, str):
        doc = re.sub(r"\S*?-(?:none|realistic)/", "", doc)
        return re.sub(r"\.(log|out|txt|json):\d+", r".\1", doc)
    return doc


def _events(db: Path) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.sql("select ts, host, source, kind, code, job_id, rank, iteration, value, "
                       "device, message from events order by all").fetchall()
    finally:
        con.close()


def _accounting(db: Path) -> dict[str, tuple[int, int, int, int]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.sql("select source, sum(read), sum(events), sum(irrelevant), sum(unparsed) "
                       "from line_accounting group by source").fetchall()
    finally:
        con.close()
    return {s: (int(r), int(e), int(i), int(u)) for s, r, e, i, u in rows}


@pytest.mark.parametrize(("flavour", "seed"), [  # k8s in the slow suite: the quick budget
    ("slurm", 7), pytest.param("k8s", 11, marks=pytest.mark.slow)])
def test_noise_carries_no_signal(tmp_path: Path, flavour: str, seed: int) -> None:
    truth0, db0 = _run(tmp_path, flavour, "none", seed)
    truth1, db1 = _run(tmp_path, flavour, "realistic", seed)
    gen0, gen1 = truth0.pop("generator"), truth1.pop("generator")
    assert truth0 == truth1
    assert gen1.pop("noise") == "realistic" and gen0 == gen1 and "noise" not in gen0
    assert truth0["runs"][0]["interruptions"], "a campaign without interruptions tests nothing"

    acc0, acc1 = _accounting(db0), _accounting(db1)
    for src in ("joblog", "kernel"):
        added = acc1[src][0] - acc0[src][0]
        assert added > 300, (src, acc0, acc1)  # the noise is there ...
        assert acc1[src][1] == acc0[src][1], (src, acc0, acc1)  # ... adds no event ...
        assert acc1[src][2] - acc0[src][2] == added  # ... and every line is irrelevant
    assert _events(db0) == _events(db1)
    assert _normalised(analyze_db(db0)) == _normalised(analyze_db(db1))


def test_every_node_gets_its_syslog(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    simulate(presets.get("demo"), 3, logs, Settings(log_interval=10), target_iterations=500,
             noise="realistic")
    nodes = sorted(p.name for p in (logs / "nodes").iterdir())
    scale = presets.get("demo").scale
    assert len(nodes) == scale.nodes + max(4, scale.nodes // 8)  # the pool, spares included
    for n in nodes:
        lines = (logs / "nodes" / n / "kern.log").read_text().splitlines()
        stamps = [x[:32] for x in lines]
        assert stamps == sorted(stamps), n  # merged in time order
        assert any("sysstat-collect" in x or "debian-sa1" in x for x in lines), n
    job = (logs / "jobs" / "slurm-1001.out").read_text().splitlines()
    inits = [x for x in job if x.endswith("- Init COMPLETE")]
    assert len(inits) == scale.gpus  # every rank of the first attempt


def test_unknown_noise_level(tmp_path: Path) -> None:
    with pytest.raises(SimulateError, match="unknown noise level"):
        simulate(presets.get("demo"), 1, tmp_path / "x", noise="loud")
