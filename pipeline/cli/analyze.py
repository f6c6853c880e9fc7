"""``tormortem analyze``: ingest, realized TOR, decomposition, root causes, fit and model
(library: pipeline.analyze.run, pipeline.model.outputs)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import Any

import click

from pipeline.cli import output
from pipeline.cli.options import (
    gather,
    input_warnings,
    jobs_opt,
    manifest_fields,
    rules_opt,
    scheduler_opt,
    source_opt,
    text_file,
    tz_of,
    tz_opt,
    year_opt,
)
from pipeline.units import parse_duration


@click.command("analyze")
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the tables (Parquet + tormortem.duckdb) and reports.")
@output.format_option("table", "json", "csv", aliases=("json", "csv"),
                      what="the analysis (csv: the decomposition per run)")
@click.option("--run-map", type=click.Path(dir_okay=False, path_type=Path), default=None,
              callback=text_file,
              help="CSV job_id,run: which run each job belongs to (default: by job name).")
@click.option("--ideal-step-time", default=None, metavar="DURATION",
              help="Healthy step time t* (e.g. 2.35s) instead of the median measured one.")
@click.option("--window-before", default="15m", show_default=True, metavar="DURATION",
              help="Evidence window before an interrupted attempt's last progress.")
@click.option("--window-after", default="5m", show_default=True, metavar="DURATION",
              help="Evidence window after an interrupted attempt's end.")
@click.option("--job-output", "job_output", multiple=True, metavar="PATTERN",
              callback=lambda _c, _p, v: _check_patterns(v),
              help="How job output files are named, in Slurm's pattern language (%x name, %j "
                   "job id, %A/%a array job/task, %N host, %u user), e.g. 'logs/%x-%j.out'; "
                   "overrides the evidence-based linking. May be repeated.")
@click.option("--clock-skew", type=click.Choice(["auto", "off"]), default="auto",
              show_default=True,
              help="Measure each host's clock offset against the scheduler's and correct "
                   "node evidence by it (off: take node stamps as they are).")
@click.option("--max-skew", default="10m", show_default=True, metavar="DURATION",
              help="Largest clock offset the measurement will believe and correct.")
@click.option("--skew-tolerance", default="0s", show_default=True, metavar="DURATION",
              help="Extra allowance on node-evidence windows for clock skew beyond what is "
                   "measured (the 30 s allowance after an attempt's end grows by it).")
@click.option("--strict", is_flag=True,
              help="Exit with status 1 when the analysis has data-quality warnings.")
@click.option("--report", "with_report", is_flag=True,
              help="Also write report.html and report.pdf into --out (see `tormortem report`).")
@source_opt
@tz_opt
@year_opt
@rules_opt
@jobs_opt
@scheduler_opt
@output.verbosity_options
def analyze_cmd(paths: tuple[str, ...], out: Path, fmt: str | None, run_map: Path | None,
                ideal_step_time: str | None, window_before: str, window_after: str,
                clock_skew: str, max_skew: str, skew_tolerance: str,
                job_output: tuple[str, ...], strict: bool, with_report: bool,
                source: str | None, tz: str, year: int | None,
                rules_files: tuple[Path, ...], jobs: int | None,
                scheduler: str | None) -> None:
    """Realized TOR: ingest the logs, then split each run's wall time exactly.

    Links attempts into runs, rebuilds each attempt's progress, splits T_obs into T_opt,
    slow, lost work, checkpoint saves, startup, hang, repair and tail (they sum to T_obs),
    and finds each interruption's root cause from the evidence around it. Values inferred
    rather than read are marked ~ and explained below the tables (``approx`` in JSON).

    \b
    Example:
      tormortem analyze sample_logs/demo --out reports/demo
      tormortem analyze logs/ --out /tmp/tm --json > analysis.json
      tormortem analyze sample_logs/demo --out reports/demo --report
    """
    fmt = output.chosen_format(fmt)
    ideal = parse_duration(ideal_step_time) if ideal_step_time else None
    if ideal is not None and not ideal > 0:
        raise click.BadParameter(f"{ideal_step_time!r} is not a step time: give a duration "
                                 "above 0 (e.g. 2.35s), or leave the option out to measure it",
                                 param_hint="--ideal-step-time")
    before, after = parse_duration(window_before), parse_duration(window_after)
    if run_map is not None:  # a usage error now, not after the ingest
        from pipeline.analyze.runs import RunMapError, load_run_map

        try:
            load_run_map(run_map)
        except RunMapError as e:
            raise click.BadParameter(str(e), param_hint="--run-map") from None
    found = gather(paths)
    from pipeline.ingest.procs import start_early

    start_early(jobs, scheduler, found.files)  # the workers' imports beside the client's
    output.input_notes(input_warnings(found))
    link = {"job_output": list(job_output), "clock_skew": clock_skew == "auto",
            "max_skew_s": parse_duration(max_skew),
            "skew_tolerance_s": parse_duration(skew_tolerance),
            "unreadable": list(found.problems)}
    from pipeline.ingest.outputs import Writer

    with Writer(out, "analyze") as w:
        stage = w.path  # everything is built here; `out` changes only at the commit
        ingested, result, rates_docs = _run(found.files, stage, run_map, ideal, before, after,
                                            _Ingest(source, tz_of(tz), year, rules_files,
                                                    jobs, scheduler), link, folder=out)
        written = _report(stage, result, rates_docs) if with_report else []
        w.commit(**manifest_fields("analyze", paths, out, found, ingested,
                                   tz=tz, year=year, source=source,
                                   rules=[str(r) for r in rules_files],
                                   run_map=str(run_map) if run_map else None,
                                   ideal_step_time=ideal_step_time,
                                   window_before=window_before, window_after=window_after,
                                   job_output=list(job_output), clock_skew=clock_skew,
                                   max_skew=max_skew, skew_tolerance=skew_tolerance))
    for d, f in ingested.duplicates:
        output.status(f"note: {d} has the same content as {f}; read once")
    from pipeline.report.terminal import year_note

    if (y := year_note(ingested)) is not None:
        output.status(y)
    unused_patterns = _pattern_notes(result, out)
    for q in ingested.quarantined:
        click.echo(f"warning: {q}: corrupt compressed file, read only up to the damage, if at "
                   "all (see line_accounting.note)", err=True)
    if fmt == "json":
        click.echo(output.dumps(result))
    elif fmt == "csv":
        from pipeline.report.analysis_text import decomposition_rows

        head, rows = decomposition_rows(result)
        click.echo(output.csv_text(head, rows))
    else:
        from pipeline.report.analysis_text import render as render_analysis
        from pipeline.report.model_text import render_model

        click.echo(render_analysis(result, top=None if output.settings().verbose else 10))
        for r in result["runs"]:
            if r.get("model"):
                click.echo("\n" + render_model(r["model"], r.get("approx")))
    for path in rates_docs:
        output.status(f"Fitted rates: {out / path.name} (tormortem fit {out} prints them; "
                      f"tormortem plan --rates {out} answers what-ifs)")
    for r in result["runs"]:
        if r.get("rates_undefined"):
            output.status(f"No rates for run {r['run']}: {r['rates_undefined']}")
    for path in written:
        output.status(f"Report: {out / path.name}")
    n_warn = len(result.get("warnings") or [])
    if strict and (n_warn or unused_patterns):
        raise click.ClickException(
            f"--strict: {n_warn} data-quality warning(s) (fidelity {result['fidelity']}); "
            f"they are in warnings[] of {out / 'analysis.json'}" if n_warn else
            f"--strict: {unused_patterns} --job-output pattern(s) matched no job output file "
            "(the warning above)")


def _check_patterns(patterns: tuple[str, ...]) -> tuple[str, ...]:
    """--job-output: each a file-name pattern (``slurmpat.pattern_problem``), else exit 2."""
    from pipeline.analyze.slurmpat import pattern_problem

    for p in patterns:
        problem = pattern_problem(p)
        if problem:
            raise click.BadParameter(problem)
    return patterns


def _pattern_notes(result: dict[str, Any], out: Path) -> int:
    """A --job-output pattern that matched no job-output file changed nothing: say so (how
    many were said: --strict counts them with the data-quality warnings)."""
    said = 0
    for m in result.get("job_output") or []:
        said += m["files"] is None or m["files"] == 0
        if m["files"] is None:
            output.warn(f"--job-output {m['pattern']!r} was not used: the logs hold no "
                        "scheduler records (Slurm) whose jobs it could name")
        elif m["files"] == 0:
            output.warn(f"--job-output {m['pattern']!r} matched 0 job output files, so the "
                        "output was linked from evidence; compare it with their paths "
                        f"(tormortem sql {out} \"SELECT file, method FROM output_links\")")
    return said


@dataclass(frozen=True)
class _Ingest:
    source: str | None
    tz: tzinfo
    year: int | None
    rules_files: tuple[Path, ...]
    jobs: int | None
    scheduler: str | None


def _run(files: list[Any], out: Path, run_map: Path | None, ideal: float | None,
         before: float, after: float, how: _Ingest, link: dict[str, Any],
         folder: Path | None = None) -> tuple[Any, dict[str, Any], list[Path]]:
    from parsers.inputs import input_size
    from pipeline.analyze.run import analyze_db
    from pipeline.cli.progress import ingest_progress
    from pipeline.ingest.run import ingest
    from pipeline.model.outputs import attach_models, write_rates
    from pipeline.report.terminal import size

    total = sum(input_size(f) for f in files if f.stream is None)
    with output.Phase("ingest", f"{len(files):,} files, {size(total)}"), \
            ingest_progress(files) as advance:
        ingested = ingest(files, out, tz=how.tz, year=how.year, source=how.source,
                          extra_rules=list(how.rules_files), progress=advance,
                          jobs=how.jobs, scheduler=how.scheduler, folder=folder)
    with output.Phase("analyze", "attempts, runs, decomposition, root causes, fail-slow"):
        result = analyze_db(out / "tormortem.duckdb", run_map=run_map, ideal_step_s=ideal,
                            before_s=before, after_s=after, **link)
        (out / "analysis.json").write_text(output.dumps(result) + "\n")
    with output.Phase("fit", "rates, model"):
        rates_docs = write_rates(out, result)
        attach_models(out, result, rates_docs)
        from pipeline.model.predicted import report_model

        model = report_model(result)
        if model is not None:
            (out / "model.json").write_text(json.dumps(model, indent=2) + "\n")
    return ingested, result, rates_docs


def _report(out: Path, result: dict[str, Any], rates_docs: list[Path]) -> list[Path]:
    from pipeline.cli.report import report_phase
    from pipeline.report.html import PdfError, write_report

    model = json.loads((out / "model.json").read_text()) if (out / "model.json").exists() \
        else None
    rates = json.loads(rates_docs[0].read_text()) if len(rates_docs) == 1 else None
    try:
        html, pdf = write_report(out, result, rates, model, on_phase=report_phase)
    except PdfError as e:
        raise click.ClickException(str(e)) from None
    return [p for p in (html, pdf) if p is not None]

