"""The model stage's files beside an analysis: ``rates.json`` (one per run) and each run's
model summary attached to ``analysis.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.model.jsondump import dumps2


def write_rates(out: Path, analysis: dict[str, Any], dest: Path | None = None) -> list[Path]:
    """rates.json (one run) or rates-<run>.json per run, beside the analysis (or in ``dest``,
    an output folder's staging area)."""
    from pipeline.model.fit import fit_dir

    docs = fit_dir(out, analysis)
    where = dest if dest is not None else out
    paths = []
    for run, doc in docs.items():
        name = "rates.json" if len(docs) == 1 else f"rates-{_safe(run)}.json"
        (where / name).write_text(json.dumps(doc, indent=2) + "\n")
        paths.append(where / name)
    return paths


def attach_models(out: Path, analysis: dict[str, Any], rates_paths: list[Path]
                  ) -> list[dict[str, Any]]:
    """The model of each run's fitted rates, added to the run as ``model`` (and to
    analysis.json)."""
    from pipeline.model.predicted import model_summary

    models = []
    by_run = {json.loads(p.read_text())["provenance"]["run"]: p for p in rates_paths}
    for r in analysis["runs"]:
        if r["run"] in by_run:
            r["model"] = model_summary(json.loads(by_run[r["run"]].read_text()), r)
            models.append(r["model"])
    (out / "analysis.json").write_text(dumps2(analysis) + "\n")  # json.dumps(indent=2)
    return models


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
