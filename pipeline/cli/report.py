"""``tormortem report DIR``: the post-mortem as HTML and PDF from an ``analyze`` output folder."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from pipeline.cli import output


def _json(path: Path, what: str) -> dict[str, Any]:
    from parsers.textfile import NotText, read_text

    try:
        doc = json.loads(read_text(path))
    except FileNotFoundError:
        raise click.ClickException(f"{what} {str(path)!r} not found") from None
    except NotText as e:
        raise click.ClickException(str(e)) from None
    except json.JSONDecodeError as e:
        raise click.ClickException(f"{path}: not valid JSON ({e.msg} at line {e.lineno})"
                                   ) from None
    if not isinstance(doc, dict):
        raise click.ClickException(f"{path}: expected a JSON object")
    return doc


@click.command("report")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where to write report.html and report.pdf (default: DIRECTORY).")
@click.option("--rates", "rates_path",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Fitted rates JSON (schema tormortem.rates/1) to show "
              "(default: DIRECTORY/rates.json if present).")
@click.option("--model", "model_path",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Model predictions JSON (shape: see pipeline.report; "
              "default: DIRECTORY/model.json if present).")
@click.option("--no-pdf", is_flag=True, help="Write the HTML only.")
@click.option("--pdf-engine", type=click.Choice(["auto", "chromium", "weasyprint"]),
              default="auto", show_default=True,
              help="auto: headless Chromium if installed, else WeasyPrint.")
@output.verbosity_options
def report(directory: Path, out: Path | None, rates_path: Path | None,
           model_path: Path | None, no_pdf: bool, pdf_engine: str) -> None:
    """Write the post-mortem report (report.html and report.pdf) for an analyzed run.

    DIRECTORY is an `analyze --out` folder: analysis.json, and tormortem.duckdb for step
    times, evidence excerpts and data quality. The HTML is self-contained (no network).

    \b
    Example:
      tormortem analyze sample_logs/demo --out reports/demo
      tormortem report reports/demo
      tormortem report reports/demo --rates rates.json --model model.json --no-pdf
    """
    from pipeline.ingest.outputs import OutputError, Writer, reading, verify

    target = out or directory
    try:
        if target.resolve() == directory.resolve():  # report.html/pdf join the output's files
            with Writer(directory, "analyze", carry=True) as w:
                verify(directory, need=["analysis.json"], stage="analyze")
                html, pdf, secs = _render(directory, w.path, rates_path, model_path, no_pdf,
                                          pdf_engine)
                w.commit()
        else:
            with reading(directory, need=["analysis.json"], stage="analyze"):
                target.mkdir(parents=True, exist_ok=True)
                stage = Path(tempfile.mkdtemp(prefix=".tormortem-report-", dir=target))
                try:
                    html, pdf, secs = _render(directory, stage, rates_path, model_path, no_pdf,
                                              pdf_engine)
                    for p in (html, pdf):
                        if p is not None:
                            os.replace(p, target / p.name)
                finally:
                    shutil.rmtree(stage, ignore_errors=True)
    except OutputError as e:  # also when the command is used on its own (tests)
        raise click.ClickException(str(e)) from None
    output.status(f"wrote {target / html.name}" + (f" and {target / pdf.name}" if pdf else "")
                  + f" in {secs:.1f} s")


def _render(directory: Path, dest: Path, rates_path: Path | None, model_path: Path | None,
            no_pdf: bool, pdf_engine: str) -> tuple[Path, Path | None, float]:
    from pipeline.model import rates as rates_mod
    from pipeline.report.html import PdfError, write_report

    analysis_path = directory / "analysis.json"
    analysis = _json(analysis_path, "analysis")
    if not str(analysis.get("schema", "")).startswith("tormortem.analysis/"):
        raise click.ClickException(f"{analysis_path}: not a tormortem analysis "
                                   "(schema tormortem.analysis/1)")
    rates = None
    auto_rates = rates_path is None and (directory / "rates.json").exists()
    if auto_rates:
        rates_path = directory / "rates.json"
    if rates_path is not None:
        try:
            rates = rates_mod.to_json(rates_mod.load(rates_path))
        except rates_mod.RatesError as e:
            if not auto_rates:
                raise click.ClickException(str(e)) from None
            output.warn(f"{rates_path} left out: {e}")
    if model_path is None and (directory / "model.json").exists():
        model_path = directory / "model.json"
    model = _json(model_path, "model") if model_path is not None else None
    t0 = time.perf_counter()
    try:
        html, pdf = write_report(dest, analysis, rates, model,
                                 db=directory / "tormortem.duckdb", pdf=not no_pdf,
                                 engine=pdf_engine,
                                 on_phase=lambda name: report_phase(name, pdf_engine))
    except PdfError as e:
        raise click.ClickException(str(e)) from None
    return html, pdf, time.perf_counter() - t0


def report_phase(name: str, engine: str = "auto") -> None:
    """The status line of each phase of writing the report (the PDF's engine as asked)."""
    how = {"chromium": "headless Chromium", "weasyprint": "WeasyPrint"}.get(
        engine, "headless Chromium, else WeasyPrint")
    output.status("report: writing report.html ..." if name == "html" else
                  f"report: printing report.pdf ({how}) ...")
