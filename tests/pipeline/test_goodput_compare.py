"""Our realized TOR beside Google's ml-goodput-measurement goodput on the same timeline.

``benchmarks/goodput_compare.py`` feeds its ``GoodputRecorder``/``GoodputCalculator`` (offline,
through the ``cloud_logger`` hook) the job starts/end, step starts and checkpoint saves of our
parsed timeline. Its docstring derives the mapping checked here::

    its productive + PROGRAM_STARTUP == t_opt + slow + ckpt_save + tail + blind gaps - saves told

to the second (log lines carry whole seconds), and that where its assumptions hold (every
step logged, each restart re-logs a step number, no fail-slow) its goodput equals our TOR up
to the tail; elsewhere the difference is exactly the named components.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pipeline.simulate import presets
from pipeline.simulate.params import Settings
from pipeline.simulate.run import simulate

try:
    import ml_goodput_measurement.src.goodput  # noqa: F401
    _IMPORT_ERROR = ""
except Exception as e:  # not installed, or its google-cloud dependencies are missing
    _IMPORT_ERROR = f"{type(e).__name__}: {e}"

pytestmark = pytest.mark.skipif(
    bool(_IMPORT_ERROR),
    reason=f"ml-goodput-measurement not importable ({_IMPORT_ERROR}); "
           "pip install ml-goodput-measurement")

ROUNDING_S = 1.0  #: per restart: step starts are ts - ms with ts rounded to the second
TOL = 1e-4  #: on goodput fractions


def _module() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "goodput_compare.py"
    spec = importlib.util.spec_from_file_location("goodput_compare", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


gc = _module()
_CACHE: dict[tuple[str, int, int], Path] = {}


def _campaign(tmp: pytest.TempPathFactory, variant: str, seed: int, log_interval: int = 1
              ) -> Path:
    key = (variant, seed, log_interval)
    if key not in _CACHE:
        rates = presets.get("demo")
        if variant == "no-slow":  # same failures (separate random streams), no fail-slow
            rates = dataclasses.replace(rates, categories=rates.fail_stop())
        d = tmp.mktemp(f"{variant}-{seed}-{log_interval}")
        simulate(rates, seed, d / "logs", Settings(log_interval=log_interval))
        _CACHE[key] = d
    return _CACHE[key]


_ROWS: dict[tuple[Any, ...], Any] = {}


def _compare(tmp: pytest.TempPathFactory, variant: str, seed: int, *, log_interval: int = 1,
             ckpt_events: bool = True, expand: bool = True) -> Any:
    key = (variant, seed, log_interval, ckpt_events, expand)
    if key not in _ROWS:
        d = _campaign(tmp, variant, seed, log_interval)
        rows = gc.compare(d / "logs", tmp.mktemp("work"), ckpt_events=ckpt_events,
                          expand=expand)
        assert len(rows) == 1
        _ROWS[key] = rows[0]
    return _ROWS[key]


def _restarts_bound(r: Any) -> float:
    return ROUNDING_S * float(r.goodput.disruptions + len(r.blind) + 2)


@pytest.mark.parametrize("ckpt_events", [True, False])
@pytest.mark.parametrize(("variant", "seed"),
                         [("demo", 7), pytest.param("demo", 11, marks=pytest.mark.slow),
                          ("no-slow", 13), pytest.param("demo", 5, marks=pytest.mark.slow)])
def test_productive_time_maps_to_our_components(tmp_path_factory: pytest.TempPathFactory,
                                                variant: str, seed: int,
                                                ckpt_events: bool) -> None:
    r = _compare(tmp_path_factory, variant, seed, ckpt_events=ckpt_events)
    g = r.goodput
    assert abs(g.total_s - r.t_obs_s) <= 1.0
    assert abs(r.residual_s()) <= _restarts_bound(r), r.residual_s()
    assert abs(g.goodput - r.predicted_goodput()) <= TOL
    assert (r.saves_told_s > 0) == ckpt_events
    if ckpt_events:  # it reads the saves we told it, and only those
        assert abs(g.badput_s["UNPRODUCTIVE_CHECKPOINT_SAVE_TIME"] - r.saves_told_s) <= 1e-6
    # badput: everything else it does not count is our lost + hang + repair + startup
    # (a restart it did not see moves that gap from our overhead to its productive time)
    c = r.components
    others = sum(v for k, v in g.badput_s.items()
                 if k not in ("PROGRAM_STARTUP", "UNPRODUCTIVE_CHECKPOINT_SAVE_TIME",
                              "DATA_LOADING_ASYNC"))
    ours = c["lost"] + c["hang"] + c["repair"] + c["startup"] - r.blind_gap_s
    assert abs(others - ours) <= _restarts_bound(r), (others, ours)


@pytest.mark.parametrize("seed", [7, 11, 13, 17])
def test_equals_tor_where_its_assumptions_hold(tmp_path_factory: pytest.TempPathFactory,
                                               seed: int) -> None:
    """Log interval 1, every restart re-logs a step, no fail-slow, saves reported: its
    goodput is our TOR but for the tail (productive to it) and its first-step estimate."""
    r = _compare(tmp_path_factory, "no-slow", seed)
    g, c, t = r.goodput, r.components, r.t_obs_s
    assert not r.blind
    assert g.disruptions == r.attempts_with_steps - 1  # each restart re-logged a step
    # tail: the shutdown only -- the final save (our tail too) is one of the saves it is told
    tail = c["tail"] - (r.saves_told_s - c["ckpt_save"])
    expected = r.tor + (c["slow"] + tail - g.badput_s.get("PROGRAM_STARTUP", 0.0)) / t
    assert abs(g.goodput - expected) <= TOL
    assert abs(c["slow"]) / t < 1e-3  # jitter only
    assert abs(g.goodput - r.tor) < 2e-3


def test_fail_slow_is_goodput_to_it(tmp_path_factory: pytest.TempPathFactory) -> None:
    slow = _compare(tmp_path_factory, "demo", 7)
    fast = _compare(tmp_path_factory, "no-slow", 7)
    t = slow.t_obs_s
    assert slow.components["slow"] / t > 0.02  # seed 7 has fail-slow episodes
    gap = slow.goodput.goodput - slow.tor
    c = slow.components
    named = (c["slow"] + c["tail"] + c["ckpt_save"] - slow.saves_told_s
             - slow.goodput.badput_s.get("PROGRAM_STARTUP", 0.0)) / t
    assert abs(gap - named) <= TOL
    assert gap > 0.02 > fast.goodput.goodput - fast.tor


def test_checkpoint_saves_are_goodput_unless_reported(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    told = _compare(tmp_path_factory, "no-slow", 11)
    untold = _compare(tmp_path_factory, "no-slow", 11, ckpt_events=False)
    c, t = told.components, told.t_obs_s
    assert c["ckpt_save"] / t > 0.01
    # the saves it is told are ours plus the final one, which is our tail
    assert 0.0 <= told.saves_told_s - c["ckpt_save"] <= c["tail"]
    diff = untold.goodput.goodput - told.goodput.goodput
    assert abs(diff - told.saves_told_s / t) <= TOL


def test_restart_it_cannot_see(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Seed 5: an attempt dies after saving at 1050 and before logging 1051, so the next
    attempt's 1051 is no repeat: it merges the attempts, and the hang, the repair and the
    startup between them become one productive step."""
    r = _compare(tmp_path_factory, "demo", 5)
    assert len(r.blind) == 1
    assert r.goodput.disruptions == r.attempts_with_steps - 2
    gap = r.blind_gap_s
    c, t = r.components, r.t_obs_s
    assert gap > 600
    seen = (c["t_opt"] + c["slow"] + c["ckpt_save"] + c["tail"] - r.saves_told_s
            - r.goodput.badput_s.get("PROGRAM_STARTUP", 0.0)) / t
    assert abs(r.goodput.goodput - seen - gap / t) <= TOL


def test_needs_every_step(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Log interval 10: one step record per progress line leaves no two consecutive steps, so
    its productive time is only the final job end - last step start; spreading each line over
    its iterations restores the mapping. (Told the saves as well, its productive time would
    go negative and it refuses: "Productive training time is invalid".)"""
    raw = _compare(tmp_path_factory, "no-slow", 7, log_interval=10, expand=False,
                   ckpt_events=False)
    assert raw.goodput.goodput < 0.01 < raw.tor
    spread = _compare(tmp_path_factory, "no-slow", 7, log_interval=10)
    assert abs(spread.residual_s()) <= _restarts_bound(spread)
    assert abs(spread.goodput.goodput - spread.predicted_goodput()) <= TOL
