"""``tormortem ingest``: log files into Parquet + DuckDB (library: pipeline.ingest.run)."""

from __future__ import annotations

import time
from datetime import tzinfo
from pathlib import Path

import click

from pipeline.cli import output
from pipeline.cli.options import inputs, rules_opt, source_opt, tz_opt, year_opt


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory for events.parquet, attempts.parquet, tormortem.duckdb, ...")
@source_opt
@tz_opt
@year_opt
@rules_opt
@click.option("--max-files", default=40, show_default=True,
              help="Rows of the per-file table to print (all are in line_accounting; -v "
                   "prints all).")
@output.format_option("table", "json", "csv", aliases=("json", "csv"),
                      what="the line accounting per file")
@output.verbosity_options
def ingest_cmd(paths: tuple[str, ...], out: Path, source: str | None, tz: tzinfo,
               year: int | None, rules_files: tuple[Path, ...], max_files: int,
               fmt: str | None) -> None:
    """Parse log files, directories (recursive), globs or .gz files into Parquet + DuckDB.

    Every line read is counted as an event, recognised-irrelevant, or unparsed; the table
    printed at the end shows that these add up, per file and per source. With -q the table
    is left out (it summarises the files written); --format json/csv always prints.

    \b
    Example:
      tormortem ingest /var/log/slurm/ 'nodes/*/kern.log*' jobs/ --out /tmp/tm --tz UTC
      tormortem ingest logs/ --out /tmp/tm --format csv > accounting.csv
    """
    from pipeline.cli.progress import ingest_progress
    from pipeline.ingest.run import ingest
    from pipeline.report import terminal as render

    fmt = output.chosen_format(fmt)
    skipped: list[str] = []
    files = inputs(paths, skipped)
    t0 = time.perf_counter()
    with ingest_progress(files) as advance:
        result = ingest(files, out, tz=tz, year=year, source=source,
                        extra_rules=list(rules_files), progress=advance)
    seconds = time.perf_counter() - t0
    if fmt != "table":
        head, rows = render.ingest_rows(result)
        output.emit_rows(fmt, head, rows, lambda: "")
        for note in render.ingest_notes(result, skipped):
            output.status(note)
    elif not output.settings().quiet:
        limit = len(result.files) if output.settings().verbose else max_files
        click.echo(render.ingest_report(result, max_files=limit, skipped=skipped))
    output.status(render.ingest_status(result, seconds))
