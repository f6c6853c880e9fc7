"""Simulation settings that are not rates (cluster naming, job name, dates, log options), the
random streams, and drawing from a rates ``Dist``.

Every random draw comes from a numpy ``Generator`` seeded from one integer seed through
``SeedSequence.spawn``: one independent stream per purpose, so that changing the log options
(which draw cosmetic numbers such as loss values) never changes the campaign itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from pipeline.model.rates import Dist

#: the independent random streams, in spawn order (never reorder: it would change every output)
STREAMS = ("failures", "steps", "slow", "present", "cosmetic")


@dataclass(frozen=True)
class Settings:
    """How the campaign is dressed: names, dates, paths, log density."""

    job_name: str = "llama-pretrain"
    partition: str = "gpu"
    user_uid: int = 1000
    first_job_id: int = 1001
    epoch: datetime = datetime(2024, 5, 1, tzinfo=UTC)  #: campaign t = 0 (first submit)
    first_queue_wait_s: float = 5.0
    spare_nodes: int | None = None  #: default max(4, nodes // 8)
    node_return_s: float = 2 * 86400.0  #: a faulty node is back in the pool after this
    cpus_per_node: int = 64
    mem_per_node_g: int = 1000
    ckpt_dir: str = "/ckpt/llama"
    ckpt_format: str = "torch_dist"
    global_batch_size: int = 1024
    log_interval: int = 1  #: Megatron --log-interval (iterations per progress line)
    nccl_timeout_ms: int = 600000
    healthy_noise_nodes: int = 3  #: healthy nodes that get a kern.log with boot/session noise


def streams(seed: int) -> dict[str, np.random.Generator]:
    children = np.random.SeedSequence(seed).spawn(len(STREAMS))
    return {name: np.random.Generator(np.random.PCG64(c)) for name, c in zip(STREAMS, children,
                                                                              strict=True)}


def draw(d: Dist, rng: np.random.Generator) -> float:
    """One draw of a duration distribution (seconds, >= 0)."""
    if d.dist == "fixed" or d.mean_s <= 0:
        return float(d.mean_s)
    if d.dist == "exponential":
        return float(rng.exponential(d.mean_s))
    mu = math.log(d.mean_s) - d.sigma * d.sigma / 2.0
    return float(rng.lognormal(mu, d.sigma))


def draw_many(d: Dist, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` draws at once (used by the vectorised Monte Carlo)."""
    if d.dist == "fixed" or d.mean_s <= 0:
        return np.full(n, float(d.mean_s))
    if d.dist == "exponential":
        return rng.exponential(d.mean_s, n)
    mu = math.log(d.mean_s) - d.sigma * d.sigma / 2.0
    return rng.lognormal(mu, d.sigma, n)
