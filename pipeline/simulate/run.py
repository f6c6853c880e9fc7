"""One simulated campaign written to a directory, or only its truth (no logs)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from pipeline.rates import Rates, dumps
from pipeline.simulate import truth
from pipeline.simulate.campaign import Campaign, save_interval
from pipeline.simulate.logsink import SlurmLogSink
from pipeline.simulate.params import Settings, streams

#: what a campaign directory holds; --force removes exactly these before writing
OUTPUTS = ("slurm", "jobs", "nodes", "k8s", "truth.json", "params.json")


class SimulateError(Exception):
    """A problem the user can fix (message says how)."""


def prepare_out(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise SimulateError(f"{out} exists and is not a directory")
    existing = [n for n in OUTPUTS if (out / n).exists()]
    if existing and not force:
        raise SimulateError(f"{out} already holds a campaign ({', '.join(existing)}); choose "
                            "another --out directory or pass --force to replace it")
    for n in existing:
        p = out / n
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()
    out.mkdir(parents=True, exist_ok=True)


def simulate(rates: Rates, seed: int, out: Path | None, settings: Settings | None = None,
             meta: dict[str, Any] | None = None, target_iterations: int | None = None,
             force: bool = False) -> dict[str, Any]:
    """Run the campaign; with ``out`` write logs, truth.json and params.json there. Returns
    the truth document."""
    s = settings or Settings()
    meta = {"tool": "tormortem simulate", "seed": seed, "flavour": "slurm",
            "log_interval": s.log_interval, **(meta or {})}
    if out is None:
        c = Campaign(rates, seed, s, target_iterations=target_iterations).run()
        return truth.build(c, meta)
    prepare_out(out, force)
    target = target_iterations or rates.target_iterations or 0
    cosmetic = streams(seed)["cosmetic"]
    sink = SlurmLogSink(out, s, rates.scale.gpus_per_node, target, save_interval(rates),
                        cosmetic)
    try:
        c = Campaign(rates, seed, s, sink=sink, target_iterations=target_iterations).run()
    finally:
        if sink.job is not None:
            sink.job.close()
    seen: dict[str, None] = {}
    for a in c.attempts:
        seen.update(dict.fromkeys(a.nodes))
    sink.close(list(seen), c.attempts[-1].end)
    doc = truth.build(c, meta)
    (out / "truth.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    (out / "params.json").write_text(dumps(rates), encoding="utf-8")
    return doc


def with_log_interval(s: Settings, k: int) -> Settings:
    if k < 1:
        raise SimulateError("--log-interval must be >= 1")
    return replace(s, log_interval=k)
