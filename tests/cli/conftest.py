"""Shared fixtures: the demo logs analysed once through the CLI, and runners."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from pipeline.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "sample_logs" / "demo"


def invoke(*args: str, input: str | None = None) -> Result:
    """The command's result: .exit_code, .stdout, .stderr, .output (both, interleaved)."""
    return CliRunner().invoke(main, list(args), input=input)


def analysis(logs: Path, out: Path, *extra: str) -> dict[str, Any]:
    """``tormortem analyze LOGS --out OUT --json EXTRA...``'s document (exit 0 asserted)."""
    r = invoke("analyze", str(logs), "--out", str(out), "--json", *extra)
    assert r.exit_code == 0, r.output
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


@pytest.fixture(scope="session")
def demo_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tormortem analyze sample_logs/demo --out DIR`` (analysis.json, rates.json, db)."""
    out = tmp_path_factory.mktemp("cli-demo")
    r = invoke("analyze", str(DEMO), "--out", str(out))
    assert r.exit_code == 0, r.output
    return out
