"""``tormortem analyze``: ingest, realized TOR, decomposition, root causes, fit and model
(library: pipeline.analyze.run, pipeline.model.outputs)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from pipeline.analyze.run import analyze_db
from pipeline.cli.options import (
    gather,
    input_warnings,
    manifest_fields,
    rules_opt,
    source_opt,
    tz_of,
    tz_opt,
    utf8_file,
    year_opt,
)
from pipeline.ingest.outputs import Writer
from pipeline.ingest.run import ingest
from pipeline.model.outputs import attach_models, write_rates
from pipeline.report import terminal as render
from pipeline.report.analysis_text import render as render_analysis
from pipeline.units import parse_duration


@click.command("analyze")
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the tables (Parquet + tormortem.duckdb) and reports.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the analysis as JSON (schema tormortem.analysis/1) instead of text.")
@click.option("--run-map", type=click.Path(dir_okay=False, path_type=Path), default=None,
              callback=utf8_file,
              help="CSV job_id,run: which run each job belongs to (default: by job name).")
@click.option("--ideal-step-time", default=None, metavar="DURATION",
              help="Healthy step time t* (e.g. 2.35s) instead of the median measured one.")
@click.option("--window-before", default="15m", show_default=True, metavar="DURATION",
              help="Evidence window before an interrupted attempt's last progress.")
@click.option("--window-after", default="5m", show_default=True, metavar="DURATION",
              help="Evidence window after an interrupted attempt's end.")
@click.option("--report", "with_report", is_flag=True,
              help="Also write report.html and report.pdf into --out (see `tormortem report`).")
@source_opt
@tz_opt
@year_opt
@rules_opt
def analyze_cmd(paths: tuple[str, ...], out: Path, as_json: bool, run_map: Path | None,
                ideal_step_time: str | None, window_before: str, window_after: str,
                with_report: bool, source: str | None, tz: str, year: int | None,
                rules_files: tuple[Path, ...]) -> None:
    """Realized TOR: ingest the logs, then split each run's wall time exactly.

    Links attempts into runs, rebuilds each attempt's progress, splits T_obs into T_opt,
    slow, lost work, checkpoint saves, startup, hang, repair and tail (they sum to T_obs),
    and finds each interruption's root cause from the evidence around it.

    \b
    Example:
      tormortem analyze sample_logs/demo --out reports/demo
      tormortem analyze logs/ --out /tmp/tm --json > analysis.json
      tormortem analyze sample_logs/demo --out reports/demo --report
    """
    found = gather(paths)
    ideal = parse_duration(ideal_step_time) if ideal_step_time else None
    before, after = parse_duration(window_before), parse_duration(window_after)
    for line in input_warnings(found):
        click.echo(line, err=True)
    with Writer(out, "analyze") as w:
        stage = w.path  # everything is built here; `out` changes only at the commit
        with render.progress(found.files, enabled=not as_json) as advance:
            ingested = ingest(found.files, stage, tz=tz_of(tz), year=year, source=source,
                              extra_rules=list(rules_files), progress=advance)
        result = analyze_db(stage / "tormortem.duckdb", run_map=run_map, ideal_step_s=ideal,
                            before_s=before, after_s=after)
        (stage / "analysis.json").write_text(json.dumps(result, indent=2) + "\n")
        rates_docs = write_rates(stage, result)
        models = attach_models(stage, result, rates_docs)
        from pipeline.model.predicted import report_model
        from pipeline.report.model_text import render_model

        model = report_model(result)
        if model is not None:
            (stage / "model.json").write_text(json.dumps(model, indent=2) + "\n")
        written: list[str] = []
        if with_report:
            from pipeline.report.html import PdfError, write_report

            rates = json.loads(rates_docs[0].read_text()) if len(rates_docs) == 1 else None
            try:
                html, pdf = write_report(stage, result, rates, model)
            except PdfError as e:
                raise click.ClickException(str(e)) from None
            written = [p.name for p in (html, pdf) if p is not None]
        rate_names = [p.name for p in rates_docs]
        w.commit(**manifest_fields("analyze", paths, out, found, ingested,
                                   tz=tz, year=year, source=source,
                                   rules=[str(r) for r in rules_files],
                                   run_map=str(run_map) if run_map else None,
                                   ideal_step_time=ideal_step_time,
                                   window_before=window_before, window_after=window_after))
    for d, f in ingested.duplicates:
        click.echo(f"note: {d} has the same content as {f}; read once", err=True)
    for q in ingested.quarantined:
        click.echo(f"warning: {q}: corrupt compressed file, quarantined (see "
                   "line_accounting.note)", err=True)

    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(render_analysis(result))
        for m in models:
            click.echo("\n" + render_model(m))
        for name in rate_names:
            path = out / name
            click.echo(f"\nFitted rates: {path} (tormortem fit {out} prints them; "
                       f"tormortem plan --rates {path} answers what-ifs)")
        for name in written:
            click.echo(f"Report: {out / name}")
