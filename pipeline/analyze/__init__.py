"""Stage 2, analyze: ingested tables -> runs, the exact decomposition, root causes.

Enters: an ingested DuckDB database (``events``, ``attempts``, ``rules``,
``classified_events``; see ``pipeline.ingest``) and options (run map, t*, evidence windows).
Leaves: the ``tormortem.analysis/1`` dict (``run.analyze_db``) and the tables
``attempts_linked``, ``attempt_events``, ``attempt_parts``, ``runs``, ``decomposition``,
``interruptions``, ``evidence``, ``slow_episodes`` in the same database.

Modules: ``runs`` (attempts -> runs), ``progress`` (per-attempt iterations, saves, loads),
``decompose`` (T_obs split exactly; ``tstar`` its healthy step time from progress arrays),
``slowdown`` (fail-slow episodes), ``rootcause`` (evidence windows, most specific cause),
``run`` (the entry point), ``sql/``.

May import: ``pipeline.ingest``, ``parsers`` and ``pipeline.units``.
"""
