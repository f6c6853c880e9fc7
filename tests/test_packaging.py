"""Every data file the code reads is shipped by `pip install .` (not just present in a clone)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

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
