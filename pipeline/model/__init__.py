"""Stage 3, model: an analysis -> fitted rates -> predicted TOR and planners' what-ifs.

Enters: the ``tormortem.analysis/1`` dict and its DuckDB tables (``pipeline.analyze``), or a
rates file. Leaves: the versioned rates document (``tormortem.rates/1``,
``schemas/rates.schema.json``; ``rates`` reads, validates and writes it), each run's model
summary (``predicted``), and plan results (``plan``).

Modules: ``rates`` (the rates file and its schema), ``fit`` (rates from an analysis: Poisson
intervals, censored Weibull, recovery times, checkpoint and fail-slow parameters), ``core``
(the exact closed form of the simulated process, Daly's form, first order), ``interval``
(propagated intervals), ``factors`` (key factors), ``predict`` (predictions at a scale),
``predicted`` (a run's model summary), ``plan`` (what-ifs, sweeps), ``outputs`` (rates.json
and the model beside an analysis), ``jsondump`` (``json.dumps(indent=2)``'s text, faster: the
analysis JSON of a large campaign holds a million values).

May import: ``pipeline.analyze``, ``pipeline.ingest``, ``parsers`` and ``pipeline.units``.
"""
