"""Output files linked by time when several jobs of one name could own them
(pipeline/analyze/links.py ``_resolve``): the second in which one job ended and the next
began is held by both jobs' executions (stamps and sacct times are whole seconds), and must not
make the old job an owner of the new job's short log. A real-Slurm campaign
(tests/integration/test_real_slurm_campaign2.py, a torchrun job requeued under the same name)
linked a restart's rank logs to both jobs when the restart began in that second."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import pytest

from pipeline.analyze.links import Job, OutFile, _resolve

T0 = 1_714_521_600.0  # 2024-05-01T00:00:00Z


def _con(lines: dict[str, list[float]]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE TABLE events (file VARCHAR, source VARCHAR, ts_flag VARCHAR, "
                "ts TIMESTAMPTZ)")
    for f, ts in lines.items():
        con.executemany("INSERT INTO events VALUES (?, 'joblog', 'exact', ?)",
                        [(f, datetime.fromtimestamp(T0 + t, UTC)) for t in ts])
    return con


def _jobs() -> tuple[Job, Job]:
    # the first job ran 100-200 s, its restart (same name) from the second it ended
    return (Job("11", {"11"}, "c2-torchrun", windows=[(T0 + 100, T0 + 200)]),
            Job("12", {"12"}, "c2-torchrun", windows=[(T0 + 200, T0 + 300)]))


@pytest.mark.parametrize(("stamps", "owners"), [
    # the restart's rank log: 2 lines in the shared second, 40 after it
    ([200.2, 200.5, *range(201, 241)], ["12"]),
    # the first job's rank log: its lines, then 2 in the second it ended
    ([*range(150, 200), 200.1, 200.4], ["11"]),
    # one file appended by both (a chain): both own it, each line to its execution
    ([*range(120, 200), *range(201, 281)], ["11", "12"]),
    # every line in the shared second: both, as before (nothing tells them apart)
    ([200.1, 200.2, 200.3], ["11", "12"]),
])
def test_the_shared_second_does_not_make_an_owner(stamps: list[float],
                                                  owners: list[str]) -> None:
    con = _con({"r.log": [float(s) for s in stamps]})
    f = OutFile("logs/torchrun/c2-torchrun/none_x/attempt_0/0/stdout.log",
                span=(T0 + min(stamps), T0 + max(stamps)))
    f.file = "r.log"
    chosen, note = _resolve(con, f, list(_jobs()))
    assert [j.job_id for j in chosen] == owners, note
