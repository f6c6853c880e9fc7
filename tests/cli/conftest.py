"""Shared fixtures: the demo logs analysed once through the CLI, and runners."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pipeline.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "sample_logs" / "demo"


def invoke(*args: str, input: str | None = None) -> Result:
    """The command's result: .exit_code, .stdout, .stderr, .output (both, interleaved)."""
    return CliRunner().invoke(main, list(args), input=input)


@pytest.fixture(scope="session")
def demo_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tormortem analyze sample_logs/demo --out DIR`` (analysis.json, rates.json, db)."""
    out = tmp_path_factory.mktemp("cli-demo")
    r = invoke("analyze", str(DEMO), "--out", str(out))
    assert r.exit_code == 0, r.output
    return out
