from pathlib import Path

import pytest

from parsers.paths import host_from_path, job_from_path


@pytest.mark.parametrize(
    ("path", "host"),
    [
        ("logs/node017/kern.log", "node017"),
        ("nodes/dgx-042/messages", "dgx-042"),
        ("cluster/r12-n3/dmesg.txt", "r12-n3"),
        ("run2/slurmd-n4.log", "n4"),  # Slurm's SlurmdLogFile=slurmd-%n.log
        ("var/log/slurm/slurmd-tmn1.log", "tmn1"),
        ("kern-node017.log", "node017"),
        ("node017.kern.log", "node017"),
        ("ip-10-0-3-17/syslog", "ip-10-0-3-17"),
        ("run2/kern.log", None),  # a numbered folder is not a host
        ("test1/v3/slurmctld.log", None),
        ("/tmp/tormortem-slurm-h0skn5lz/logs/slurmctld.log", None),
        ("jobs/slurm-1234.out", None),
        ("node017/var/log/kern.log", "node017"),  # a host's /var/log copied
        ("nodes/node017/2024-05-01/syslog", "node017"),
        # a folder named like a host above other folders is no host (fault probe E5: the
        # demo copied under x/h1/ lost 4 of 18 interruptions' nodes to "h1")
        ("x/h1/demo/jobs/slurm-1001.out", None),
        ("e4/demo/nodes/kern.log", None),
    ],
)
def test_host_from_path(path: str, host: str | None) -> None:
    assert host_from_path(path) == host


def test_job_from_path() -> None:
    assert job_from_path("jobs/slurm-1234.out") == "1234"
    assert job_from_path("jobs/slurm-1234_5.err") == "1234_5"
    assert job_from_path("node017/kern.log") is None


def test_a_file_name_that_is_not_utf8_is_read_under_an_escaped_name(tmp_path: Path) -> None:
    """A Latin-1 name (``caf\\xe9-slurm-1002.out``) aborted the whole run: Arrow cannot hold
    the surrogate escapes Python gives such a name. The file is read; its name is stored with
    the byte escaped, and the job id in it still links it."""
    import os

    from parsers.reader import expand_inputs
    from pipeline.ingest.run import ingest
    from pipeline.ingest.sink import connect

    raw = os.fsencode(str(tmp_path / "jobs")) + b"/caf\xe9-slurm-1002.out"
    os.makedirs(os.fsdecode(os.path.dirname(raw)))
    with open(raw, "wb") as fh:
        fh.write(b" iteration      100/    1000 | consumed samples:        12800 | elapsed time "
                 b"per iteration (ms): 812.3 | learning rate: 3.000E-04 |\n")
    out = tmp_path / "out"
    ingest(expand_inputs([str(tmp_path / "jobs")]), out)
    with connect(out / "tormortem.duckdb", read_only=True) as con:
        rows = con.execute("SELECT file, job_id, kind FROM events").fetchall()
    name = str(tmp_path / "jobs") + "/caf\\xe9-slurm-1002.out"
    assert rows == [(name, "1002", "iteration")]


def test_a_link_to_a_file_already_named_is_read_once_and_said(tmp_path: Path) -> None:
    """A symbolic link to a file of the same inputs was dropped with no trace (fault probe
    D12); a copy is a ``duplicate`` row. The link is read once and the walk says so (stderr
    note, manifest's unread.special)."""
    from parsers.inputs import find_inputs

    (tmp_path / "slurm-1002.out").write_text("x\n")
    (tmp_path / "slurm-1002-copy.out").symlink_to("slurm-1002.out")
    res = find_inputs([str(tmp_path)])
    assert [f.display for f in res.files] == [str(tmp_path / "slurm-1002-copy.out")]
    assert res.special == [f"{tmp_path}/slurm-1002.out: the same file as {tmp_path}/"
                           "slurm-1002-copy.out (one links to the other); read once, as "
                           f"{tmp_path}/slurm-1002-copy.out"]
    # the same path named twice is no link: nothing to say
    assert find_inputs([str(tmp_path / "slurm-1002.out")] * 2).special == []
