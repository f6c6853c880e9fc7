"""``tormortem fit DIR``: fitted rates of an analysed directory (library: pipeline.model.fit)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from pipeline.cli import output


@click.command("fit")
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
@output.format_option("table", "json", "csv", aliases=("json", "csv"),
                      what="the rates (csv: one row per category)")
@output.verbosity_options
def fit_cmd(directory: Path, fmt: str | None) -> None:
    """Fit failure rates, recovery times and checkpoint costs of an analysed directory.

    Reads DIRECTORY/analysis.json and tormortem.duckdb (written by `analyze`), writes the
    versioned rates file (schema tormortem.rates/1) that `plan` and `simulate --rates` read.

    \b
    Example:
      tormortem analyze logs/ --out /tmp/tm && tormortem fit /tmp/tm
      tormortem fit /tmp/tm --format csv
    """
    from pipeline.ingest.outputs import OutputError, Writer, verify
    from pipeline.model.outputs import write_rates
    from pipeline.report.rates_text import RATE_COLUMNS, rates_rows, render_rates

    fmt = output.chosen_format(fmt)
    path = directory / "analysis.json"
    try:
        with Writer(directory, "analyze", carry=True) as w:  # rates.json is rewritten in place
            verify(directory, need=["analysis.json", "tormortem.duckdb"], stage="analyze")
            analysis = json.loads(path.read_text())
            written = write_rates(directory, analysis, dest=w.path)
            if not written:
                why = [f"run {r['run']}: {r['rates_undefined']}" for r in analysis["runs"]
                       if r.get("rates_undefined")]
                raise click.ClickException(
                    f"{path}: " + ("; ".join(why) if why else
                                   "no run has progress lines, so there is no healthy step "
                                   "time to express rates against; add the job output "
                                   "(training progress) to the analysis"))
            docs = [json.loads(p.read_text()) for p in written]
            paths = [directory / p.name for p in written]
            w.commit()
    except OutputError as e:  # also when the command is used on its own (tests)
        raise click.ClickException(str(e)) from None
    if fmt == "json":
        click.echo(output.dumps(docs[0] if len(docs) == 1 else docs))
    elif fmt == "csv":
        click.echo(output.csv_text(["run", *RATE_COLUMNS],
                                   [[d["provenance"].get("run"), *r] for d in docs
                                    for r in rates_rows(d)]))
    else:
        click.echo("\n\n".join(render_rates(d) for d in docs))
    for p in paths:
        output.status(f"-> {p}")
