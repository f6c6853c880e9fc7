"""Shared fixtures: the demo logs analyzed once per session, and helpers to read HTML."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from parsers.reader import expand_inputs
from parsers.timeutil import get_tz
from pipeline.analyze.run import analyze_db
from pipeline.ingest.outputs import Writer
from pipeline.ingest.run import ingest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "sample_logs" / "demo"
PAYLOAD = '<script>alert("pwned")</script></pre></td></tr></table><img src=x onerror=alert(1)>'


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo-analysis")
    with Writer(out, "analyze") as w:  # a complete output folder, as `analyze` leaves it
        ingest(expand_inputs([str(DEMO)]), w.path, tz=get_tz("UTC"), year=None, source=None,
               extra_rules=[])
        result = analyze_db(w.path / "tormortem.duckdb")
        (w.path / "analysis.json").write_text(json.dumps(result), encoding="utf-8")
        w.commit(command="tests/report/conftest.py", argv=["analyze", str(DEMO)])
    return out


@pytest.fixture()
def analysis(demo_dir: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((demo_dir / "analysis.json").read_text())
    return doc


@pytest.fixture(scope="session")
def rates_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DEMO / "params.json").read_text())
    return doc


MODEL: dict[str, Any] = {
    "predicted": {"tor": 0.8123, "low": 0.7901, "high": 0.8345, "level": 0.9},
    "vs_gpus": [[64, 0.86, 0.84, 0.88], [128, 0.8123, 0.79, 0.83], [512, 0.74, 0.71, 0.77]],
    "gpus": 128,
    "vs_tau": [[600, 0.79], [1200, 0.806], [1800, 0.8123], [3600, 0.80], [7200, 0.77]],
    "tau_s": 1800, "tau_opt_s": 1500,
    "key_factors": [["repair gap halved", 0.0231], ["gpu_hardware rate halved", 0.0198]],
    "note": "fixture model",
}


class Page(HTMLParser):
    """Sections (by id), all text, start tags and attributes of an HTML page."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.sections: dict[str, list[str]] = {}
        self.text: list[str] = []
        self._section: str | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "section":
            self._section = a.get("id") or "?"
            self.sections[self._section] = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self._section = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._section:
            self.sections[self._section].append(data)

    def section(self, sid: str) -> str:
        return " ".join(" ".join(self.sections[sid]).split())
