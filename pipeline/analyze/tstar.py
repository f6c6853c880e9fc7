"""The healthy step time t* (``decompose.ideal_step``), from progress lines in arrays.

t* is the robust median of the per-iteration time of the *steady* intervals: an interval
between two consecutive progress lines of one attempt (not an attempt's first, which holds
warm-up) that covers at least one iteration and holds no checkpoint save. Such an interval's
step time is the reported ms per iteration, else its duration over its iterations -- neither
depends on a provisional t*, so ``steady_steps`` computes them for a whole run with numpy
(the same IEEE operations, hence the same values, as ``decompose._intervals``) instead of
building every interval twice. ``robust_median`` is the median taken twice, the second time
only over values within ``band`` of the first, so that fail-slow stretches (one-sided, well
above t*) do not pull it up.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def robust_median(steps: Sequence[float] | np.ndarray, band: float = 1.2) -> float:
    """Median of ``steps``, then the median of those within ``band`` of it (nan if none)."""
    arr = np.asarray(steps, dtype=float)
    if arr.size == 0:
        return float("nan")
    m0 = float(np.median(arr))
    core = arr[(arr <= m0 * band) & (arr >= m0 / band)]
    return float(np.median(core)) if core.size else m0


def steady_steps(progress: Sequence[Sequence[tuple[float, int, float]]],
                 saved: Sequence[Sequence[int]]) -> np.ndarray:
    """Step times of the steady intervals, attempt by attempt in order. ``progress``: per
    attempt its lines (epoch s, iteration, reported ms or nan); ``saved``: per attempt the
    sorted iterations after which a save ran (an interval (a, b] holds saves a <= s < b)."""
    out: list[np.ndarray] = []
    for lines, saves in zip(progress, saved, strict=True):
        if len(lines) < 2:
            continue
        arr = np.asarray(lines, dtype=float)
        ts, it, ms = arr[:, 0], arr[:, 1], arr[:, 2]
        a, b = it[:-1], it[1:]
        n = b - a
        sv = np.asarray(saves, dtype=float)
        after_save = np.searchsorted(sv, a, "left") < np.searchsorted(sv, b, "left")
        per = ms[1:] / 1000.0
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(np.isfinite(per), per, (ts[1:] - ts[:-1]) / n)
        out.append(step[~after_save & (n > 0) & np.isfinite(step)])
    return np.concatenate(out) if out else np.empty(0)
