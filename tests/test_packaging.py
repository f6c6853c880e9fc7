"""Every data file the code reads is shipped by `pip install .` (not just present in a clone)."""

from __future__ import annotations

import fnmatch
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_package_data_covers_every_data_file() -> None:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = cfg["tool"]["setuptools"]["package-data"]
    missing = []
    for top in ("parsers", "pipeline"):
        for f in (ROOT / top).rglob("*"):
            if not f.is_file() or f.suffix in (".py", ".pyc") or "__pycache__" in f.parts:
                continue
            rel = f.relative_to(ROOT)
            shipped = False
            for pkg, patterns in data.items():
                pkg_dir = ROOT / Path(*pkg.split("."))
                if pkg_dir in f.parents:
                    sub = str(f.relative_to(pkg_dir))
                    shipped |= any(fnmatch.fnmatch(sub, pat) for pat in patterns)
            if not shipped:
                missing.append(str(rel))
    assert missing == [], f"add to [tool.setuptools.package-data]: {missing}"


@pytest.mark.slow
def test_wheel_ships_rules_sql_schemas_and_templates(tmp_path: Path) -> None:
    """Build the wheel as `pip install .` does and look inside it."""
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".ci-venv", ".ci-artifacts", "__pycache__", "*.egg-info", "build",
        "reports", "sample_logs", "tests", ".mypy_cache", ".ruff_cache"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(tmp_path / "dist"), str(src)], check=True)
    wheel = next((tmp_path / "dist").glob("tormortem-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = [str(f.relative_to(ROOT)) for top in ("parsers", "pipeline")
              for f in (ROOT / top).rglob("*")
              if f.is_file() and f.suffix != ".pyc" and "__pycache__" not in f.parts]
    assert any(n.endswith(".csv") for n in wanted) and any(n.endswith(".sql") for n in wanted)
    missing = [n for n in wanted if n not in names]
    assert missing == []


def test_pipeline_top_level_is_stage_packages() -> None:
    """The layout rule of the README: pipeline/ holds the stage packages and at most three
    plain modules."""
    plain = sorted(p.name for p in (ROOT / "pipeline").glob("*.py"))
    packages = sorted(p.name for p in (ROOT / "pipeline").iterdir()
                      if (p / "__init__.py").exists())
    assert len(plain) <= 3, plain
    assert packages == ["analyze", "cli", "ingest", "model", "report", "simulate"]


def test_python_dash_m_pipeline() -> None:
    out = subprocess.run([sys.executable, "-m", "pipeline", "--version"], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    assert out.stdout.startswith("tormortem, version ")
