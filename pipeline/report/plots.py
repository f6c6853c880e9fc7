"""The report's figures: matplotlib (Agg), returned as ``data:image/png;base64,...`` URIs.

Every function takes plain Python data (no DB handles) and returns one URI; large series are
downsampled here so a 50-day run plots as fast as a 3-day one.
"""

from __future__ import annotations

import base64
import io
import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from pipeline.model.rates import FAILURE_CATEGORIES

COMPONENT_COLORS = {
    "t_opt": "#4c9a5f", "slow": "#e3b23c", "lost": "#c8553d", "ckpt_save": "#3b75af",
    "startup": "#8e6bb8", "hang": "#ef8a3c", "repair": "#9a9a9a", "tail": "#8c564b",
}
#: timeline: attempts in a light grey-green, checkpoint ticks in dark navy -- far apart in hue
#: and lightness (they were two similar blues), and neither is a component colour
ATTEMPT_COLOR, CHECKPOINT_COLOR = "#a9c5b4", "#1b2a4a"
COST_PARTS = (("lost_s", "lost work", "#c8553d"), ("hang_s", "hang", "#ef8a3c"),
              ("repair_s", "repair gap", "#9a9a9a"), ("startup_s", "next startup", "#8e6bb8"))
_TAB = [plt.get_cmap("tab20")(i) for i in range(20)]
MAX_POINTS = 2000

plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9,
                     "legend.fontsize": 8, "axes.spines.top": False,
                     "axes.spines.right": False})


def _d2n(x: Any) -> Any:
    return mdates.date2num(x)  # type: ignore[no-untyped-call]


def _date_axis(ax: Any) -> None:
    loc = mdates.AutoDateLocator()  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(loc)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))  # type: ignore[no-untyped-call]


def category_color(cat: str) -> Any:
    """A stable colour per failure category (same in every figure and in the HTML)."""
    if cat in FAILURE_CATEGORIES:
        return _TAB[FAILURE_CATEGORIES.index(cat) % 20]
    return _TAB[(sum(map(ord, cat)) % 5) + 15]


def category_hex(cat: str) -> str:
    r, g, b, _ = category_color(cat)
    return f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}"


def to_uri(fig: Figure, dpi: int = 110) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def decomposition(runs: Sequence[tuple[str, dict[str, float], float]],
                  labels: dict[str, str]) -> str:
    """Stacked horizontal bar per run: each component's share of T_obs (%)."""
    fig, ax = plt.subplots(figsize=(9.0, 0.9 + 0.55 * len(runs)))
    names = [r[0] for r in runs]
    left = np.zeros(len(runs))
    for comp, color in COMPONENT_COLORS.items():
        vals = np.array([100 * (r[1].get(comp) or 0.0) / r[2] if r[2] else 0.0 for r in runs])
        ax.barh(names, vals, left=left, color=color, label=labels.get(comp, comp),
                edgecolor="white", linewidth=0.5)
        for i, v in enumerate(vals):
            if v >= 4:
                ax.text(left[i] + v / 2, i, f"{v:.1f}%", ha="center", va="center",
                        fontsize=8, color="white" if comp != "slow" else "black")
        left += vals
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of observed wall time T_obs (%)")
    ax.invert_yaxis()
    ax.legend(ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.35 - 0.05 * len(runs)),
              frameon=False)
    ax.set_title("Where the time went (components sum to T_obs)")
    return to_uri(fig)


def by_category(rows: Sequence[dict[str, Any]]) -> str:
    """Horizontal stacked bars: interruption cost per category, split lost/hang/repair/startup
    (rows carry the per-category sums ``sum_lost_s``, ``sum_hang_s``, ...)."""
    fig, ax = plt.subplots(figsize=(9.0, 0.8 + 0.32 * max(len(rows), 1)))
    names = [r["category"] for r in rows]
    left = np.zeros(len(rows))
    for key, label, color in COST_PARTS:
        vals = np.array([r["sum_" + key] / 3600.0 for r in rows])
        ax.barh(names, vals, left=left, color=color, label=label, edgecolor="white",
                linewidth=0.5)
        left += vals
    for i, tot in enumerate(left):
        ax.text(tot, i, f" {tot:.1f} h", va="center", fontsize=8)
    ax.set_xlim(0, max(left.max() if len(left) else 1.0, 1e-6) * 1.15)
    ax.set_xlabel("cost of interruptions (hours of wall time)")
    ax.invert_yaxis()
    ax.legend(ncol=4, loc="lower right", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.set_title("Lost time by root-cause category", loc="left")
    return to_uri(fig)


def timeline(attempts: Sequence[tuple[datetime, datetime, str]],
             interruptions: Sequence[tuple[datetime, str]],
             checkpoints: Sequence[datetime],
             episodes: Sequence[tuple[datetime, datetime]]) -> str:
    """Lanes over wall time: interruptions (one row per category, largest count on top),
    attempts with the gaps between them, fail-slow episodes, and checkpoint saves."""
    cats: dict[str, list[float]] = {}
    for t, cat in interruptions:
        cats.setdefault(cat, []).append(_d2n(t))
    order = sorted(cats, key=lambda c: -len(cats[c]))
    fig, ax = plt.subplots(figsize=(11.0, 1.9 + 0.22 * len(order)))
    xs = [(_d2n(s), _d2n(e)) for s, e, _ in attempts]
    span = (max(e for _, e in xs) - min(s for s, _ in xs)) if xs else 1.0
    ax.broken_barh([(s, e - s) for s, e in xs], (1.0, 0.8), facecolors=ATTEMPT_COLOR)
    gaps = [(e, max(s2 - e, span / 1500)) for (_, e), (s2, _) in itertools.pairwise(xs)
            if s2 > e]
    ax.broken_barh(gaps, (1.0, 0.8), facecolors="#d9534f", alpha=0.7)
    if episodes:
        ax.broken_barh([(_d2n(s), max(_d2n(e) - _d2n(s),
                                                 span / 1500)) for s, e in episodes],
                       (1.0, 0.8), facecolors="#e3b23c")
    if checkpoints:
        ax.vlines(_d2n(list(checkpoints)), 0.15, 0.75, colors=CHECKPOINT_COLOR,
                  linewidth=0.7 if len(checkpoints) < 500 else 0.3)
    ticks, labels = [0.45, 1.4], ["checkpoints", "attempts"]
    for k, cat in enumerate(order):
        y = 2.3 + 0.5 * k
        ax.scatter(cats[cat], [y] * len(cats[cat]), marker="v", s=24, zorder=3,
                   color=category_color(cat), edgecolors="none")
        ticks.append(y)
        labels.append(f"{cat} ({len(cats[cat])})")
    if len(interruptions) <= 60:
        ax.vlines([x for v in cats.values() for x in v], 0.9, 2.05, colors="#999999",
                  linewidth=0.5, linestyles=":")
    ax.set_yticks(ticks, labels)
    ax.set_ylim(0.0, 2.3 + 0.5 * max(len(order), 1) - 0.1)
    _date_axis(ax)
    ax.set_xlabel("wall time (UTC)")
    ax.grid(axis="x", alpha=0.25)
    ax.legend(handles=[Patch(color=ATTEMPT_COLOR, label="attempt running"),
                       Patch(color="#d9534f", alpha=0.7, label="between attempts (gap)"),
                       Patch(color="#e3b23c", label="fail-slow episode"),
                       Patch(color=CHECKPOINT_COLOR, label="checkpoint save")],
              ncol=4, loc="lower right", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.set_title("Timeline", loc="left")
    return to_uri(fig)


def step_time(ts: np.ndarray, step_s: np.ndarray, ideal_s: float | None,
              episodes: Sequence[tuple[datetime, datetime]]) -> str:
    """Step time over wall time (binned medians and maxima when long), fail-slow shaded."""
    fig, ax = plt.subplots(figsize=(11.0, 2.8))
    x = ts.astype("datetime64[us]").astype(np.int64) / 86400e6 + _d2n(
        np.datetime64("1970-01-01T00:00:00", "us"))
    if len(x) > MAX_POINTS:
        edges = np.linspace(x.min(), x.max(), MAX_POINTS // 2 + 1)
        idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)
        order = np.argsort(idx, kind="stable")
        groups = np.split(step_s[order], np.flatnonzero(np.diff(idx[order])) + 1)
        centers = (edges[:-1] + edges[1:]) / 2
        present = np.unique(idx)
        med = np.array([np.median(g) for g in groups])
        mx = np.array([g.max() for g in groups])
        ax.plot(centers[present], mx, color="#c8553d", linewidth=0.6, alpha=0.6,
                label="max per bin")
        ax.plot(centers[present], med, color="#2f5b88", linewidth=0.9, label="median per bin")
        top = float(np.percentile(med, 99.5)) * 1.6
    else:
        ax.plot(x, step_s, ".", markersize=1.5, color="#2f5b88", label="step time")
        top = float(np.percentile(step_s, 99.5)) * 1.4 if len(step_s) else 1.0
    for k, (s, e) in enumerate(episodes):
        ax.axvspan(_d2n(s), _d2n(e), color="#e3b23c", alpha=0.35,
                   label="fail-slow episode" if k == 0 else None)
    if ideal_s:
        ax.axhline(ideal_s, color="#4c9a5f", linestyle="--", linewidth=1.0,
                   label=f"ideal step t* = {ideal_s:.3g} s")
        top = max(top, ideal_s * 1.5)
    ax.set_ylim(0, top)
    _date_axis(ax)
    ax.set_ylabel("seconds per iteration")
    ax.set_xlabel("wall time (UTC)")
    ax.legend(loc="upper right", ncol=4, frameon=False)
    ax.set_title("Step time over time (outliers above the axis are clipped)")
    return to_uri(fig)


def curve(points: Sequence[Sequence[float]], *, xlabel: str, title: str, logx: bool,
          mark_x: float | None = None, mark_label: str = "", now_x: float | None = None,
          realized: float | None = None) -> str:
    """TOR against a planning variable; optional optimum and current-setting markers."""
    fig, ax = plt.subplots(figsize=(5.4, 3.2))
    pts = sorted((float(p[0]), float(p[1])) for p in points)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    ax.plot(xs, ys, "-o", color="#2f5b88", markersize=3, label="predicted TOR")
    if any(len(p) >= 4 for p in points):
        band = sorted((float(p[0]), float(p[2]), float(p[3])) for p in points if len(p) >= 4)
        ax.fill_between([b[0] for b in band], [b[1] for b in band], [b[2] for b in band],
                        color="#2f5b88", alpha=0.15, label="interval")
    if mark_x is not None:
        ax.axvline(mark_x, color="#4c9a5f", linestyle="--", linewidth=1.2,
                   label=mark_label or "optimum")
        ax.plot([mark_x], [float(np.interp(mark_x, xs, ys))], "*", color="#4c9a5f",
                markersize=12)
    if now_x is not None:
        ax.axvline(now_x, color="#c8553d", linestyle=":", linewidth=1.2, label="this run")
    if realized is not None:
        ax.axhline(realized, color="#c8553d", linewidth=0.8, alpha=0.6, label="realized TOR")
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("TOR = T_opt / T_obs")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=7)
    return to_uri(fig)


def factors(rows: Sequence[tuple[str, float]]) -> str:
    """Key factors: TOR gained if each were fixed, largest first."""
    fig, ax = plt.subplots(figsize=(6.0, 0.9 + 0.3 * max(len(rows), 1)))
    ax.barh([r[0] for r in rows], [r[1] for r in rows], color="#4c9a5f")
    for i, r in enumerate(rows):
        ax.text(r[1], i, f" +{r[1]:.4f}", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("TOR gained if this factor were removed")
    ax.set_xlim(0, max([r[1] for r in rows] + [1e-6]) * 1.25)
    ax.set_title("Key factors")
    return to_uri(fig)
