"""Placeholder: parser module being written."""

from __future__ import annotations

from parsers.base import Parser

PARSERS: list[type[Parser]] = []
