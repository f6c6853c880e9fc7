"""``kubectl logs --prefix`` (with ``--timestamps``): every line behind ``[pod/POD/CONTAINER] ``
(kubectl/pkg/cmd/logs/logs.go ``addPrefixIfNeeded``: ``fmt.Sprintf("[pod/%s/%s] ", ...)``),
then the RFC3339Nano stamp. 12,487 of 12,564 such lines of a Megatron pod were unparsed and
the analysis said there were no progress lines (fault probe M6); they read as without the
prefix now, per line and through the chunk paths (600 lines)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from parsers.reader import InputFile
from pipeline.ingest.explain import explain_files

POD = "[pod/llama-pretrain-master-0/pytorch] "


def _lines(n: int) -> list[str]:
    t0 = datetime(2024, 5, 1, 0, 4, 48, tzinfo=UTC)
    out = []
    for i in range(1, n + 1):
        t = t0 + timedelta(seconds=24 * i)
        # Megatron-LM training_log behind kubectl --timestamps' RFC3339Nano stamp
        out.append(f"{t:%Y-%m-%dT%H:%M:%S}.926228000Z  [{t:%Y-%m-%d %H:%M:%S}] iteration "
                   f"{i:8d}/   10800 | consumed samples: {1024 * i:12d} | elapsed time per "
                   "iteration (ms): 24682.4 | learning rate: 1.500000E-07 | global batch size: "
                   " 1024 | lm loss: 1.123914E+01 | loss scale: 1.0 | grad norm: 1.089 | number "
                   "of skipped iterations:   0 | number of nan iterations:   0 |")
    return out


def _rows(tmp_path: Path, name: str, lines: list[str]) -> list[tuple]:
    f = tmp_path / name
    f.write_text("".join(x + "\n" for x in lines))
    return [(r["line_no"], r["kind"], r["ts"]) for r in
            explain_files([InputFile(f, name)], tz=UTC, year=None)]


def test_the_pod_prefix_reads_as_without_it(tmp_path: Path) -> None:
    for n in (3, 600):
        plain = _lines(n)
        want = _rows(tmp_path, f"plain{n}.log", plain)
        assert len(want) == n and {k for _, k, _ in want} == {"iteration"}
        assert _rows(tmp_path, f"prefixed{n}.log", [POD + x for x in plain]) == want
