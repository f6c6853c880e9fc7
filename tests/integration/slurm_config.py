"""Installing Slurm and configuring the test cluster (slurm_harness.Cluster): the Debian
packages (``install_packages``) and every config file (``write_configs``).

Kept apart from the harness so each module reads whole. The settings and why they matter are
in tests/integration/README.md.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.integration.slurm_harness import Cluster

CRED_EXPIRE_S = 5


class HarnessError(RuntimeError):
    """The cluster could not be set up or did not behave; the message says what happened."""


PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge", "slurmdbd", "mariadb-server")
#: program -> package that provides it
PROGRAMS = {
    "/usr/sbin/slurmctld": "slurmctld", "/usr/sbin/slurmd": "slurmd",
    "/usr/bin/sbatch": "slurm-client", "/usr/bin/sacct": "slurm-client",
    "/usr/sbin/munged": "munge", "/usr/sbin/slurmdbd": "slurmdbd",
    "/usr/sbin/mariadbd": "mariadb-server", "/usr/bin/mariadb-install-db": "mariadb-server",
}
def missing_programs() -> list[str]:
    return [p for p in PROGRAMS if not os.access(p, os.X_OK)]


def install_packages(log: Path) -> None:
    """``apt-get install --no-install-recommends`` the Slurm packages, with a temporary
    ``policy-rc.d`` (exit 101) so that no postinst starts a daemon through /etc/init.d."""
    prc = Path("/usr/sbin/policy-rc.d")
    created = False
    if not prc.exists():
        prc.write_text("#!/bin/sh\n# tormortem integration tests: start no services\nexit 101\n")
        prc.chmod(0o755)
        created = True
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        with open(log, "ab") as fh:
            for cmd in (["apt-get", "update", "-qq"],
                        ["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                         *PACKAGES]):
                r = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env,
                                   check=False)
                if r.returncode != 0:
                    raise HarnessError(f"{' '.join(cmd)} failed (exit {r.returncode}); see {log}")
    finally:
        if created:
            prc.unlink(missing_ok=True)
    still = missing_programs()
    if still:
        raise HarnessError(f"after apt-get install still missing: {', '.join(still)}")


# ------------------------------------------------------------------------------ helpers
def free_port_block(n: int) -> int:
    """First port of ``n`` consecutive free TCP ports on 127.0.0.1."""
    for base in range(21000 + (os.getpid() * 7) % 20000, 60000, 17):
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise HarnessError(f"no block of {n} free ports on 127.0.0.1")


def cgroup_v1_memory() -> bool:
    return Path("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists()



def write_configs(self: Cluster) -> None:
    """Every config file of the cluster below ``self.base`` (slurm.conf, slurmdbd.conf,
    gres.conf, cgroup.conf, the munge key, fake GPU device nodes)."""
    for d in (self.etc, self.logdir, self.jobdir, self.run, self.base / "state",
              self.base / "spool", self.base / "fakegpu", self.base / "munge",
              self.base / "ckpt", self.base / "inject", self.base / "truth"):
        d.mkdir(parents=True, exist_ok=True)
    for i in range(4):
        (self.base / "fakegpu" / f"nvidia{i}").symlink_to("/dev/null")
    p0 = free_port_block(3 + len(self.nodes))
    self.ports = {"slurmctld": p0, "slurmdbd": p0 + 1, "mysql": p0 + 2, "slurmd": p0 + 3}
    self.memory_limits = cgroup_v1_memory()
    munge_sock = self.base / "munge" / "sock"
    nodes = f"{self.nodes[0][:-1]}[1-{len(self.nodes)}]"
    last_port = self.ports["slurmd"] + len(self.nodes) - 1
    # cgroup v1 enforces --mem (OUT_OF_MEMORY); without it fall back to plain process
    # tracking (memory then only by OverMemoryKill: FAILED, not OUT_OF_MEMORY)
    if self.memory_limits:
        track = "ProctrackType=proctrack/cgroup\nTaskPlugin=task/cgroup\n"
    else:
        track = ("ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
                 "JobAcctGatherParams=OverMemoryKill\n")
    b = self.base
    (self.etc / "slurm.conf").write_text(f"""\
# written by tests/integration/slurm_harness.py
ClusterName=tmci
SlurmctldHost=localhost
SlurmctldPort={self.ports["slurmctld"]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={munge_sock},cred_expire={CRED_EXPIRE_S}
CryptoType=crypto/munge
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
{track}ReturnToService=1
StateSaveLocation={b}/state
SlurmdSpoolDir={b}/spool/%n
SlurmctldPidFile={b}/run/slurmctld.pid
SlurmdPidFile={b}/run/slurmd-%n.pid
SlurmdParameters=config_overrides
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
KillWait=5
Waittime=0
MessageTimeout=10
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=500
JobRequeue=1
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort={self.ports["slurmdbd"]}
AccountingStoragePass={munge_sock}
AccountingStorageTRES=gres/gpu
JobCompType=jobcomp/filetxt
JobCompLoc={b}/log/jobcomp.log
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
SlurmctldDebug=info
SlurmctldLogFile={b}/log/slurmctld.log
SlurmdDebug=info
SlurmdLogFile={b}/log/slurmd-%n.log
NodeName={nodes} NodeHostname=localhost NodeAddr=127.0.0.1 \
Port=[{self.ports["slurmd"]}-{last_port}] CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 \
ThreadsPerCore=1 RealMemory=4000 Gres=gpu:h100:4 State=UNKNOWN
PartitionName=gpu Nodes={nodes} Default=YES MaxTime=INFINITE State=UP
""")
    (self.etc / "gres.conf").write_text(
        f"NodeName={nodes} Name=gpu Type=h100 File={b}/fakegpu/nvidia[0-3]\n")
    (self.etc / "cgroup.conf").write_text(
        "CgroupPlugin=cgroup/v1\nConstrainRAMSpace=yes\nConstrainSwapSpace=no\n"
        "ConstrainCores=no\nConstrainDevices=no\n")
    dbd = self.etc / "slurmdbd.conf"
    dbd.write_text(f"""\
AuthType=auth/munge
AuthInfo=socket={munge_sock}
DbdHost=localhost
DbdPort={self.ports["slurmdbd"]}
SlurmUser=root
DebugLevel=info
LogFile={b}/log/slurmdbd.log
PidFile={b}/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={self.ports["mysql"]}
StorageUser=slurm
StoragePass=slurmci
StorageLoc=slurm_acct_db
""")
    dbd.chmod(0o600)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "?"


def _rmdir_tree(p: Path) -> None:
    """Remove an (empty) cgroup directory tree, children first; ignore what cannot go."""
    if not p.is_dir():
        return
    for c in sorted((c for c in p.iterdir() if c.is_dir()), reverse=True):
        _rmdir_tree(c)
    with contextlib.suppress(OSError):
        p.rmdir()


def iter_lines(path: Path) -> Iterator[str]:
    with open(path, encoding="utf-8", errors="replace") as fh:
        yield from (line.rstrip("\n") for line in fh)
