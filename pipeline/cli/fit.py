"""``tormortem fit DIR``: fitted rates of an analysed directory (library: pipeline.model.fit)."""

from __future__ import annotations

import json
from pathlib import Path

import click

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
    path = directory / "analysis.json"
    if not path.exists():
        raise click.ClickException(f"{path} not found; run `tormortem analyze LOGS --out "
                                   f"{directory}` first")
    from pipeline.report.rates_text import render_rates

    analysis = json.loads(path.read_text())
    paths = write_rates(directory, analysis)
    for p in paths:
        doc = json.loads(p.read_text())
        click.echo(json.dumps(doc, indent=2) if as_json else render_rates(doc) + f"\n-> {p}")
