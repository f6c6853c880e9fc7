"""The post-mortem report: one self-contained HTML page and a PDF of the same content.

``write_report(out_dir, analysis, rates, model)`` writes ``out_dir/report.html`` and
``out_dir/report.pdf`` and returns both paths. The HTML has no scripts and no external
references (figures are embedded PNG ``data:`` URIs, the CSS is inlined, a Content-Security-
Policy forbids anything else); every string from a log is escaped by Jinja2's autoescape.

Inputs
------
``analysis``: the ``tormortem.analysis/1`` dict that ``pipeline.analyze.run.analyze_db`` returns
(``analysis.json``). The tables of ``out_dir/tormortem.duckdb`` (or ``db=``), when present, add
step times, checkpoints, evidence chains and data quality; without them those parts say
"not available".

``rates``: ``None`` or a ``tormortem.rates/1`` dict (``pipeline.model.rates.to_json``).

``model``: ``None`` or a dict; every key is optional, absent parts render "not available"::

    {
      "predicted":   {"tor": 0.905, "low": 0.89, "high": 0.92, "level": 0.9},
      "runs":        {"<run name>": {"tor": .., "low": .., "high": .., "level": ..}},
                     # per-run predictions; a run not listed here uses "predicted"
      "vs_gpus":     [[gpus, tor], ...]  or  [[gpus, tor, low, high], ...],
      "gpus":        16384,              # this run's scale, marked on the vs_gpus plot
      "vs_tau":      [[tau_s, tor], ...] or  [[tau_s, tor, low, high], ...],
      "tau_s":       1800.0,             # this run's checkpoint interval (seconds)
      "tau_opt_s":   1234.0,             # the optimum interval, marked on the vs_tau plot
      "key_factors": [["name", tor_gain], ...],  # TOR gained if the factor were removed
      "note":        "free text: where the predictions come from"
    }

TOR values are fractions (0..1); "level" is the interval's coverage (0..1).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2

from pipeline.report import context, dbdata
from pipeline.report.pdf import PdfError, write_pdf

__all__ = ["PdfError", "render_html", "write_report"]

TEMPLATES = Path(__file__).parent / "templates"


def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                              autoescape=True, undefined=jinja2.StrictUndefined,
                              trim_blocks=False, lstrip_blocks=False)


def render_html(analysis: dict[str, Any], rates: dict[str, Any] | None = None,
                model: dict[str, Any] | None = None, db: Path | None = None) -> str:
    """The report page as one HTML string."""
    data = context.build(analysis, rates, model, dbdata.load(db))
    css = (TEMPLATES / "style.css").read_text(encoding="utf-8")
    return _env().get_template("report.html.j2").render(
        css=css, full_chains=context.FULL_CHAINS, **data)


def write_report(out_dir: str | Path, analysis: dict[str, Any],
                 rates: dict[str, Any] | None = None, model: dict[str, Any] | None = None,
                 *, db: Path | None = None, pdf: bool = True, engine: str = "auto",
                 timings: dict[str, Any] | None = None,
                 on_phase: Callable[[str], None] | None = None) -> tuple[Path, Path | None]:
    """Write report.html (and report.pdf unless ``pdf`` is false) into ``out_dir``.

    ``db`` defaults to ``out_dir/tormortem.duckdb``. ``timings``, when given, receives the
    seconds spent on the HTML and the PDF, and the PDF engine used. ``on_phase`` is called
    with ``"html"`` and ``"pdf"`` as each starts (the CLI's status lines)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if on_phase:
        on_phase("html")
    html = render_html(analysis, rates, model, db if db is not None else
                       out / "tormortem.duckdb")
    html_path = out / "report.html"
    html_path.write_text(html, encoding="utf-8")
    t1 = time.perf_counter()
    pdf_path: Path | None = None
    if pdf:
        if on_phase:
            on_phase("pdf")
        pdf_path = out / "report.pdf"
        used = write_pdf(html_path, pdf_path, engine)
        if timings is not None:
            timings["pdf_engine"] = used
    if timings is not None:
        timings["html_s"] = t1 - t0
        timings["pdf_s"] = time.perf_counter() - t1
    return html_path, pdf_path
