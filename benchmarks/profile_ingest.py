"""Where ``tormortem ingest`` spends its time: py-spy samples of every thread, summed.

    pip install py-spy   # not a dependency of the project
    python benchmarks/profile_ingest.py LOGS... [--rate 100] [--top 25]

Samples the ingest of ``LOGS`` with ``py-spy record --format raw --threads`` (busy threads
only: a thread waiting for I/O or a lock is not sampled) and prints, per thread, the share of
samples, then the functions with the most samples where they are the innermost Python frame
(self) and anywhere on the stack (inclusive), in percent of all samples of all threads (two
busy threads on 2 cores can add up to 200% of wall time).
Samples whose innermost frame is a wait on a condition, event or thread (a reader blocked on a
full queue) are left out. ``--anchors`` also prints, per input file, the share of lines the
prefilter passes to Python (``parsers.prefilter``) and the anchors that pass the most.
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
from pathlib import Path

IDLE = ("Condition.wait ", "Event.wait ", "Thread.join ")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--rate", type=int, default=100, help="samples per second")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--jobs", type=int, default=1,
                    help="ingest's --jobs (1: py-spy samples this one process)")
    ap.add_argument("--raw", type=Path, help="keep the collapsed stacks here")
    ap.add_argument("--anchors", action="store_true", help="also the prefilter's candidates")
    a = ap.parse_args()
    if a.anchors:
        for log in a.logs:
            anchors(Path(log), a.top)
    exe = str(Path(sys.executable).with_name("tormortem"))
    with tempfile.TemporaryDirectory() as d:
        raw = a.raw or Path(d) / "stacks.txt"
        subprocess.run(["py-spy", "record", "-o", str(raw), "--format", "raw", "--threads",
                        "-r", str(a.rate), "--", exe, "ingest", *a.logs, "--out",
                        str(Path(d) / "out"), "-q", "--jobs", str(a.jobs)],
                       check=True, capture_output=True)
        rows = raw.read_text().splitlines()
    threads: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    for row in rows:
        stack, _, n = row.rpartition(" ")
        count = int(n)
        frames = stack.split(";")
        if frames[-1].startswith(IDLE):  # a thread blocked on a queue: py-spy sees it running
            continue
        total += count
        threads[frames[0].split(": ")[-1]] += count
        names = [f.split(" (")[0] + " (" + f.split(" (")[-1].split(":")[0].split("/")[-1] + ")"
                 for f in frames[1:]]
        if names:
            own[names[-1]] += count
        for name in set(names):
            incl[name] += count
    print(f"{total} samples ({total / a.rate:.1f} thread-seconds)")
    for what, c in (("threads", threads), ("self", own), ("inclusive", incl)):
        print(f"\n-- {what}")
        for k, v in c.most_common(a.top):
            print(f"{100 * v / total:6.1f}%  {k}")


def anchors(path: Path, top: int, sample: int = 200_000) -> None:
    """Share of prefilter candidates among the first ``sample`` lines of each file under
    ``path``, and which anchors (literals, case-free literals, regexes) pass them."""
    import re

    import polars as pl

    from parsers.message import all_recognisers, global_prefilter, prefilter_of

    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    lines: list[str] = []
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            lines += [x.rstrip("\n") for _, x in zip(range(sample // len(files) + 1), fh,
                                                     strict=False)]
    s = pl.Series(lines)
    pf = prefilter_of(all_recognisers(), claims=True).flat()  # checked anchors as literals
    for claims in (False, True):
        m = global_prefilter(claims=claims).mask(s)
        print(f"{path}: {100 * float(m.mean() or 0):.1f}% of {len(lines)} lines are candidates "
              f"({'with' if claims else 'without'} noise claims)")
    cand = s.filter(global_prefilter(claims=True).mask(s)).head(20_000)
    hits: collections.Counter[str] = collections.Counter()
    tests = [(x, re.escape(x)) for x in pf.literals] + [
        ("(?i)" + x, "(?i:" + re.escape(x) + ")") for x in pf.ci_literals] + [
        ("re:" + x, x) for x in pf.regexes]
    for name, pattern in tests:
        n = int(cand.str.contains(pattern).sum())
        if n:
            hits[name] = n
    for k, v in hits.most_common(top):
        print(f"  {100 * v / max(1, len(cand)):5.1f}% of candidates contain {k!r}")


if __name__ == "__main__":
    main()
