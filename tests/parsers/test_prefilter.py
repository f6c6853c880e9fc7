"""The prefilter (parsers/prefilter.py, parsers/anchors.py): derived anchors, every example
line selected, and identical results with the prefilter on and off."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from parsers.anchors import SPLIT_BELOW, gate_literals, required_literals
from parsers.message import global_prefilter
from parsers.signature_table import builtin
from tests.parsers.util import corpus_lines

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("pattern", "want", "ci"), [
    (r"NVRM: Xid \((?:PCI:)?([0-9a-f]{4})[^)]*\): (\d+)", {"NVRM: Xid ("}, False),
    (r"Got completion (?:from peer \S+ )?with (?:error |status=)", {"Got completion "}, False),
    (r"(?i)port error|fatal", {"port error", "fatal"}, True),
    (r"foo(?:bar)?baz", {"foo"}, False),
    (r'"Deleting pod" controller="taint-eviction-controller"', {"taint-eviction-controller"},
     False),
])
def test_required_literals(pattern: str, want: set[str], ci: bool) -> None:
    a = required_literals(pattern)
    assert a is not None and set(a.literals) == want and a.ci == ci


@pytest.mark.parametrize(("pattern", "want"), [
    # re factors the common prefix: N(?:ET/IB|ET/Socket|et); a run joins each branch's lead
    (r"(?:^|[\]:]|[^O]\s)(?:NET/IB\w*|NET/Socket|Net) ?:", {"NET/IB", "NET/Socket", "Net"}),
    (r"\.(?:cc|c|h|cu|cpp|hpp):\d+ -> \d+", {" -> "}),
    (r"ab(?:cd|\d)x", {"ab"}),  # a branch without a leading literal: the run alone
    (r"\s\d+/\d+\s+(?:Error|Evicted)\s", {"Error", "Evicted"}),
])
def test_gate_literals(pattern: str, want: set[str]) -> None:
    g = gate_literals(pattern)
    assert g is not None and set(g.literals) == want


@pytest.mark.parametrize("seed", range(8))
def test_gate_literals_are_in_every_match(seed: int) -> None:
    """Soundness on random text: wherever a pattern matches, one of its gate literals is in
    the text (patterns with factored prefixes, nested groups, repeats, escapes)."""
    import random

    patterns = [r"N(?:ET/IB|et)x?:", r"(?:ab|ac)(?:d|e+)f", r"a(?:b(?:c|d)|bd)e",
                r"x(?:yz|y)+w", r"(?:^|[:\]])\s*ab(?:c|)d", r'"q(?:/r|\\s)"',
                r"(?:a|b)c(?:de|df|d)g", r"m(?:n|no|)p", r"N(?:E\dT|et)x", r"q(?:r.s|rt)"]
    pieces = [*list('abcdefgmnopqrstwxyzNEIBT5/:]" \\'), "et", "NE5T", "NET", "qr", "ab"]
    rng = random.Random(seed)
    hits = 0
    for p in patterns:
        g = gate_literals(p)
        assert g is not None
        rx = re.compile(p)
        for _ in range(4000):
            s = "".join(rng.choice(pieces) for _ in range(8))
            if rx.search(s):
                hits += 1
                assert any(x in s for x in g.literals), (p, s, g)
    assert hits > 50


def test_pattern_without_literal_has_no_anchor() -> None:
    assert required_literals(r"^\w+\d+$") is None
    assert required_literals(r"(?:ab|\d+)x?") is None


def test_every_signature_matches_its_examples_and_passes_the_prefilter() -> None:
    pf = global_prefilter()
    for sig in builtin():
        assert sig.examples, f"{sig.id}: no example line"
        assert sig.cite, f"{sig.id}: no citation"
        for ex in sig.examples:
            assert sig.regex.search(ex), f"{sig.id} does not match its example {ex!r}"
            assert pf.search(ex), f"{sig.id}: the prefilter would skip {ex!r}"
            assert pf.mask_np(pl.Series([ex]))[0], f"{sig.id}: polars disagrees on {ex!r}"


def test_corpus_signal_lines_pass_the_prefilter() -> None:
    """A signal line the prefilter skips is seen only inside an open multi-line block (an AER
    report's detail bits, an OOM report's memory lines): no more than those."""
    pf = global_prefilter()
    lines = corpus_lines(signal_only=True)
    mask = pf.mask_np(pl.Series(lines))
    missed = [t for t, ok in zip(lines, mask, strict=True) if not ok]
    assert len(missed) / len(lines) < 0.02, missed[:10]


_RUN = r'''
import json, sys
from pathlib import Path
from parsers.driver import parse_file
from parsers.reader import InputFile
out = []
src = None if sys.argv[1] == "-" else sys.argv[1]
for f in sys.argv[2:]:
    ev = []
    res = parse_file(InputFile(Path(f), f), ev.append, lambda b: None, source=src, year=2024)
    rows = sorted(json.dumps({k: str(v) for k, v in r.items()}, sort_keys=True)
                  for b in ev for r in b.to_pylist())
    a = res.acct
    out.append([f, res.source, a.read, a.events, a.irrelevant, a.unparsed, a.samples, rows])
print(json.dumps(out))
'''


def _parse_all(files: list[str], source: str, prefilter: str,
               confirm: str = "1") -> list[object]:
    # every chunk through the vectorised plan, however small (parsers/base.py SMALL_CHUNK)
    env = dict(os.environ, TORMORTEM_PREFILTER=prefilter, TORMORTEM_SMALL_CHUNK="0",
               TORMORTEM_CONFIRM=confirm)
    r = subprocess.run([sys.executable, "-c", _RUN, source, *files], env=env, cwd=ROOT,
                       capture_output=True, text=True, check=True)
    return list(json.loads(r.stdout))


def _corpus_files(tmp: Path) -> list[str]:
    files = []
    for f in sorted((ROOT / "tests" / "data" / "formats").glob("*.jsonl")):
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines()):
            g = json.loads(line)
            p = tmp / f"{f.stem}-{i:04d}.log"
            p.write_text("\n".join(x["text"] for x in g["lines"]) + "\n", encoding="utf-8")
            files.append(str(p))
    return files


@pytest.mark.parametrize("source", [  # slow: ~20-30 s each (the quick loop's 5 min budget)
    pytest.param(s, marks=pytest.mark.slow)
    for s in ("-", "joblog", "kernel", "text", "klog", "slurmd")])
def test_prefilter_changes_nothing(tmp_path: Path, source: str) -> None:
    """Every row, count and unparsed sample is the same with the prefilter on and off: on
    the whole corpus (each file sniffed, then read as each dialect) and the sample logs."""
    files = _corpus_files(tmp_path)
    if source == "-":
        files += [str(p) for p in sorted((ROOT / "sample_logs").rglob("*"))
                  if p.is_file() and p.suffix not in (".json", ".md")]
    off, on = _parse_all(files, source, "0"), _parse_all(files, source, "1")
    diff = [a[0] for a, b in zip(off, on, strict=True) if a != b]
    assert diff == []


def test_both_forms_of_the_prefilter_agree() -> None:
    """Small chunks are tested with literals and regexes apart, large ones (anchors.
    SPLIT_BELOW) with the literals as one alternation and the regexes gated by their
    literals: both must mark the lines the one alternation marks, on every corpus and sample
    line, with and without the noise claims."""
    lines = corpus_lines()
    for f in sorted((ROOT / "sample_logs").rglob("*.log"))[:20]:
        lines += f.read_text(encoding="utf-8", errors="replace").splitlines()[:2000]
    series = pl.Series(lines)
    assert len(series) > 20_000
    for claims in (False, True):
        pf = global_prefilter(claims=claims)
        full = series.str.contains(pf.pattern).fill_null(False).to_list()
        for n in (1, SPLIT_BELOW):
            split = pl.DataFrame({"l": series}).select(
                pf.expr(pl.col("l"), n).alias("m")).to_series().to_list()
            differ = [t for t, a, b in zip(lines, full, split, strict=True) if a != b]
            assert not differ, differ[:5]
        assert sum(full) > 5_000  # the test is not vacuous
        # nor for the gated regexes: lines only they mark
        assert pf.gated and series.str.contains(pf.gated).sum() > 100


# Year-less stamps as rsyslog (RSYSLOG_TraditionalFileFormat), journalctl -o short, a syslog
# line with its <PRI> (RFC 3164 on the wire), a quoted "> " paste, glog (absl/glog's
# "I0501 12:00:00.123456  4242 file.cc:12] ") and lines that only look alike.
MONTH_LINES = [
    "May  1 12:00:01 node0001 kernel: [ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=1",
    "Dec 31 23:59:59 gpu-17 systemd[1]: Started Session 5 of user root.",
    "  Jan  2 00:00:00 host sshd[77]: Accepted publickey for ops",
    "<6>Feb 12 01:02:03 host kernel: mlx5_core 0000:3b:00.0: Link up",
    "> > Mar  3 04:05:06.123456 host kernel: x",
    "[Apr 10 10:10:10 host kernel: pasted with a bracket",
    "Mayday: not a stamp", "May 1 12:00:01 host single-space day", "", "   ",
    "I0501 12:00:00.123456  4242 ProcessGroupNCCL.cpp:1234] [Rank 3] Watchdog caught collective",
    "  E1231 23:59:59.000001 77 file.cc:1] indented glog",
    "W1301 12:00:00.000000 1 f.cc:2] month 13 is no month",
    "Ixxxx not glog", "F0211 00:00:00.5 9 a.cc:3] fatal",
]


MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec"


@pytest.mark.parametrize("pattern", ["SHORT_MONTH", "kernel"])
def test_months_read_by_slicing_equal_the_extraction(pattern: str) -> None:
    import numpy as np

    from parsers import kernel_plan, prefilter

    p = prefilter.SHORT_MONTH if pattern == "SHORT_MONTH" else kernel_plan.V_SHORT
    lines = pl.Series(MONTH_LINES * 3)
    want = lines.str.extract(p, 1).replace_strict(
        {m: i for i, m in enumerate(MONTHS.split(), 1)},
        default=0, return_dtype=pl.Int64).fill_null(0).to_list()
    assert prefilter.months(lines, p).tolist() == want
    assert prefilter.masks(lines, {"x": "x"}, {"m": p})["m"].tolist() == want
    assert any(want) and not all(want)
    glog = lines.str.extract(prefilter.GLOG_MONTH, 1).cast(pl.Int64, strict=False).fill_null(0)
    g = np.array(glog.to_list())
    g[(g < 1) | (g > 12)] = 0
    assert prefilter.glog_months(lines).tolist() == g.tolist()
    assert sorted(set(g.tolist())) == [0, 2, 5, 12]


def test_trie_pattern_finds_what_the_alternation_finds() -> None:
    """``trie_pattern`` (signature_table's any-anchor search) against the flat alternation it
    replaced, on random literal sets (shared prefixes, one literal a prefix of another, regex
    metacharacters) and random texts over the same small alphabet."""
    import random
    import re

    from parsers.anchors import trie_pattern

    rnd = random.Random(7)
    alphabet = "ab(.|*)c"
    for _ in range(400):
        lits = {"".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 4)))
                for _ in range(rnd.randint(1, 6))}
        flat = re.compile("|".join(re.escape(a) for a in sorted(lits, key=len, reverse=True)))
        trie = re.compile(trie_pattern(lits))
        for _ in range(30):
            text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12)))
            assert (flat.search(text) is None) == (trie.search(text) is None), (lits, text)
    assert re.compile(trie_pattern([])).search("anything") is None
    assert re.compile(trie_pattern(["", "x"])).search("anything") is not None


def test_context_deferred_to_a_line_that_needs_it(tmp_path: Path) -> None:
    """The kernel dialect reads the context before a candidate only when the candidate's own
    envelope does not set it (``OWN_CONTEXT``): before a continuation, an envelope Python
    cannot read (30 February passes the vectorised test, not the calendar), a line Python
    finds no envelope in. Each indented Xid below inherits the stamp and host of the last
    readable envelope before it, as without the prefilter."""
    xid = ("NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, "
           "GPU has fallen off the bus.")
    cont = "    NVRM: Xid (PCI:0000:5d:00): 48, pid=1234, name=python, An uncorrectable " \
           "double bit error (DBE) has been detected on GPU in the framebuffer."
    lines = []
    for k in range(40):
        lines += [
            f"May  1 00:{k:02d}:00 a{k} kernel: [{100 + k}.000001] eth0: renamed from tmp{k}",
            f"May  1 00:{k:02d}:01 b{k} kernel: [{101 + k}.000001] {xid}",
            cont,  # b{k}'s
            f"May  1 00:{k:02d}:02 c{k} kernel: [{102 + k}.000001] eth0: renamed from tmp{k}",
            f"Feb 30 00:{k:02d}:02 other{k} kernel: [{102 + k}.000002] {xid}",
            cont,  # c{k}'s: the line before has no readable envelope
            f"May  1 00:{k:02d}:03 d{k} systemd[1]: Started session-{k}.scope.",
            f"[{103 + k}.5] {xid}",
            "\t" + cont.strip(),  # the dmesg line's
            f"May  1 00:{k:02d}:04 g{k} kernel: [{104 + k}.000001] eth0: renamed from tmp{k}",
            f"<13>1 2024-05-01T00:{k:02d}:05Z other{k} kernel - - [unterminated {xid}",
            cont,  # g{k}'s: the structured-data bracket never closes, so no envelope
        ]
    f = tmp_path / "kern.log"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    off, on = _parse_all([str(f)], "kernel", "0"), _parse_all([str(f)], "kernel", "1")
    assert off == on
    rows = [json.loads(r) for r in off[0][7]]
    hosts = {r["host"] for r in rows}
    assert {"b7", "c7", "g7"} <= hosts and not any(h.startswith("other") for h in hosts)
