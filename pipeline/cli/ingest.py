"""``tormortem ingest``: log files into Parquet + DuckDB (library: pipeline.ingest.run)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from pipeline.cli.options import (
    gather,
    input_warnings,
    manifest_fields,
    rules_opt,
    source_opt,
    tz_of,
    tz_opt,
    year_opt,
)
from pipeline.ingest.outputs import Writer
from pipeline.ingest.run import ingest
from pipeline.report import terminal as render


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory for events.parquet, attempts.parquet, tormortem.duckdb, ...")
@source_opt
@tz_opt
@year_opt
@rules_opt
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@click.option("--max-files", default=40, show_default=True,
              help="Rows of the per-file table to print (all are in line_accounting).")
def ingest_cmd(paths: tuple[str, ...], out: Path, source: str | None, tz: str,
               year: int | None, rules_files: tuple[Path, ...], quiet: bool,
               max_files: int) -> None:
    """Parse log files, directories (recursive), globs, - (stdin) or compressed files (.gz,
    .bz2, .xz, .zst) into Parquet + DuckDB.

    Every line read is counted as an event, recognised-irrelevant, or unparsed; the table
    printed at the end shows that these add up, per file and per source. The folder is
    replaced only when the run succeeds (manifest.json describes it); a second writer of the
    same folder is refused while one runs.

    \b
    Example:
      tormortem ingest /var/log/slurm/ 'nodes/*/kern.log*' jobs/ --out /tmp/tm --tz UTC
    """
    found = gather(paths)
    t0 = time.perf_counter()
    with Writer(out, "ingest") as w:
        with render.progress(found.files, enabled=not quiet) as advance:
            result = ingest(found.files, w.path, tz=tz_of(tz), year=year, source=source,
                            extra_rules=list(rules_files), progress=advance)
        w.commit(**manifest_fields("ingest", paths, out, found, result, tz=tz,
                                   year=year, source=source,
                                   rules=[str(r) for r in rules_files]))
    result.out = out
    for line in input_warnings(found):
        click.echo(line, err=True)
    if not quiet:
        click.echo(render.ingest_report(result, max_files=max_files,
                                        seconds=time.perf_counter() - t0,
                                        skipped=found.skipped))
