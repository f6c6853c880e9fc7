"""Shared pieces of the reliability suite: running the CLI in a subprocess (signals, locks and
kills need a real process), a demo analysis built once, and a large job log.

The probes come from issue 15 ("What failed"); each test names the probe it keeps true.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "sample_logs" / "demo"
CLI = [sys.executable, "-c", "import sys; sys.argv[0] = 'tormortem'; "
       "from pipeline.cli import main; main()"]


def cli(*args: str | Path, input: bytes | None = None, timeout: float = 300,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``tormortem ARGS`` in a subprocess; stdout and stderr as text."""
    r = subprocess.run([*CLI, *map(str, args)], input=input, capture_output=True,
                       timeout=timeout, cwd=cwd, check=False)
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode(errors="replace"),
                                       r.stderr.decode(errors="replace"))


def start(*args: str | Path, **kw: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*CLI, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kw)  # type: ignore[call-overload]


@pytest.fixture(scope="session")
def demo_analysis(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``analyze sample_logs/demo --out DIR``, built once; copy it before changing it."""
    out = tmp_path_factory.mktemp("demo") / "out"
    r = cli("analyze", DEMO, "--out", out)
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture
def prev(demo_analysis: Path, tmp_path: Path) -> Path:
    """A private copy of the demo analysis (mtimes kept, so the manifest's fast check holds)."""
    out = tmp_path / "out"
    shutil.copytree(demo_analysis, out, copy_function=shutil.copy2)
    return out


def job_log_lines() -> list[str]:
    """Megatron-LM iteration lines as the demo's job output prints them (Megatron-LM
    megatron/training/training.py training_log)."""
    text = (DEMO / "jobs" / "slurm-1001.out").read_text()
    return [ln + "\n" for ln in text.splitlines() if " iteration " in ln][:200]


@pytest.fixture(scope="session")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ~120 MB job log of iteration lines: an ingest of it runs for about a second."""
    p = tmp_path_factory.mktemp("big") / "slurm-9.out"
    block = "".join(job_log_lines()).encode()
    with open(p, "wb") as f:
        while f.tell() < 120 << 20:
            f.write(block)
    return p


def manifest(out: Path) -> dict[str, object]:
    import json

    doc = json.loads((out / "manifest.json").read_text())
    assert isinstance(doc, dict)
    return doc


def env_without_debug() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "TORMORTEM_DEBUG"}
