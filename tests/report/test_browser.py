"""The report in a real browser (Debian's headless Chromium) and as a PDF.

Chromium loads the page with a probe script (allowed by a test-only CSP nonce) that records
JavaScript errors, CSP violations, console.error calls and broken images into the DOM, which
``--dump-dom`` then prints. The PDF is read back with pdftotext (Debian's poppler-utils)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pipeline.report.html import render_html, write_report
from pipeline.report.pdf import CHROMIUM_FLAGS, find_browser, weasyprint_ok
from pipeline.units import human
from tests.report.conftest import MODEL, PAYLOAD, Page
from tests.report.test_html import _poisoned

BROWSER = find_browser()
needs_browser = pytest.mark.skipif(
    BROWSER is None, reason="no headless browser found (apt-get install chromium)")

PROBE = """<script nonce="tmtest">
(function () {
  var errs = [];
  function add(m) { errs.push(String(m)); }
  window.addEventListener("error", function (e) {
    add("error: " + (e.message || (e.target && e.target.outerHTML))); }, true);
  document.addEventListener("securitypolicyviolation", function (e) {
    add("csp: " + e.violatedDirective + " " + e.blockedURI); });
  var ce = console.error;
  console.error = function () { add("console.error: " + [].join.call(arguments, " "));
                                ce.apply(console, arguments); };
  window.addEventListener("load", function () {
    for (const im of document.images) {
      if (!im.complete || im.naturalWidth === 0) add("broken image: " + im.alt);
    }
    var p = document.createElement("pre");
    p.id = "probe-errors";
    p.textContent = JSON.stringify(errs);
    document.body.appendChild(p);
  });
})();
</script>"""


def _probe(html: str) -> str:
    csp = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    assert csp in html
    html = html.replace(csp, csp + "; script-src 'nonce-tmtest'", 1)
    return html.replace("<head>", "<head>\n" + PROBE, 1)


def _dump_dom(path: Path, tmp: Path) -> tuple[str, str]:
    assert BROWSER is not None
    cmd = [BROWSER, *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'profile'}",
           "--enable-logging=stderr", "--v=0", "--dump-dom", path.resolve().as_uri()]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout, r.stderr


class _Errors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inside, self.data = False, ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.inside = ("id", "probe-errors") in attrs

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.data += data


def _errors(dom: str) -> list[str]:
    p = _Errors()
    p.feed(dom)
    assert p.data, "the probe did not run: no load event in the dumped DOM"
    errs: list[str] = json.loads(p.data)
    return errs


def _console(stderr: str, page: Path) -> list[str]:
    return [ln for ln in stderr.splitlines() if ":CONSOLE" in ln and page.name in ln]


@needs_browser
@pytest.mark.slow  # ~3-6 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_page_loads_without_errors(demo_dir: Path, analysis: dict[str, Any],
                                   rates_doc: dict[str, Any], tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(_probe(render_html(analysis, rates_doc, MODEL,
                                       demo_dir / "tormortem.duckdb")), encoding="utf-8")
    dom, stderr = _dump_dom(page, tmp_path)
    assert _errors(dom) == []
    assert _console(stderr, page) == []
    parsed = Page(dom)
    assert f"{analysis['runs'][0]['tor']:.4f}" in parsed.section("summary")
    assert len([a for t, a in parsed.tags if t == "img"]) >= 7


@needs_browser
@pytest.mark.slow  # ~2-4 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_script_in_a_log_line_shows_as_text(demo_dir: Path, analysis: dict[str, Any],
                                            tmp_path: Path) -> None:
    bad, db = _poisoned(demo_dir, analysis, tmp_path)
    page = tmp_path / "report.html"
    page.write_text(_probe(render_html(bad, None, None, db)), encoding="utf-8")
    dom, stderr = _dump_dom(page, tmp_path)
    assert _errors(dom) == []  # nothing ran, nothing was blocked, no image src=x was loaded
    assert _console(stderr, page) == []
    parsed = Page(dom)
    assert [t for t, _ in parsed.tags if t == "script"] == ["script"]  # the probe only
    assert PAYLOAD in parsed.section("interruptions")
    assert PAYLOAD in parsed.section("quality")  # the unparsed sample
    assert "Data quality" in parsed.section("quality")  # the page after it is intact


def _pdf_text(pdf: Path) -> tuple[int, str]:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
    pages = int(re.search(r"^Pages:\s+(\d+)", info.stdout, re.M).group(1))  # type: ignore[union-attr]
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout
    return pages, text


@pytest.mark.skipif(shutil.which("pdftotext") is None or shutil.which("pdfinfo") is None,
                    reason="pdftotext/pdfinfo not found (apt-get install poppler-utils)")
@pytest.mark.parametrize("engine", ["chromium", "weasyprint"])
@pytest.mark.slow  # ~2-4 s: the quick loop's 5-minute budget (.ci/run runs it)
def test_pdf_has_pages_and_headline_numbers(engine: str, demo_dir: Path,
                                            analysis: dict[str, Any], tmp_path: Path) -> None:
    if engine == "chromium" and BROWSER is None:
        pytest.skip("no headless browser found (apt-get install chromium)")
    if engine == "weasyprint" and not weasyprint_ok():
        pytest.skip("WeasyPrint not importable (pip install weasyprint; needs libpango)")
    _html, pdf = write_report(tmp_path, analysis, db=demo_dir / "tormortem.duckdb",
                             engine=engine)
    assert pdf is not None and pdf.stat().st_size > 10_000
    pages, text = _pdf_text(pdf)
    assert pages >= 5
    run = analysis["runs"][0]
    flat = " ".join(text.split())
    for needle in (f"{run['tor']:.4f}", human(run["t_obs_s"]), human(run["t_opt_s"]),
                   "Where the time went", "Interruptions", "Data quality", run["run"]):
        assert needle in flat, needle
    first = text.split("\f")[0]
    assert f"{run['tor']:.4f}" in first  # the summary is on page 1
