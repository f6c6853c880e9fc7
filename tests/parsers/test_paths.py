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
    ],
)
def test_host_from_path(path: str, host: str | None) -> None:
    assert host_from_path(path) == host


def test_job_from_path() -> None:
    assert job_from_path("jobs/slurm-1234.out") == "1234"
    assert job_from_path("jobs/slurm-1234_5.err") == "1234_5"
    assert job_from_path("node017/kern.log") is None
