"""Start-up: --version and every --help load no heavy library (counted, not timed).

The guard counts modules in a fresh interpreter: none of the heavy libraries (each costs
0.1-1 s to import) and no more than a budget of modules in all. Timing would be flaky on a
shared machine; an import that sneaks in is not."""

from __future__ import annotations

import json
import subprocess
import sys

from pipeline.cli.main import COMMANDS

HEAVY = ("polars", "pyarrow", "duckdb", "scipy", "matplotlib", "jinja2", "numpy", "rich",
         "weasyprint", "parsers")
#: modules in the interpreter after the heaviest --help (about 135 today, ~40 of them
#: Python's own start-up); a budget, so that a slow import shows up as a failure
BUDGET = 200

PROBE = """
import json, sys
from pipeline.cli.main import main
seen = {}
for args in ARGS:
    try:
        main(args, prog_name="tormortem", standalone_mode=False)
    except SystemExit:
        pass
    seen[" ".join(args)] = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
print(json.dumps({"heavy": seen, "count": len(sys.modules)}))
"""


def _probe(argsets: list[list[str]]) -> dict[str, object]:
    code = PROBE.replace("ARGS", repr(argsets)).replace("HEAVY", repr(HEAVY))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    doc: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return doc


def test_version_and_group_help_import_nothing_heavy() -> None:
    doc = _probe([["--version"], ["--help"]])
    assert doc["heavy"] == {"--version": [], "--help": []}
    assert isinstance(doc["count"], int) and doc["count"] <= BUDGET


def test_every_command_help_imports_nothing_heavy() -> None:
    doc = _probe([[name, "--help"] for name in COMMANDS])
    assert doc["heavy"] == {f"{name} --help": [] for name in COMMANDS}
    assert isinstance(doc["count"], int) and doc["count"] <= BUDGET


def test_python_dash_m_pipeline_help() -> None:
    out = subprocess.run([sys.executable, "-m", "pipeline", "--help"], capture_output=True,
                         text=True, check=True)
    assert out.stdout.startswith("Usage: tormortem ")
