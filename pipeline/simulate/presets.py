"""Built-in parameter sets for ``tormortem simulate --preset``.

``demo``
    128 GPUs on 16 nodes (8 GPUs/node), t* = 24 s, 10,800 iterations: about 3.7 days and
    ~20 interruptions (seed 7: 18) of mixed causes: GPU Xid 79 / ECC / GSP faults, IB link
    loss, NCCL watchdog hangs (10 min timeout), node failures (requeued and resubmitted), an
    I/O error, a Python exception, TIMEOUT/CANCELLED, maintenance requeues, and fail-slow episodes
    (thermal throttling, degraded link). ``--seed 7`` writes sample_logs/demo.

``llama3-54d``
    16,384 GPUs on 2,048 nodes for about 54 days, with per-category rates whose expected counts
    over the campaign follow Llama 3 (arXiv 2407.21783) Table 5: 419 unexpected interruptions.
    Table 5 root causes mapped onto TAXONOMY.md categories:

    ===================================================  ===============  =====  ===========
    Table 5 cause (count)                                category         count  scales with
    ===================================================  ===============  =====  ===========
    Faulty GPU 148, GPU SRAM 19, GPU thermal 6, SDC 6     gpu_hardware     179    gpu
    GPU HBM3 memory 72                                   gpu_memory       72     gpu
    GPU system processor (GSP) 17                        gpu_driver       17     gpu
    Software bug 54, dependency 2                        user_code        56     gpu
    Network switch/cable 35, NIC 7                       network          42     node
    Host maintenance 32                                  preemption       32     node
    NCCL watchdog timeouts 7                             nccl_timeout     7      gpu
    SSD 3                                                storage          3      node
    PSU 3, chassis 2, IO expansion board 2, CPU 2,
    system memory 2                                      node_failure     11     node
    ===================================================  ===============  =====  ===========

    rate = count / (GPUs or nodes x at-risk hours), with at-risk hours = 54 days x 24 h x
    ``LLAMA3_AT_RISK_FRACTION`` (the share of wall time an attempt is running and can fail:
    hang, repair gaps and the tail are not at risk; measured with the Monte Carlo).
    Stated assumptions (Llama 3 reports > 90 % effective training time, and automated
    detection/restart for most interruptions): t* = 6 s, checkpoint every 10 min of compute
    (100 iterations) with a 10 s blocking save (fast, sharded) and 60 s load; startup 3 min;
    hang 1-2 min for hardware faults (fast fault detection), 5 min for NCCL watchdog timeouts;
    repair gap 3 min (automated node swap and restart), 15 min for software bugs (a human
    fixes the code); a few fail-slow episodes (GPU stragglers rho 0.9, degraded links rho 0.85).
    Expected realised TOR about 0.905.
"""

from __future__ import annotations

from typing import Any

from pipeline.model.rates import Rates, from_json

LLAMA3_DAYS = 54.0
LLAMA3_AT_RISK_FRACTION = 0.965
LLAMA3_TABLE5 = {  # category: (count, scales_with)
    "gpu_hardware": (179, "gpu"), "gpu_memory": (72, "gpu"), "gpu_driver": (17, "gpu"),
    "user_code": (56, "gpu"), "network": (42, "node"), "preemption": (32, "node"),
    "nccl_timeout": (7, "gpu"), "storage": (3, "node"), "node_failure": (11, "node"),
}


def _d(mean: float, sigma: float | None = None) -> dict[str, Any]:
    if sigma is None:
        return {"mean_s": mean, "dist": "fixed"}
    return {"mean_s": mean, "dist": "lognormal", "sigma": sigma}


def _stop(cat: str, scales: str, rate: float, hang: dict[str, Any], repair: dict[str, Any],
          startup: dict[str, Any], note: str = "") -> dict[str, Any]:
    key = "rate_per_gpu_hour" if scales == "gpu" else "rate_per_node_hour"
    d: dict[str, Any] = {"category": cat, "mode": "fail-stop", "scales_with": scales, key: rate,
                         "hang": hang, "repair": repair, "startup": startup}
    if note:
        d["note"] = note
    return d


def _slow(cat: str, scales: str, rate: float, rho: float, dur: dict[str, Any],
          note: str = "") -> dict[str, Any]:
    key = "rate_per_gpu_hour" if scales == "gpu" else "rate_per_node_hour"
    d: dict[str, Any] = {"category": cat, "mode": "fail-slow", "scales_with": scales, key: rate,
                         "rho": rho, "slow_duration": dur}
    if note:
        d["note"] = note
    return d


def demo() -> dict[str, Any]:
    h = 60.0  # rate = expected count / (GPUs or nodes x 60 h at risk)
    g, n = 128 * h, 16 * h
    watchdog = _d(625.0, 0.01)  # hung collective until the 10 min NCCL watchdog + teardown
    start = _d(360.0, 0.2)
    cats = [
        _stop("gpu_hardware", "gpu", 3.0 / g, watchdog, _d(900.0, 0.5), start,
              "Xid 79: GPU fallen off the bus; the other ranks hang until the watchdog"),
        _stop("gpu_memory", "gpu", 2.0 / g, _d(45.0, 0.3), _d(600.0, 0.5), start,
              "Xid 48/94/95: uncorrectable ECC; the rank dies at once"),
        _stop("gpu_driver", "gpu", 1.0 / g, watchdog, _d(900.0, 0.5), start, "Xid 119 GSP"),
        _stop("network", "node", 2.5 / n, _d(120.0, 0.3), _d(900.0, 0.5), start,
              "IB link down; NCCL reports the completion error"),
        _stop("nccl_timeout", "gpu", 1.5 / g, watchdog, _d(600.0, 0.5), start),
        _stop("node_failure", "node", 2.0 / n, _d(330.0, 0.1), _d(1200.0, 0.5), start,
              "node stops responding; slurmctld declares it down after SlurmdTimeout"),
        _stop("storage", "node", 0.7 / n, _d(60.0, 0.3), _d(900.0, 0.5), start),
        _stop("user_code", "gpu", 1.0 / g, _d(30.0, 0.3), _d(1800.0, 0.8), start),
        _stop("scheduler", "node", 3.0 / n, _d(60.0, 0.3), _d(600.0, 0.5), start,
              "TIMEOUT at the time limit or CANCELLED by the user"),
        _stop("preemption", "node", 0.7 / n, _d(90.0, 0.3), _d(1800.0, 0.5), start,
              "maintenance drain: preempted or requeued by an operator"),
        _slow("gpu_hardware", "gpu", 2.0 / (128 * 84.0), 0.7, _d(3 * 3600.0, 0.5),
              "thermal throttling"),
        _slow("network", "node", 1.0 / (16 * 84.0), 0.8, _d(2 * 3600.0, 0.5), "degraded IB link"),
    ]
    return {
        "schema": "tormortem.rates/1",
        "provenance": {"source": "preset:demo", "note": "illustrative rates for a small run"},
        "scale": {"gpus": 128, "gpus_per_node": 8},
        "ideal_step_s": 24.0, "step_jitter_sigma": 0.02, "target_iterations": 10800,
        "checkpoint": {"tau_s": 1800.0, "delta": _d(45.0, 0.2), "load_s": 90.0},
        "first_startup": _d(300.0, 0.2), "tail": _d(90.0, 0.1),
        "categories": cats,
    }


def llama3_54d() -> dict[str, Any]:
    gpus, nodes = 16384, 2048
    hours = LLAMA3_DAYS * 24.0 * LLAMA3_AT_RISK_FRACTION
    hang = {"gpu_hardware": _d(120.0, 0.5), "gpu_memory": _d(60.0, 0.5),
            "gpu_driver": _d(120.0, 0.5), "user_code": _d(30.0, 0.5), "network": _d(90.0, 0.5),
            "preemption": _d(60.0, 0.3), "nccl_timeout": _d(300.0, 0.1),
            "storage": _d(60.0, 0.5), "node_failure": _d(180.0, 0.3)}
    cats = []
    for cat, (count, scales) in LLAMA3_TABLE5.items():
        rate = count / ((gpus if scales == "gpu" else nodes) * hours)
        repair = _d(900.0, 0.8) if cat == "user_code" else _d(180.0, 0.5)
        cats.append(_stop(cat, scales, rate, hang[cat], repair, _d(180.0, 0.2),
                          f"Llama 3 Table 5: {count} in 54 days"))
    cats.append(_slow("gpu_hardware", "gpu", 30.0 / (gpus * hours), 0.9, _d(1800.0, 0.5),
                      "stragglers (assumed, not in Table 5)"))
    cats.append(_slow("network", "node", 10.0 / (nodes * hours), 0.85, _d(3600.0, 0.5),
                      "degraded links (assumed, not in Table 5)"))
    return {
        "schema": "tormortem.rates/1",
        "provenance": {"source": "preset:llama3-54d",
                       "reference": "Llama 3 (arXiv 2407.21783), Table 5: 419 unexpected "
                                    "interruptions in a 54-day snapshot on 16,384 H100 GPUs",
                       "at_risk_fraction": LLAMA3_AT_RISK_FRACTION},
        "scale": {"gpus": gpus, "gpus_per_node": 8},
        "ideal_step_s": 6.0, "step_jitter_sigma": 0.01, "target_iterations": LLAMA3_ITERATIONS,
        "checkpoint": {"tau_s": 600.0, "delta": _d(10.0, 0.2), "load_s": 60.0},
        "first_startup": _d(180.0, 0.2), "tail": _d(45.0, 0.1),
        "categories": cats,
    }


#: iterations that make the expected campaign last about 54 days (calibrated with montecarlo)
LLAMA3_ITERATIONS = 700_000

PRESETS = {"demo": demo, "llama3-54d": llama3_54d}
#: default --log-interval per preset (llama3-54d: ~70k progress lines instead of ~700k)
LOG_INTERVAL = {"demo": 1, "llama3-54d": 10}


def get(name: str) -> Rates:
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r}; choose one of: {', '.join(PRESETS)}")
    return from_json(PRESETS[name](), where=f"preset {name}")
