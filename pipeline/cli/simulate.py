"""``tormortem simulate``: a thin click shell over pipeline.simulate (registered in cli.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path

import click

from pipeline.cli import output
from pipeline.simulate import presets

EPILOG = """\b
Examples:
  tormortem simulate --preset demo --seed 7 --out sample_logs/demo
  tormortem simulate --preset llama3-54d --seed 1 --out /tmp/llama3 --log-interval 10
  tormortem simulate --preset demo --seed 7 --flavour k8s --out /tmp/demo-k8s
  tormortem simulate --rates fitted_rates.json --seed 3 --out /tmp/whatif
  tormortem simulate --preset llama3-54d --no-logs --replicas 10000 --json
"""


@click.command("simulate", epilog=EPILOG)
@click.option("--preset", type=click.Choice(sorted(presets.PRESETS)),
              help="Built-in parameter set.")
@click.option("--rates", "rates_file",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Rates JSON (schema tormortem.rates/1), e.g. written by fitting.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Random seed: the same seed gives the same bytes.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the logs, truth.json and params.json.")
@click.option("--force", is_flag=True, help="Replace a campaign already in --out.")
@click.option("--flavour", type=click.Choice(["slurm", "k8s"]), default="slurm",
              show_default=True,
              help="Which scheduler's logs to write: Slurm (slurmctld, sacct, slurm-N.out) or "
                   "Kubernetes (events, pods, PyTorchJob, kubectl logs).")
@click.option("--noise", type=click.Choice(["none", "realistic"]), default="none",
              show_default=True,
              help="Also write the background volume of a real campaign: every node's healthy "
                   "syslog and every rank's NCCL INFO start-up (no signal; demo: 18 MB in all, "
                   "llama3-54d: about 35 GB).")
@click.option("--log-interval", type=int, default=None,
              help="Megatron --log-interval: iterations per progress line "
                   "(default: 1 for demo, 10 for llama3-54d and rates files).")
@click.option("--iterations", type=int, default=None,
              help="Target iteration count (overrides the rates file).")
@click.option("--no-logs", is_flag=True,
              help="Monte Carlo only: print the TOR distribution, write nothing.")
@click.option("--replicas", type=int, default=1000, show_default=True,
              help="Campaigns in the Monte Carlo (with --no-logs).")
@output.format_option("table", "json", "csv", aliases=("json", "csv"), what="the summary")
@output.verbosity_options
def simulate(preset: str | None, rates_file: Path | None, seed: int, out: Path | None,
             force: bool, flavour: str, noise: str, log_interval: int | None,
             iterations: int | None, no_logs: bool, replicas: int, fmt: str | None) -> None:
    """Simulate a training campaign: write its logs in the real formats (Slurm, kernel,
    Megatron/PyTorch job output) plus its ground truth, or, with --no-logs, estimate the TOR
    distribution of many campaigns by Monte Carlo."""
    from pipeline.model.rates import Rates, RatesError, load

    fmt = output.chosen_format(fmt)
    if (preset is None) == (rates_file is None):
        raise click.UsageError("give exactly one of --preset NAME or --rates FILE")
    try:
        rates: Rates = presets.get(preset) if preset else load(rates_file)  # type: ignore[arg-type]
    except RatesError as e:
        raise click.ClickException(str(e)) from None
    if iterations is not None and iterations < 1:
        raise click.UsageError("--iterations must be >= 1")
    if not (iterations or rates.target_iterations):
        raise click.ClickException("the rates file has no target_iterations; pass --iterations N")
    if no_logs:
        if replicas < 1:
            raise click.UsageError("--replicas must be >= 1")
        from pipeline.simulate import montecarlo

        t0 = time.perf_counter()
        res = montecarlo.run(rates, replicas, seed, iterations)
        summ = res.summary()
        summ["seconds"] = round(time.perf_counter() - t0, 3)
        if fmt != "table":
            _emit(fmt, summ)
        else:
            err = summ["tor_stderr"]
            spread = (f"+- {err:.5f} (standard error, {replicas} replicas)" if err is not None
                      else "(1 replica: no standard error; ask for --replicas 2 or more)")
            click.echo(f"TOR {summ['tor_mean']:.5f} {spread}; 90% of campaigns in "
                       f"[{summ['tor_p05']:.4f}, "
                       f"{summ['tor_p95']:.4f}]; mean duration {summ['t_obs_mean_days']:.2f} "
                       f"days, {summ['interruptions_mean']:.1f} interruptions")
        return
    if out is None:
        raise click.UsageError("--out DIR is required (or use --no-logs)")
    from pipeline.simulate.params import Settings
    from pipeline.simulate.run import SimulateError, with_log_interval
    from pipeline.simulate.run import simulate as run_simulate

    k = log_interval or presets.LOG_INTERVAL.get(preset or "", 10)
    try:
        settings = with_log_interval(Settings(), k)
        t0 = time.perf_counter()
        doc = run_simulate(rates, seed, out, settings,
                           meta={"preset": preset, "rates_file": str(rates_file) if rates_file
                                 else None, "flavour": flavour},
                           target_iterations=iterations, force=force, flavour=flavour,
                           noise=noise)
    except (SimulateError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    run = doc["runs"][0]
    if fmt != "table":
        _emit(fmt, {"out": str(out), "tor": run["tor"], "t_obs_s": run["t_obs_s"],
                    "attempts": len(run["attempts"]),
                    "interruptions": len(run["interruptions"])})
    else:
        click.echo(f"{out}: {len(run['attempts'])} attempts, {len(run['interruptions'])} "
                   f"interruptions, {run['t_obs_s'] / 86400:.2f} days, true TOR "
                   f"{run['tor']:.4f}")
    output.status(f"wrote {out} in {time.perf_counter() - t0:.1f} s")


def _emit(fmt: str, summ: Mapping[str, object]) -> None:
    if fmt == "json":
        click.echo(json.dumps(summ, indent=2))
    else:
        click.echo(output.csv_text(list(summ), [list(summ.values())]))
