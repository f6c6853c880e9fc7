"""``tormortem plan``: predicted TOR and what-ifs from a rates file (pipeline.model.plan)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from pipeline.cli import output

EPILOG = """\b
Examples:
  tormortem plan --rates reports/demo          # DIR: its rates.json
  tormortem plan --rates fitted_rates.json --gpus 1024 --work 30d
  tormortem plan --rates r.json --what-if nccl_timeout.hang=2m --what-if gpu_memory.rate=x0.5
  tormortem plan --rates r.json --drop network --tau 30m --delta 20s --json
  tormortem plan --rates r.json --sweep gpus=128,512,1024,2048 --iterations 500000
  tormortem plan --rates r.json --sweep tau=5m,10m,30m,60m
\b
--what-if CATEGORY.FIELD=VALUE: FIELD is rate, stop_rate, slow_rate, hang, repair,
startup, slow_duration or rho; VALUE is a factor (x0.5) or a new value (2m, 1e-5, 0.8).
No optimum is printed where it would mean nothing (failures faster than a restart, TOR
about 0); the breaking point line says at which scale that begins. The model: README,
"fit, the model and plan".
"""


def _dur(name: str, v: str | None) -> float | None:
    from pipeline.units import DurationError, parse_duration

    if v is None:
        return None
    try:
        return parse_duration(v)
    except DurationError as e:
        raise click.BadParameter(str(e), param_hint=f"'{name}'") from None


def rates_path(given: Path) -> Path:
    """A rates file, or the rates.json of an analysed directory; an analysis file is named
    as such (its rates are beside it). A directory must be a complete output folder, and a
    file inside one must be the one its manifest lists (``pipeline.ingest.outputs.verify``)."""
    from pipeline.ingest.outputs import MANIFEST, OutputError, verify

    try:
        if given.is_dir():
            verify(given)
        elif (given.parent / MANIFEST).exists():
            verify(given.parent, need=[given.name])
    except OutputError as e:
        raise click.ClickException(str(e)) from None
    if given.is_dir():
        p = given / "rates.json"
        if p.is_file():
            return p
        several = sorted(given.glob("rates-*.json"))
        # fit reads an analysis: after ingest alone, only analyze can make the rates (L3)
        hint = ("; it has one per run: " + ", ".join(str(x) for x in several)) if several \
            else f"; run `tormortem analyze LOGS --out {given}`" + (
                f" (or `tormortem fit {given}`)" if (given / "analysis.json").is_file() else "")
        raise click.ClickException(f"no rates.json in {given}{hint}")
    from parsers.textfile import read_text

    try:
        schema = json.loads(read_text(given)).get("schema", "")
    except (OSError, ValueError, AttributeError):  # NotText is a ValueError
        return given  # the loader says what is wrong with it
    if str(schema).startswith("tormortem.analysis/"):
        raise click.ClickException(
            f"{given} is an analysis (schema {schema}), not a rates file; its fitted rates are "
            f"in {given.parent / 'rates.json'} (`tormortem plan --rates {given.parent}`)")
    return given


@click.command("plan", epilog=EPILOG)
@click.option("--rates", "rates_file", required=True,
              type=click.Path(exists=True, path_type=Path),
              help="Rates JSON (schema tormortem.rates/1), or an analysed directory (its "
                   "rates.json).")
@click.option("--gpus", type=int, help="Predict at this many GPUs (multiple of GPUs/node).")
@click.option("--tau", help="Checkpoint interval in compute time, e.g. 30m.")
@click.option("--delta", help="Blocking checkpoint save time, e.g. 20s.")
@click.option("--work", help="Ideal compute to finish, e.g. 30d: prints the expected wall time.")
@click.option("--iterations", type=int, help="Iterations to finish (x the file's t*).")
@click.option("--what-if", "what_ifs", multiple=True, metavar="CAT.FIELD=VALUE",
              help="Change one category, e.g. network.repair=x0.5 (repeatable).")
@click.option("--drop", "drops", multiple=True, metavar="CATEGORY",
              help="Remove a category entirely (repeatable).")
@click.option("--sweep", metavar="PARAM=V1,V2,...",
              help="Table over gpus=..., tau=... or delta=... (with the other changes).")
@output.format_option("table", "json", "csv", aliases=("json", "csv"),
                      what="the prediction (csv: the sweep rows, or the scenario)")
@output.verbosity_options
def plan_cmd(rates_file: Path, gpus: int | None, tau: str | None, delta: str | None,
             work: str | None, iterations: int | None, what_ifs: tuple[str, ...],
             drops: tuple[str, ...], sweep: str | None, fmt: str | None) -> None:
    """Predict TOR from a rates file: at another scale, checkpoint interval or save time,
    with what-ifs per failure category; the TOR-maximising checkpoint interval; the key
    factors; the expected wall time of a job."""
    from pipeline.model import plan as planlib
    from pipeline.model.rates import RatesError, load

    fmt = output.chosen_format(fmt)
    path = rates_path(rates_file)
    try:
        rates = load(path)
    except RatesError as e:
        raise click.ClickException(str(e)) from None
    try:
        res = planlib.plan(rates, gpus=gpus, tau_s=_dur("--tau", tau),
                           delta_s=_dur("--delta", delta), what_ifs=list(what_ifs),
                           drops=list(drops), work_s=_dur("--work", work),
                           iterations=iterations, sweep=sweep)
    except planlib.PlanError as e:  # the request itself: a usage error
        raise click.UsageError(str(e)) from None
    if fmt == "json":
        click.echo(json.dumps(planlib.to_json(res), indent=2, allow_nan=False))
    elif fmt == "csv":
        click.echo(_csv(planlib.to_json(res)))
    else:
        from pipeline.report.plan_text import render

        click.echo(render(res, str(path)))
    for r in res.refused:
        output.verbose(f"no recommendation: {r}")


def _csv(doc: dict[str, Any]) -> str:
    if "sweep" in doc:
        rows = doc["sweep"]["rows"]
        head = ["parameter", *rows[0]] if rows else ["parameter"]
        return output.csv_text(head, [[doc["sweep"]["parameter"], *r.values()] for r in rows])
    s = doc["scenario"]
    keys = ["gpus", "nodes", "tor", "tor_low", "tor_high", "tor_first_order", "tor_daly",
            "failures_per_day", "mtbf_s", "mean_restart_s", "tau_s", "delta_s", "slow_factor"]
    opt = next((c["tau_s"] for c in s["checkpoint_interval"] if c["name"] == "optimal (exact)"),
               None)
    return output.csv_text([*keys, "tau_opt_s", "no_recommendation"],
                           [[*(s.get(k) for k in keys), opt,
                             "; ".join(doc["no_recommendation"])]])


plan = plan_cmd  # the name it had before the commands were all loaded lazily
