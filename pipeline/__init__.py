"""tormortem's pipeline: one package per stage of the data flow, imports pointing downstream.

    files -> parsers/ -> ingest/ -> analyze/ -> model/ -> report/ -> cli/
                                     simulate/ (beside: writes logs + truth; uses model.rates)

* ``ingest``: files -> events, attempts, line accounting (Parquet + DuckDB); the rule table.
* ``analyze``: events/attempts -> runs, progress, decomposition, root causes, fail-slow.
* ``model``: an analysis -> fitted rates (rates.json) -> predicted TOR, what-ifs, plan.
* ``report``: everything above -> HTML/PDF report and the terminal renderings.
* ``simulate``: rates -> a campaign's logs in real formats plus its ground truth.
* ``cli``: the ``tormortem`` command; the only package importing click.

The direction is checked by import-linter (``[tool.importlinter]`` in pyproject.toml).
``units`` (durations) is shared by all stages and imports nothing of the project.
"""
