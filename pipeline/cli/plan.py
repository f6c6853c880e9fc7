"""``tormortem plan``: predicted TOR and what-ifs from a rates file (pipeline.model.plan)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from pipeline.model import plan as planlib
from pipeline.model.plan import PlanError
from pipeline.model.rates import RatesError, load
from pipeline.report.plan_text import render
from pipeline.units import DurationError, parse_duration

EPILOG = """\b
Examples:
  tormortem plan --rates fitted_rates.json
  tormortem plan --rates fitted_rates.json --gpus 16384 --work 30d
  tormortem plan --rates r.json --what-if nccl_timeout.hang=2m --what-if gpu_memory.rate=x0.5
  tormortem plan --rates r.json --drop network --tau 30m --delta 20s --json
  tormortem plan --rates r.json --sweep gpus=1024,4096,16384 --iterations 500000
  tormortem plan --rates r.json --sweep tau=5m,10m,30m,60m
\b
--what-if CATEGORY.FIELD=VALUE: FIELD is rate, stop_rate, slow_rate, hang, repair,
startup, slow_duration or rho; VALUE is a factor (x0.5) or a new value (2m, 1e-5, 0.8).
"""


def _dur(name: str, v: str | None) -> float | None:
    if v is None:
        return None
    try:
        return parse_duration(v)
    except DurationError as e:
        raise click.ClickException(f"{name} {v!r}: {e}") from None


@click.command("plan", epilog=EPILOG)
@click.option("--rates", "rates_file", required=True, type=click.Path(path_type=Path),
              help="Rates JSON (schema tormortem.rates/1), e.g. written by fitting, or an "
                   "`analyze --out` folder (its rates.json).")
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
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def plan_cmd(rates_file: Path, gpus: int | None, tau: str | None, delta: str | None,
             work: str | None, iterations: int | None, what_ifs: tuple[str, ...],
             drops: tuple[str, ...], sweep: str | None, as_json: bool) -> None:
    """Predict TOR from a rates file with the closed form (TOR_MODEL.md section 5): at another
    scale, checkpoint interval or save time, with what-ifs per failure category; the
    TOR-maximising checkpoint interval; the key factors; the expected wall time of a job."""
    rates_file = _rates_path(rates_file)
    try:
        rates = load(rates_file)
        res = planlib.plan(rates, gpus=gpus, tau_s=_dur("--tau", tau),
                           delta_s=_dur("--delta", delta), what_ifs=list(what_ifs),
                           drops=list(drops), work_s=_dur("--work", work),
                           iterations=iterations, sweep=sweep)
    except (RatesError, PlanError) as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        click.echo(json.dumps(planlib.to_json(res), indent=2, allow_nan=False))
    else:
        click.echo(render(res, str(rates_file)))


def _rates_path(given: Path) -> Path:
    """The rates file to read: DIR/rates.json of a complete output folder, or the file given
    (checked against its folder's manifest when it lies in a tormortem output)."""
    from pipeline.ingest.outputs import MANIFEST, OutputError, verify

    try:
        if given.is_dir():
            doc = verify(given)
            names: list[str] = sorted(n for n in doc["files"] if n.startswith("rates"))
            if len(names) != 1:
                raise click.ClickException(
                    f"{given} holds {len(names)} rates files ({', '.join(names) or 'none'}); "
                    "give one with --rates " + (f"{given / names[0]}" if names else
                                                f"after `tormortem fit {given}`"))
            return given / names[0]
        if given.exists() and (given.parent / MANIFEST).exists():
            verify(given.parent, need=[given.name])
    except OutputError as e:
        raise click.ClickException(str(e)) from None
    return given


plan = plan_cmd  # ``main.add_command(plan)`` registers it as "plan"
