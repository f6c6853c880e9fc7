"""One simulated campaign written to a directory, or only its truth (no logs)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.model.rates import Rates, dumps, save_interval
from pipeline.simulate import noise as bg
from pipeline.simulate import truth
from pipeline.simulate.campaign import Campaign
from pipeline.simulate.logsink import SlurmLogSink
from pipeline.simulate.logsink_k8s import K8sLogSink
from pipeline.simulate.params import Settings, streams

#: what a campaign directory holds; --force removes exactly these before writing
OUTPUTS = ("slurm", "jobs", "nodes", "k8s", "pods", "truth.json", "params.json")
FLAVOURS = ("slurm", "k8s")


class SimulateError(Exception):
    """A problem the user can fix (message says how)."""


def prepare_out(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise SimulateError(f"{out} exists and is not a directory")
    existing = [n for n in OUTPUTS if (out / n).exists()]
    if existing and not force:
        raise SimulateError(f"{out} already holds a campaign ({', '.join(existing)}); choose "
                            "another --out directory or pass --force to replace it")
    others = sorted(p.name for p in out.iterdir() if p.name not in OUTPUTS) \
        if out.is_dir() else []
    if others and not force:
        # a campaign written beside real logs is read with them (its job ids collide)
        raise SimulateError(f"{out} holds other files ({', '.join(others[:3])}"
                            f"{' ...' if len(others) > 3 else ''}): the simulated logs would be "
                            "read with them; choose an empty or new --out directory, or pass "
                            "--force to write there anyway")
    for n in existing:
        p = out / n
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()
    out.mkdir(parents=True, exist_ok=True)


def simulate(rates: Rates, seed: int, out: Path | None, settings: Settings | None = None,
             meta: dict[str, Any] | None = None, target_iterations: int | None = None,
             force: bool = False, flavour: str = "slurm", noise: str = "none"
             ) -> dict[str, Any]:
    """Run the campaign; with ``out`` write logs (``flavour``: slurm or k8s), truth.json and
    params.json there. Returns the truth document. ``noise``: ``none`` or ``realistic`` (the
    background volume of a real campaign beside the signal; see ``noise``)."""
    if flavour not in FLAVOURS:
        raise SimulateError(f"unknown flavour {flavour!r}; choose one of {', '.join(FLAVOURS)}")
    if noise not in bg.LEVELS:
        raise SimulateError(f"unknown noise level {noise!r}; choose one of "
                            f"{', '.join(bg.LEVELS)}")
    s = settings or Settings()
    meta = {"tool": "tormortem simulate", "seed": seed, "flavour": flavour,
            "log_interval": s.log_interval, **(meta or {})}
    if noise != "none":  # only then: --noise none keeps truth.json byte for byte
        meta["noise"] = noise
    if out is None:
        c = Campaign(rates, seed, s, target_iterations=target_iterations).run()
        return truth.build(c, meta)
    prepare_out(out, force)
    target = target_iterations or rates.target_iterations or 0
    cosmetic = streams(seed)["cosmetic"]
    if flavour == "k8s":
        return _simulate_k8s(rates, seed, out, s, meta, target, target_iterations, cosmetic,
                             noise)
    sink = SlurmLogSink(out, s, rates.scale.gpus_per_node, target, save_interval(rates),
                        cosmetic)
    if noise == "realistic":
        sink.startup = bg.startup_hook(seed, rates.scale.gpus_per_node, first_node_only=False)
    try:
        c = Campaign(rates, seed, s, sink=sink, target_iterations=target_iterations).run()
    finally:
        if sink.job is not None:
            sink.job.close()
    sink.close(_nodes_seen(c), c.attempts[-1].end)
    if noise == "realistic":
        bg.write_node_logs(out, c.all_nodes, c.attempts[-1].end, seed, s.epoch.timestamp(),
                           kubelet=False)
    doc = truth.build(c, meta)
    return _finish(out, rates, doc)


def _nodes_seen(c: Campaign) -> list[str]:
    seen: dict[str, None] = {}
    for a in c.attempts:
        seen.update(dict.fromkeys(a.nodes))
    return list(seen)


def _simulate_k8s(rates: Rates, seed: int, out: Path, s: Settings, meta: dict[str, Any],
                  target: int, target_iterations: int | None,
                  cosmetic: np.random.Generator, noise: str) -> dict[str, Any]:
    nodes = rates.scale.nodes
    spare = s.spare_nodes if s.spare_nodes is not None else max(4, nodes // 8)  # as Campaign
    sink = K8sLogSink(out, s, rates.scale.gpus_per_node, target, save_interval(rates), cosmetic,
                      nodes, nodes + spare)
    if noise == "realistic":
        sink.startup = bg.startup_hook(seed, rates.scale.gpus_per_node, first_node_only=True)
    try:
        c = Campaign(rates, seed, s, sink=sink, target_iterations=target_iterations).run()
    finally:
        sink.close_log()
    sink.close(_nodes_seen(c), c.attempts[-1].end)
    if noise == "realistic":
        bg.write_node_logs(out, c.all_nodes, c.attempts[-1].end, seed, s.epoch.timestamp(),
                           kubelet=True)
    doc = truth.build(c, meta)
    sink.rename(doc)
    return _finish(out, rates, doc)


def _finish(out: Path, rates: Rates, doc: dict[str, Any]) -> dict[str, Any]:
    (out / "truth.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    (out / "params.json").write_text(dumps(rates), encoding="utf-8")
    return doc


def with_log_interval(s: Settings, k: int) -> Settings:
    if k < 1:
        raise SimulateError("--log-interval must be >= 1")
    return replace(s, log_interval=k)
