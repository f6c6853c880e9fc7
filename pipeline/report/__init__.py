"""Stage 4, report: what the stages computed -> what people read.

Enters: the ``tormortem.analysis/1`` dict, a ``tormortem.rates/1`` dict, the model summary
(``pipeline.model.predicted.report_model``), the analysis database, plan results and ingest
results. Leaves: ``report.html`` (self-contained) and ``report.pdf`` (``html.write_report``),
and the terminal renderings: ``terminal`` (tables, ingest summary, explain, progress),
``analysis_text``, ``rates_text``, ``model_text``, ``plan_text``.

May import: ``pipeline.model``, ``pipeline.analyze``, ``pipeline.ingest``, ``parsers`` and
``pipeline.units``.
"""
