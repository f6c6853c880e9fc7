"""The ``tormortem`` command line: a thin shell over the library.

Each command parses its options, calls one library function, and prints. Library errors that
carry a user-facing message become ``Error: ...`` with exit code 1 in one place
(``_Group.invoke``); usage errors keep click's exit code 2.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from parsers.hostlist import HostlistError
from parsers.reader import InputError, InputFile, expand_inputs
from parsers.registry import ALL as ALL_PARSERS
from parsers.registry import UnknownSourceError
from parsers.timeutil import TimeError, get_tz
from pipeline import render
from pipeline.analyze import AnalysisError, analyze_db
from pipeline.explain import explain_files
from pipeline.ingest import ingest
from pipeline.report_text import render as render_analysis
from pipeline.ruletable import RulesError
from pipeline.units import DurationError, parse_duration

USER_ERRORS = (InputError, TimeError, RulesError, UnknownSourceError, HostlistError,
               AnalysisError, DurationError)


#: commands whose modules import scipy or matplotlib: loaded only when used, so that
#: `tormortem ingest` does not pay for them at start-up
LAZY = {"plan": "pipeline.cli_plan:plan", "simulate": "pipeline.cli_simulate:simulate",
        "report": "pipeline.cli_report:report"}
#: the first lines of the lazy commands' help, so ``tormortem --help`` does not import scipy
#: and the report stack to list them (a test keeps these equal to the commands' own)
LAZY_HELP = {
    "plan": (
        "Predict TOR from a rates file with the closed form (TOR_MODEL.md "
        "section 5): at another scale, checkpoint interval or save time, with "
        "what-ifs per failure category; the TOR-maximising checkpoint interval; "
        "the key factors; the expected wall time of a job."
    ),
    "simulate": (
        "Simulate a training campaign: write its logs in the real formats "
        "(Slurm, kernel, Megatron/PyTorch job output) plus its ground truth, "
        "or, with --no-logs, estimate the TOR distribution of many campaigns by "
        "Monte Carlo."
    ),
    "report": (
        "Write the post-mortem report (report.html and report.pdf) for an "
        "analyzed run."
    ),
}


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *(n for n in LAZY if _loadable(n))})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAZY and name not in self.commands and _loadable(name):
            import importlib

            mod, attr = LAZY[name].split(":")
            cmd = getattr(importlib.import_module(mod), attr)
            assert isinstance(cmd, click.Command)
            self.add_command(cmd, name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click's, but a lazy command not loaded yet is listed from LAZY_HELP."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            if name in LAZY and name not in self.commands:
                stub = click.Command(name, help=LAZY_HELP[name])
                rows.append((name, stub.get_short_help_str(limit)))
                continue
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except USER_ERRORS as e:
            raise click.ClickException(str(e)) from None
        except OSError as e:
            where = f" {e.filename}" if e.filename else ""
            raise click.ClickException(
                f"cannot access{where}: {e.strerror or e}; check the path and permissions"
            ) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as e:  # a bug: one line, unless TORMORTEM_DEBUG asks for the trace
            if os.environ.get("TORMORTEM_DEBUG"):
                raise
            raise click.ClickException(
                f"internal error ({type(e).__name__}: {e}); please report it with the command "
                "you ran (set TORMORTEM_DEBUG=1 for the traceback)") from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tormortem")
def main() -> None:
    """tormortem: where the time of a large GPU training run went.

    Reads Slurm, Kubernetes, kernel (NVIDIA Xid, PCIe, InfiniBand), NCCL / PyTorch and
    training-progress logs, and turns them into typed tables.

    \b
    Example:
      tormortem ingest sample_logs/ --out /tmp/tm
      duckdb /tmp/tm/tormortem.duckdb "select kind, count(*) from events group by 1"
    """


_source_opt = click.option(
    "--source", metavar="NAME", default=None,
    help="Parse every input as this source instead of detecting it per file "
         "(see `tormortem sources`).")
_tz_opt = click.option(
    "--tz", default="UTC", show_default=True, metavar="ZONE",
    help="Zone of timestamps printed without one (Slurm, syslog, dmesg -T): an IANA name "
         "such as Europe/Berlin, or an offset such as +02:00.")
_year_opt = click.option(
    "--year", type=int, default=None,
    help="Year for syslog/journal stamps that have none (default: from each file's mtime).")
_rules_opt = click.option(
    "--rules", "rules_files", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
    help="Extra rule-table CSV (same columns as pipeline/rules/*.csv); may be repeated.")


def _inputs(paths: tuple[str, ...], skipped: list[str] | None = None) -> list[InputFile]:
    files = expand_inputs(list(paths), skipped)
    if not files:
        raise InputError("no files found under " + ", ".join(paths)
                         + "; give log files, directories or a quoted glob")
    return files


@main.command("ingest")
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory for events.parquet, attempts.parquet, tormortem.duckdb, ...")
@_source_opt
@_tz_opt
@_year_opt
@_rules_opt
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@click.option("--max-files", default=40, show_default=True,
              help="Rows of the per-file table to print (all are in line_accounting).")
def ingest_cmd(paths: tuple[str, ...], out: Path, source: str | None, tz: str,
               year: int | None, rules_files: tuple[Path, ...], quiet: bool,
               max_files: int) -> None:
    """Parse log files, directories (recursive), globs or .gz files into Parquet + DuckDB.

    Every line read is counted as an event, recognised-irrelevant, or unparsed; the table
    printed at the end shows that these add up, per file and per source.

    \b
    Example:
      tormortem ingest /var/log/slurm/ 'nodes/*/kern.log*' jobs/ --out /tmp/tm --tz UTC
    """
    skipped: list[str] = []
    files = _inputs(paths, skipped)
    t0 = time.perf_counter()
    with render.progress(files, enabled=not quiet) as advance:
        result = ingest(files, out, tz=get_tz(tz), year=year, source=source,
                        extra_rules=list(rules_files), progress=advance)
    if not quiet:
        click.echo(render.ingest_report(result, max_files=max_files,
                                        seconds=time.perf_counter() - t0, skipped=skipped))


@main.command("explain")
@click.argument("paths", nargs=-1, required=True)
@click.option("--jsonl", is_flag=True, help="One JSON object per line instead of a table.")
@_source_opt
@_tz_opt
@_year_opt
@_rules_opt
def explain_cmd(paths: tuple[str, ...], jsonl: bool, source: str | None, tz: str,
                year: int | None, rules_files: tuple[Path, ...]) -> None:
    """What tormortem makes of each line that carries a signal.

    For every such line: file, line number, source, kind, category (from the rule table),
    code and the rule that decided. Use - to read standard input.

    \b
    Example:
      grep Xid /var/log/kern.log | tormortem explain - --jsonl
    """
    files = _stdin_aware(paths)
    rows = explain_files(files, tz=get_tz(tz), year=year, source=source,
                         extra_rules=list(rules_files))
    if jsonl:
        for r in rows:
            click.echo(json.dumps(r, ensure_ascii=False))
    else:
        click.echo(render.explain_table(rows))


@main.command("analyze")
@click.argument("paths", nargs=-1, required=True)
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the tables (Parquet + tormortem.duckdb) and reports.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the analysis as JSON (schema tormortem.analysis/1) instead of text.")
@click.option("--run-map", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="CSV job_id,run: which run each job belongs to (default: by job name).")
@click.option("--ideal-step-time", default=None, metavar="DURATION",
              help="Healthy step time t* (e.g. 2.35s) instead of the median measured one.")
@click.option("--window-before", default="15m", show_default=True, metavar="DURATION",
              help="Evidence window before an interrupted attempt's last progress.")
@click.option("--window-after", default="5m", show_default=True, metavar="DURATION",
              help="Evidence window after an interrupted attempt's end.")
@click.option("--report", "with_report", is_flag=True,
              help="Also write report.html and report.pdf into --out (see `tormortem report`).")
@_source_opt
@_tz_opt
@_year_opt
@_rules_opt
def analyze_cmd(paths: tuple[str, ...], out: Path, as_json: bool, run_map: Path | None,
                ideal_step_time: str | None, window_before: str, window_after: str,
                with_report: bool, source: str | None, tz: str, year: int | None,
                rules_files: tuple[Path, ...]) -> None:
    """Realized TOR: ingest the logs, then split each run's wall time exactly.

    Links attempts into runs, rebuilds each attempt's progress, splits T_obs into T_opt,
    slow, lost work, checkpoint saves, startup, hang, repair and tail (they sum to T_obs),
    and finds each interruption's root cause from the evidence around it.

    \b
    Example:
      tormortem analyze sample_logs/demo --out reports/demo
      tormortem analyze logs/ --out /tmp/tm --json > analysis.json
      tormortem analyze sample_logs/demo --out reports/demo --report
    """
    files = _inputs(paths)
    ideal = parse_duration(ideal_step_time) if ideal_step_time else None
    before, after = parse_duration(window_before), parse_duration(window_after)
    with render.progress(files, enabled=not as_json) as advance:
        ingest(files, out, tz=get_tz(tz), year=year, source=source,
               extra_rules=list(rules_files), progress=advance)
    result = analyze_db(out / "tormortem.duckdb", run_map=run_map, ideal_step_s=ideal,
                        before_s=before, after_s=after)
    (out / "analysis.json").write_text(json.dumps(result, indent=2) + "\n")
    rates_docs = write_rates(out, result)
    models = attach_models(out, result, rates_docs)
    from pipeline.predicted import render_model, report_model

    model = report_model(result)
    if model is not None:
        (out / "model.json").write_text(json.dumps(model, indent=2) + "\n")
    written: list[Path] = []
    if with_report:
        from pipeline.report import PdfError, write_report

        rates = json.loads(rates_docs[0].read_text()) if len(rates_docs) == 1 else None
        try:
            html, pdf = write_report(out, result, rates, model)
        except PdfError as e:
            raise click.ClickException(str(e)) from None
        written = [p for p in (html, pdf) if p is not None]

    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(render_analysis(result))
        for m in models:
            click.echo("\n" + render_model(m))
        for path in rates_docs:
            click.echo(f"\nFitted rates: {path} (tormortem fit {out} prints them; "
                       f"tormortem plan --rates {path} answers what-ifs)")
        for path in written:
            click.echo(f"Report: {path}")


def write_rates(out: Path, analysis: dict[str, Any]) -> list[Path]:
    """rates.json (one run) or rates-<run>.json per run, beside the analysis."""
    from pipeline.fit import fit_dir

    docs = fit_dir(out, analysis)
    paths = []
    for run, doc in docs.items():
        name = "rates.json" if len(docs) == 1 else f"rates-{_safe(run)}.json"
        (out / name).write_text(json.dumps(doc, indent=2) + "\n")
        paths.append(out / name)
    return paths


def attach_models(out: Path, analysis: dict[str, Any], rates_paths: list[Path]
                  ) -> list[dict[str, Any]]:
    """The model of each run's fitted rates, added to the run as ``model`` (and to
    analysis.json)."""
    from pipeline.predicted import model_summary

    models = []
    by_run = {json.loads(p.read_text())["provenance"]["run"]: p for p in rates_paths}
    for r in analysis["runs"]:
        if r["run"] in by_run:
            r["model"] = model_summary(json.loads(by_run[r["run"]].read_text()), r)
            models.append(r["model"])
    (out / "analysis.json").write_text(json.dumps(analysis, indent=2) + "\n")
    return models


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


@main.command("fit")
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
    from pipeline.fit_text import render_rates

    analysis = json.loads(path.read_text())
    paths = write_rates(directory, analysis)
    for p in paths:
        doc = json.loads(p.read_text())
        click.echo(json.dumps(doc, indent=2) if as_json else render_rates(doc) + f"\n-> {p}")


def _stdin_aware(paths: tuple[str, ...]) -> list[InputFile]:
    if paths == ("-",):
        import tempfile

        data = sys.stdin.buffer.read()
        tmp = Path(tempfile.mkdtemp(prefix="tormortem-")) / "stdin"
        tmp.write_bytes(data)
        return [InputFile(tmp, "-")]
    return _inputs(paths)


@main.command("sources")
def sources_cmd() -> None:
    """List the log sources tormortem reads (names for --source).

    \b
    Example:
      tormortem sources
    """
    width = max((len(p.name) for p in ALL_PARSERS), default=0)
    for p in ALL_PARSERS:
        click.echo(f"{p.name:<{width}}  {p.description}")




def _loadable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(LAZY[name].split(":")[0]) is not None
