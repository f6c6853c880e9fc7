"""Rates documents built in code for the model tests."""

from __future__ import annotations

from typing import Any

from pipeline.model.rates import Rates, from_json


def fixed(mean: float) -> dict[str, Any]:
    return {"mean_s": mean, "dist": "fixed"}


def rates(*, gpus: int = 1024, rate_per_gpu_hour: float = 1e-4, tau: float = 600.0,
          delta: float = 10.0, hang: float = 60.0, repair: float = 180.0,
          startup: float = 120.0, tstar: float = 6.0, iterations: int | None = None,
          sigma: float = 0.0, extra: list[dict[str, Any]] | None = None,
          ci: tuple[float, float] | None = None) -> Rates:
    """One fail-stop GPU category (plus ``extra`` entries) with fixed durations."""
    cat: dict[str, Any] = {"category": "gpu_hardware", "mode": "fail-stop", "scales_with": "gpu",
                           "rate_per_gpu_hour": rate_per_gpu_hour, "hang": fixed(hang),
                           "repair": fixed(repair), "startup": fixed(startup)}
    if ci is not None:
        cat["rate_ci95"] = list(ci)
    doc: dict[str, Any] = {
        "schema": "tormortem.rates/1", "scale": {"gpus": gpus, "gpus_per_node": 8},
        "ideal_step_s": tstar, "step_jitter_sigma": sigma,
        "checkpoint": {"tau_s": tau, "delta": fixed(delta), "load_s": 60.0},
        "first_startup": fixed(startup), "tail": fixed(30.0),
        "categories": [cat, *(extra or [])]}
    if iterations is not None:
        doc["target_iterations"] = iterations
    return from_json(doc)
