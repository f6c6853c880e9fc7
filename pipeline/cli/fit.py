"""``tormortem fit DIR``: fitted rates of an analysed directory (library: pipeline.model.fit)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from pipeline.ingest.outputs import OutputError, Writer, verify
from pipeline.model.outputs import write_rates


@click.command("fit")
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the rates JSON instead of a table.")
def fit_cmd(directory: Path, as_json: bool) -> None:
    """Fit failure rates, recovery times and checkpoint costs of an analysed directory.

    Reads DIRECTORY/analysis.json and tormortem.duckdb (written by `analyze`), writes the
    versioned rates file (schema tormortem.rates/1) that `plan` and `simulate --rates` read.

    \b
    Example:
      tormortem analyze logs/ --out /tmp/tm && tormortem fit /tmp/tm
    """
    from pipeline.report.rates_text import render_rates

    try:
        with Writer(directory, "analyze", carry=True) as w:  # rates.json is rewritten in place
            verify(directory, need=["analysis.json", "tormortem.duckdb"], stage="analyze")
            analysis = json.loads((directory / "analysis.json").read_text())
            paths = write_rates(directory, analysis, dest=w.path)
            docs = [(directory / p.name, json.loads(p.read_text())) for p in paths]
            w.commit()
    except OutputError as e:  # also when the command is used on its own (tests)
        raise click.ClickException(str(e)) from None
    for p, doc in docs:
        click.echo(json.dumps(doc, indent=2) if as_json else render_rates(doc) + f"\n-> {p}")
