"""Beside the stages, simulate: rates -> a campaign's logs in the real formats + its truth.

Enters: a rates document (``pipeline.model.rates.Rates``: a preset of ``presets`` or a fitted
rates.json) and settings (seed, scale, flavour, log interval). Leaves: a folder of logs
(Slurm or Kubernetes flavour, kernel logs, job output; ``writers_*``, ``logsink*``),
``truth.json`` in the ``tormortem.analysis/1`` shape (``truth``) and ``params.json``; or, with
no logs, the TOR distribution of many campaigns (``montecarlo``).

Modules: ``campaign`` (the discrete-event process), ``records``, ``params``, ``presets``,
``run`` (the entry point), ``timefmt``, ``presentation``; ``noise`` (``--noise realistic``: the
background volume of a real campaign, with ``noise_syslog`` and ``noise_nccl``, also used by
benchmarks/bench_ingest.py).

May import: ``pipeline.model.rates`` and ``parsers.schema`` only (checked by import-linter).
"""
