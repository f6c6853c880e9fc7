"""The analysis stage's SQL: one statement per file, named after the relation it produces."""

from __future__ import annotations

from importlib import resources


def sql(name: str) -> str:
    """The SQL statement in ``pipeline/analyze/sql/<name>.sql``."""
    return resources.files(__name__).joinpath(f"{name}.sql").read_text(encoding="utf-8")
