"""Stage 1, ingest: log files -> typed tables, every line accounted for.

Enters: input files (``parsers.reader.InputFile``), options (zone, year, source, extra rules).
Runs each file through ``parsers`` (sniffing, prefix and message layers) and writes, into an
output folder:

* ``events.parquet`` / DuckDB ``events`` (``parsers.schema.EVENTS``; the database's ``events``
  is a view over the file, see ``sink``);
* ``attempts.parquet`` / ``attempts`` (``parsers.schema.ATTEMPTS``) and ``job_steps``;
* ``line_accounting`` and ``unparsed_samples`` (``parsers.schema.LINE_ACCOUNTING``,
  ``UNPARSED``);
* ``rules`` (the rule table, ``rules/*.csv``) and the view ``classified_events``.

Modules: ``run`` (``ingest()``), ``sink`` (the Parquet writers, the view ``events``,
``connect``), ``ruletable`` (the taxonomy as data), ``explain`` (the same parse and
classification, streamed as records), ``dedup`` (duplicate content and corrupt compressed
files, before parsing), ``outputs`` (atomic, locked output folders with ``manifest.json``; the
CLI writes through it, and ``report``/``fit``/``plan`` read through it), and ``sql/``
(``events_boots``, ``events_anchored``, ``classified_events``).

May import: ``parsers`` and ``pipeline.units``.
"""
