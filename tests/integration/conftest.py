"""Session fixture ``slurm_cluster``: a real Slurm 22.05 on 127.0.0.1 (see slurm_harness.py).

* Installs the Debian packages when a program is missing (root + apt-get, with a policy-rc.d
  guard so no postinst starts a daemon).
* Writes the configs into a private temporary directory, starts munged, MariaDB, slurmdbd,
  slurmctld and one slurmd per emulated node, yields, and always stops them by PID -- also
  when a test or the start-up failed -- then checks that none of them is left.
* Skips (with the reason) only where it cannot work: not root, or a program is missing and
  there is no apt-get. With ``CI=true`` it never skips: it fails instead.
* ``TORMORTEM_SLURM_ARTIFACTS=DIR``: the collected logs, the analysis and the injection
  timeline are copied there (for a CI artifact upload); the temporary directory is removed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.slurm_config import HarnessError, install_packages, missing_programs
from tests.integration.slurm_harness import Cluster


def _cannot(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true, so the real-Slurm tests must run, but: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[Cluster]:
    if os.geteuid() != 0:
        _cannot("the real-Slurm tests need root (they start munged, MariaDB, slurmdbd, "
                "slurmctld and slurmd, and install them with apt-get if missing)")
    missing = missing_programs()
    if missing and shutil.which("apt-get") is None:
        _cannot(f"missing {', '.join(missing)} and no apt-get to install slurmctld slurmd "
                "slurm-client munge slurmdbd mariadb-server")
    cluster = Cluster.create()
    try:
        if missing:
            install_packages(cluster.base / "apt.log")
        cluster.write_configs()
        cluster.start()
        yield cluster
    except HarnessError as e:
        pytest.fail(f"real Slurm: {e}", pytrace=False)
    finally:
        notes = cluster.stop()
        left = cluster.running_daemons() + [str(p) for p in cluster.marked_pids()]
        keep = os.environ.get("TORMORTEM_SLURM_ARTIFACTS")
        if keep:
            dest = Path(keep)
            dest.mkdir(parents=True, exist_ok=True)
            for sub in ("campaign", "analysis", "log", "jobs", "truth", "campaign2",
                        "analysis2"):
                if (cluster.base / sub).exists():
                    shutil.copytree(cluster.base / sub, dest / sub, dirs_exist_ok=True)
            for f in ("timeline.json", "analysis.txt", "analysis2.txt"):
                if (cluster.base / f).exists():
                    shutil.copy(cluster.base / f, dest / f)
        shutil.rmtree(cluster.base, ignore_errors=True)
        if left:
            pytest.fail(f"processes still running after stop: {left}; {notes}", pytrace=False)
