"""The command line (``tormortem``, ``python -m pipeline``): the only package that imports click.

Enters: command-line arguments. Leaves: terminal output, exit codes, and the files the library
writes. Each command is a module here (``ingest``, ``explain``, ``analyze``, ``fit``,
``sources``, ``plan``, ``report``, ``simulate``) and calls one library function; ``main``
holds the group, the lazily loaded commands and the one place where library errors become
``Error: ...`` lines. May import every other package of ``pipeline`` and ``parsers``.
"""

from pipeline.cli.main import main

__all__ = ["main"]
