"""``tormortem ingest``: log files into Parquet + DuckDB (library: pipeline.ingest.run)."""

from __future__ import annotations

import time
from pathlib import Path

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
    tz_of,
    tz_opt,
    year_opt,
)


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory for events.parquet, attempts.parquet, tormortem.duckdb, ...")
@source_opt
@tz_opt
@year_opt
@rules_opt
@jobs_opt
@scheduler_opt
@click.option("--max-files", default=40, show_default=True,
              help="Rows of the per-file table to print (all are in line_accounting; -v "
                   "prints all).")
@output.format_option("table", "json", "csv", aliases=("json", "csv"),
                      what="the line accounting per file")
@output.verbosity_options
def ingest_cmd(paths: tuple[str, ...], out: Path, source: str | None, tz: str,
               year: int | None, rules_files: tuple[Path, ...], jobs: int | None,
               scheduler: str | None, max_files: int, fmt: str | None) -> None:
    """Parse log files, directories (recursive), globs, - (stdin) or compressed files (.gz,
    .bz2, .xz, .zst) into Parquet + DuckDB.

    Every line read is counted as an event, recognised-irrelevant, or unparsed; the table
    printed at the end shows that these add up, per file and per source. With -q the table
    is left out (it summarises the files written); --format json/csv always prints. The
    folder is replaced only when the run succeeds (manifest.json describes it); a second
    writer of the same folder is refused while one runs.

    \b
    Example:
      tormortem ingest /var/log/slurm/ 'nodes/*/kern.log*' jobs/ --out /tmp/tm --tz UTC
      tormortem ingest logs/ --out /tmp/tm --format csv > accounting.csv
    """
    from pipeline.ingest.procs import start_early

    fmt = output.chosen_format(fmt)
    found = gather(paths)
    start_early(jobs, scheduler, found.files)  # the workers' imports beside the ones below

    from pipeline.cli.progress import ingest_progress
    from pipeline.ingest.outputs import Writer
    from pipeline.ingest.run import ingest
    from pipeline.report import terminal as render

    t0 = time.perf_counter()
    with Writer(out, "ingest") as w:
        with ingest_progress(found.files) as advance:
            result = ingest(found.files, w.path, tz=tz_of(tz), year=year, source=source,
                            extra_rules=list(rules_files), progress=advance, jobs=jobs,
                            scheduler=scheduler, folder=out)
        w.commit(**manifest_fields("ingest", paths, out, found, result, tz=tz,
                                   year=year, source=source,
                                   rules=[str(r) for r in rules_files]))
    result.out = out
    seconds = time.perf_counter() - t0
    output.input_notes(input_warnings(found))
    if fmt != "table":
        head, rows = render.ingest_rows(result)
        output.emit_rows(fmt, head, rows, lambda: "")
        for note in render.ingest_notes(result, found.skipped):
            output.status(note)
    elif not output.settings().quiet:
        limit = len(result.files) if output.settings().verbose else max_files
        click.echo(render.ingest_report(result, max_files=limit, skipped=found.skipped))
    output.status(render.ingest_status(result, seconds))
