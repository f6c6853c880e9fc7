"""The versioned rates JSON (``"schema": "tormortem.rates/1"``): what fitting writes and what the
simulator and the model read.

The JSON Schema (draft 2020-12) is ``pipeline/model/schemas/rates.schema.json``; this module
validates with a small hand-written validator that enforces the same rules (no ``jsonschema``
dependency), and a test checks that the two agree on the field names.

Units: seconds for durations, rates per GPU-hour (``rate_per_gpu_hour``) or per node-hour
(``rate_per_node_hour``). A category entry is one failure *mode* of one TAXONOMY category: the
same category may appear twice, once ``fail-stop`` and once ``fail-slow``.

* fail-stop entries carry ``hang`` (fault -> attempt end), ``repair`` (attempt end -> next
  attempt start) and ``startup`` (next attempt start -> its first iteration) distributions.
* fail-slow entries carry ``rho`` (throughput ratio while slow, 0 < rho < 1) and
  ``slow_duration`` (the episode length S).

Fitting fills ``count``, ``exposure_gpu_hours`` / ``exposure_node_hours``, ``rate_ci95`` and
``mean_interval_s``; presets may leave them out.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_ID = "tormortem.rates/1"
SCHEMA_FILE = Path(__file__).parent / "schemas" / "rates.schema.json"

#: TAXONOMY.md categories a rate may be given for (progress/checkpoint are not failures).
FAILURE_CATEGORIES = (
    "gpu_hardware", "gpu_memory", "gpu_driver", "nvlink", "network", "nccl_error",
    "nccl_timeout", "node_failure", "storage", "oom_host", "oom_gpu", "user_code",
    "preemption", "scheduler", "unknown",
)
DISTRIBUTIONS = ("fixed", "lognormal", "exponential")
MODES = ("fail-stop", "fail-slow")


class RatesError(ValueError):
    """A rates document that does not follow the schema; the message says where and how."""


@dataclass(frozen=True)
class Dist:
    """A positive duration: its mean in seconds and a distribution shape.

    ``lognormal`` uses ``sigma`` (the log-scale standard deviation) and keeps the mean:
    mu = ln(mean) - sigma^2/2. ``exponential`` has only its mean; ``fixed`` is a constant."""

    mean_s: float
    dist: str = "fixed"
    sigma: float = 0.0

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"mean_s": self.mean_s, "dist": self.dist}
        if self.dist == "lognormal":
            d["sigma"] = self.sigma
        return d


@dataclass(frozen=True)
class Category:
    category: str
    mode: str
    scales_with: str  #: "gpu" or "node"
    rate: float  #: per GPU-hour if scales_with == "gpu", else per node-hour
    hang: Dist | None = None
    repair: Dist | None = None
    startup: Dist | None = None
    rho: float | None = None
    slow_duration: Dist | None = None
    #: fitting output (optional for presets)
    count: int | None = None
    exposure_gpu_hours: float | None = None
    exposure_node_hours: float | None = None
    rate_ci95: tuple[float, float] | None = None
    mean_interval_s: float | None = None
    note: str | None = None

    def rate_per_second(self, gpus: int, nodes: int) -> float:
        """Rate of this category for a whole job of ``gpus`` GPUs on ``nodes`` nodes, per s."""
        n = gpus if self.scales_with == "gpu" else nodes
        return self.rate * n / 3600.0


@dataclass(frozen=True)
class Checkpoint:
    tau_s: float  #: compute time between saves
    delta: Dist  #: blocking save time
    load_s: float  #: checkpoint load time (part of every restart's startup)


@dataclass(frozen=True)
class Scale:
    gpus: int
    gpus_per_node: int

    @property
    def nodes(self) -> int:
        return self.gpus // self.gpus_per_node


@dataclass(frozen=True)
class Rates:
    scale: Scale
    ideal_step_s: float  #: t*
    checkpoint: Checkpoint
    categories: tuple[Category, ...]
    target_iterations: int | None = None
    step_jitter_sigma: float = 0.0  #: log-scale sd of healthy step times (median stays t*)
    first_startup: Dist | None = None  #: startup of the first attempt (no checkpoint to load)
    tail: Dist | None = None  #: final save + shutdown of the last attempt
    provenance: dict[str, Any] = field(default_factory=dict)

    def fail_stop(self) -> tuple[Category, ...]:
        return tuple(c for c in self.categories if c.mode == "fail-stop")

    def fail_slow(self) -> tuple[Category, ...]:
        return tuple(c for c in self.categories if c.mode == "fail-slow")

    def with_scale(self, gpus: int) -> Rates:
        return _replace(self, scale=Scale(gpus, self.scale.gpus_per_node))


def save_interval(rates: Rates) -> int:
    """Iterations between periodic saves: ``max(1, round(tau / t*))`` (Megatron's
    --save-interval), as the simulator and the model both read a rates file."""
    return max(1, round(rates.checkpoint.tau_s / rates.ideal_step_s))


def default_startup(rates: Rates) -> Dist:
    """The first attempt's startup when the rates file gives none: load + 2 min of init."""
    return rates.first_startup or Dist(rates.checkpoint.load_s + 120.0)


def default_tail(rates: Rates) -> Dist:
    """The final attempt's tail when the rates file gives none: one save + 30 s shutdown."""
    return rates.tail or Dist(rates.checkpoint.delta.mean_s + 30.0)


def _replace(r: Rates, **kw: Any) -> Rates:
    from dataclasses import replace

    return replace(r, **kw)


# --- JSON <-> dataclasses ---------------------------------------------------------------------

def to_json(r: Rates) -> dict[str, Any]:
    """The rates as a JSON-ready dict (stable key order)."""
    cats = []
    for c in r.categories:
        d: dict[str, Any] = {"category": c.category, "mode": c.mode, "scales_with": c.scales_with}
        d["rate_per_gpu_hour" if c.scales_with == "gpu" else "rate_per_node_hour"] = c.rate
        for name in ("count", "exposure_gpu_hours", "exposure_node_hours", "mean_interval_s"):
            v = getattr(c, name)
            if v is not None:
                d[name] = v
        if c.rate_ci95 is not None:
            d["rate_ci95"] = list(c.rate_ci95)
        for name in ("hang", "repair", "startup", "slow_duration"):
            v = getattr(c, name)
            if v is not None:
                d[name] = v.to_json()
        if c.rho is not None:
            d["rho"] = c.rho
        if c.note:
            d["note"] = c.note
        cats.append(d)
    out: dict[str, Any] = {
        "schema": SCHEMA_ID,
        "provenance": r.provenance,
        "scale": {"gpus": r.scale.gpus, "gpus_per_node": r.scale.gpus_per_node},
        "ideal_step_s": r.ideal_step_s,
        "step_jitter_sigma": r.step_jitter_sigma,
    }
    if r.target_iterations is not None:
        out["target_iterations"] = r.target_iterations
    out["checkpoint"] = {"tau_s": r.checkpoint.tau_s, "delta": r.checkpoint.delta.to_json(),
                         "load_s": r.checkpoint.load_s}
    if r.first_startup is not None:
        out["first_startup"] = r.first_startup.to_json()
    if r.tail is not None:
        out["tail"] = r.tail.to_json()
    out["categories"] = cats
    return out


def dumps(r: Rates) -> str:
    return json.dumps(to_json(r), indent=2) + "\n"


def dump(r: Rates, path: str | Path) -> None:
    Path(path).write_text(dumps(r), encoding="utf-8")


def load(path: str | Path) -> Rates:
    """Read and validate a rates file; RatesError tells what to fix."""
    # imported here: `simulate --help` imports this module, and no --help may load parsers
    # (tests/cli/test_startup.py)
    from parsers.textfile import NotText, read_text

    p = Path(path)
    try:
        doc = json.loads(read_text(p))
    except FileNotFoundError as e:
        raise RatesError(f"rates file {str(p)!r} not found") from e
    except NotText as e:
        raise RatesError(str(e)) from None
    except json.JSONDecodeError as e:
        raise RatesError(f"{p}: not valid JSON ({e.msg} at line {e.lineno})") from e
    return from_json(doc, where=str(p))


def from_json(doc: Any, where: str = "rates") -> Rates:
    validate(doc, where)
    cats = tuple(_category(c) for c in doc["categories"])
    ck = doc["checkpoint"]
    return Rates(
        scale=Scale(int(doc["scale"]["gpus"]), int(doc["scale"]["gpus_per_node"])),
        ideal_step_s=float(doc["ideal_step_s"]),
        checkpoint=Checkpoint(float(ck["tau_s"]), _dist(ck["delta"]), float(ck["load_s"])),
        categories=cats,
        target_iterations=doc.get("target_iterations"),
        step_jitter_sigma=float(doc.get("step_jitter_sigma", 0.0)),
        first_startup=_dist(doc["first_startup"]) if "first_startup" in doc else None,
        tail=_dist(doc["tail"]) if "tail" in doc else None,
        provenance=dict(doc.get("provenance", {})),
    )


def _dist(d: dict[str, Any]) -> Dist:
    return Dist(float(d["mean_s"]), d.get("dist", "fixed"), float(d.get("sigma", 0.0)))


def _category(c: dict[str, Any]) -> Category:
    gpu = "rate_per_gpu_hour" in c
    ci = c.get("rate_ci95")
    return Category(
        category=c["category"], mode=c["mode"], scales_with=c["scales_with"],
        rate=float(c["rate_per_gpu_hour"] if gpu else c["rate_per_node_hour"]),
        hang=_dist(c["hang"]) if "hang" in c else None,
        repair=_dist(c["repair"]) if "repair" in c else None,
        startup=_dist(c["startup"]) if "startup" in c else None,
        rho=c.get("rho"),
        slow_duration=_dist(c["slow_duration"]) if "slow_duration" in c else None,
        count=c.get("count"), exposure_gpu_hours=c.get("exposure_gpu_hours"),
        exposure_node_hours=c.get("exposure_node_hours"),
        rate_ci95=(float(ci[0]), float(ci[1])) if ci is not None else None,
        mean_interval_s=c.get("mean_interval_s"), note=c.get("note"),
    )


# --- validation -------------------------------------------------------------------------------

_TOP = {"schema", "provenance", "scale", "ideal_step_s", "step_jitter_sigma", "target_iterations",
        "checkpoint", "first_startup", "tail", "categories", "fit"}
_CAT = {"category", "mode", "scales_with", "rate_per_gpu_hour", "rate_per_node_hour", "count",
        "exposure_gpu_hours", "exposure_node_hours", "rate_ci95", "mean_interval_s", "hang",
        "repair", "startup", "rho", "slow_duration", "note", "stats"}


def _num(v: Any, where: str, *, positive: bool = False, minimum: float | None = None) -> None:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise RatesError(f"{where}: expected a number, got {v!r}")
    if positive and v <= 0:
        raise RatesError(f"{where}: must be > 0, got {v!r}")
    if minimum is not None and v < minimum:
        raise RatesError(f"{where}: must be >= {minimum}, got {v!r}")


def _obj(v: Any, where: str, allowed: set[str], required: set[str]) -> None:
    if not isinstance(v, dict):
        raise RatesError(f"{where}: expected an object, got {type(v).__name__}")
    extra = set(v) - allowed
    if extra:
        raise RatesError(f"{where}: unknown field(s) {sorted(extra)}; allowed: {sorted(allowed)}")
    missing = required - set(v)
    if missing:
        raise RatesError(f"{where}: missing required field(s) {sorted(missing)}")


def _check_dist(v: Any, where: str) -> None:
    _obj(v, where, {"mean_s", "dist", "sigma"}, {"mean_s"})
    _num(v["mean_s"], f"{where}.mean_s", minimum=0.0)
    dist = v.get("dist", "fixed")
    if dist not in DISTRIBUTIONS:
        raise RatesError(f"{where}.dist: {dist!r} is not one of {list(DISTRIBUTIONS)}")
    if dist == "lognormal":
        if "sigma" not in v:
            raise RatesError(f"{where}: a lognormal distribution needs 'sigma'")
        _num(v["sigma"], f"{where}.sigma", minimum=0.0)


def validate(doc: Any, where: str = "rates") -> None:
    """Raise RatesError unless ``doc`` follows rates.schema.json."""
    _obj(doc, where, _TOP, {"schema", "scale", "ideal_step_s", "checkpoint", "categories"})
    if doc["schema"] != SCHEMA_ID:
        raise RatesError(f"{where}.schema: expected {SCHEMA_ID!r}, got {doc['schema']!r}")
    if "provenance" in doc and not isinstance(doc["provenance"], dict):
        raise RatesError(f"{where}.provenance: expected an object")
    sc = doc["scale"]
    _obj(sc, f"{where}.scale", {"gpus", "gpus_per_node"}, {"gpus", "gpus_per_node"})
    for k in ("gpus", "gpus_per_node"):
        if isinstance(sc[k], bool) or not isinstance(sc[k], int) or sc[k] < 1:
            raise RatesError(f"{where}.scale.{k}: expected a positive integer, got {sc[k]!r}")
    if sc["gpus"] % sc["gpus_per_node"]:
        raise RatesError(f"{where}.scale: gpus ({sc['gpus']}) must be a multiple of "
                         f"gpus_per_node ({sc['gpus_per_node']})")
    _num(doc["ideal_step_s"], f"{where}.ideal_step_s", positive=True)
    if "step_jitter_sigma" in doc:
        _num(doc["step_jitter_sigma"], f"{where}.step_jitter_sigma", minimum=0.0)
    if "target_iterations" in doc:
        ti = doc["target_iterations"]
        if isinstance(ti, bool) or not isinstance(ti, int) or ti < 1:
            raise RatesError(f"{where}.target_iterations: expected a positive integer")
    ck = doc["checkpoint"]
    _obj(ck, f"{where}.checkpoint", {"tau_s", "delta", "load_s"}, {"tau_s", "delta", "load_s"})
    _num(ck["tau_s"], f"{where}.checkpoint.tau_s", positive=True)
    _check_dist(ck["delta"], f"{where}.checkpoint.delta")
    _num(ck["load_s"], f"{where}.checkpoint.load_s", minimum=0.0)
    for k in ("first_startup", "tail"):
        if k in doc:
            _check_dist(doc[k], f"{where}.{k}")
    cats = doc["categories"]
    if not isinstance(cats, list):
        raise RatesError(f"{where}.categories: expected a list")
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(cats):
        w = f"{where}.categories[{i}]"
        _obj(c, w, _CAT, {"category", "mode", "scales_with"})
        if c["category"] not in FAILURE_CATEGORIES:
            raise RatesError(f"{w}.category: {c['category']!r} is not a failure category; use "
                             f"one of {', '.join(FAILURE_CATEGORIES)} (README, \"The rule "
                             "table\")")
        if c["mode"] not in MODES:
            raise RatesError(f"{w}.mode: expected one of {list(MODES)}, got {c['mode']!r}")
        key = (c["category"], c["mode"])
        if key in seen:
            raise RatesError(f"{w}: {c['category']} {c['mode']} appears twice")
        seen.add(key)
        if c["scales_with"] not in ("gpu", "node"):
            raise RatesError(f"{w}.scales_with: expected 'gpu' or 'node'")
        rk = "rate_per_gpu_hour" if c["scales_with"] == "gpu" else "rate_per_node_hour"
        other = "rate_per_node_hour" if rk == "rate_per_gpu_hour" else "rate_per_gpu_hour"
        if rk not in c or other in c:
            raise RatesError(f"{w}: scales_with={c['scales_with']!r} needs {rk!r} (and not "
                             f"{other!r})")
        _num(c[rk], f"{w}.{rk}", minimum=0.0)
        for k in ("exposure_gpu_hours", "exposure_node_hours", "mean_interval_s"):
            if k in c:
                _num(c[k], f"{w}.{k}", minimum=0.0)
        if "count" in c and (isinstance(c["count"], bool) or not isinstance(c["count"], int)
                             or c["count"] < 0):
            raise RatesError(f"{w}.count: expected a non-negative integer")
        if "rate_ci95" in c:
            ci = c["rate_ci95"]
            if not isinstance(ci, list) or len(ci) != 2:
                raise RatesError(f"{w}.rate_ci95: expected [low, high]")
            for j, v in enumerate(ci):
                _num(v, f"{w}.rate_ci95[{j}]", minimum=0.0)
        for k in ("hang", "repair", "startup", "slow_duration"):
            if k in c:
                _check_dist(c[k], f"{w}.{k}")
        if c["mode"] == "fail-stop":
            for k in ("hang", "repair"):
                if k not in c:
                    raise RatesError(f"{w}: a fail-stop category needs {k!r}")
            if "rho" in c or "slow_duration" in c:
                raise RatesError(f"{w}: rho/slow_duration belong to fail-slow entries")
        else:
            if "rho" not in c or "slow_duration" not in c:
                raise RatesError(f"{w}: a fail-slow category needs 'rho' and 'slow_duration'")
            _num(c["rho"], f"{w}.rho", positive=True)
            if not c["rho"] < 1:
                raise RatesError(f"{w}.rho: the throughput ratio must be < 1, got {c['rho']}")
        if "note" in c and not isinstance(c["note"], str):
            raise RatesError(f"{w}.note: expected a string")


def schema_document() -> dict[str, Any]:
    """The JSON Schema file's content."""
    doc: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return doc


__all__ = ["SCHEMA_ID", "Category", "Checkpoint", "Dist", "Rates", "RatesError", "Scale",
           "dump", "dumps", "from_json", "load", "to_json", "validate"]
