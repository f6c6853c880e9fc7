"""A real single-machine Slurm 22.05 (Debian 12 packages) for the integration tests.

Everything lives in one private directory (``Cluster.base``): configs, munge key and socket,
a MariaDB data directory, slurmdbd/slurmctld/slurmd state, logs and pid files, the job scripts
and the job output. Every daemon runs in the foreground as a child of the test process, so its
PID is known and ``Cluster.stop`` ends exactly those processes (and any job process or
slurmstepd carrying this cluster's marker in its environment), never anything by name.

Layout of the emulated cluster: ``NODES`` slurmd processes on 127.0.0.1 (one port each),
4 fake GPUs per node (symlinks to /dev/null), cgroup v1 memory limits when the host mounts
the v1 memory controller (jobs over ``--mem`` end OUT_OF_MEMORY), slurmdbd + MariaDB so that
``sacct`` has full history (``--duplicates``, steps, ``--json``). Ports are picked free at
start, so a second cluster (or a system Slurm) on the same machine does not collide.

Known behaviour of this Slurm that the settings account for (see tests/integration/README.md):
``AuthInfo=cred_expire`` delays every requeued run by that many seconds (+1), limits are whole
minutes (TIMEOUT takes 60-90 s), ``ReturnToService=1`` keeps a node set DOWN by scontrol down
until it is resumed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.integration.slurm_config import (
    HarnessError,
    _cmdline,
    _rmdir_tree,
    write_configs,
)
from tests.integration.slurm_faults import Faults, Injection, wait_for

NODES = ("tmn1", "tmn2", "tmn3", "tmn4")
MARKER = "TORMORTEM_SLURM_BASE"  #: env var set in every process this harness starts


# ------------------------------------------------------------------------------ install
def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# ------------------------------------------------------------------------------ cluster
@dataclass
class Cluster(Faults):
    base: Path
    nodes: tuple[str, ...] = NODES
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    timeline: list[Injection] = field(default_factory=list)
    memory_limits: bool = False

    # -- paths ----------------------------------------------------------------------------
    @property
    def etc(self) -> Path:
        return self.base / "etc"

    @property
    def logdir(self) -> Path:
        return self.base / "log"

    @property
    def jobdir(self) -> Path:
        return self.base / "jobs"

    @property
    def run(self) -> Path:
        return self.base / "run"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.etc / "slurm.conf"), "TZ": "UTC",
                MARKER: str(self.base)}

    # -- configuration ----------------------------------------------------------------------
    @classmethod
    def create(cls) -> Cluster:
        base = Path(tempfile.mkdtemp(prefix="tormortem-slurm-"))
        base.chmod(0o755)  # munged (user munge) must reach its socket below here
        return cls(base)

    def write_configs(self) -> None:
        write_configs(self)

    # -- daemons ----------------------------------------------------------------------------
    def _spawn(self, name: str, cmd: list[str], user: str | None = None) -> None:
        with open(self.run / f"{name}.out", "ab") as out:  # the child keeps its own copy
            self.procs[name] = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                                env=self.env, start_new_session=True,
                                                user=user, group=user)

    def _alive(self, name: str) -> None:
        p = self.procs[name]
        if p.poll() is not None:
            tail = (self.run / f"{name}.out").read_text(errors="replace")[-2000:]
            raise HarnessError(f"{name} exited with {p.returncode} during start-up:\n{tail}")

    def _until(self, name: str, pred: Callable[[], bool], timeout: float) -> None:
        def ok() -> bool:
            self._alive(name)
            return pred()
        wait_for(ok, f"{name} to be ready", timeout)

    def _ok(self, *cmd: str) -> bool:
        r = subprocess.run(list(cmd), capture_output=True, env=self.env, check=False)
        return r.returncode == 0

    def start(self) -> None:
        b = self.base
        t0 = time.monotonic()
        # munge: own key, own socket; foreground (-F) so that it is our child
        m = b / "munge"
        shutil.chown(m, "munge", "munge")
        key = m / "munge.key"
        key.write_bytes(os.urandom(1024))
        shutil.chown(key, "munge", "munge")
        key.chmod(0o400)
        self._spawn("munged", ["/usr/sbin/munged", "-F", f"--socket={m}/sock",
                               f"--key-file={key}", f"--pid-file={m}/munged.pid",
                               f"--log-file={m}/munged.log", f"--seed-file={m}/seed"],
                    user="munge")
        self._until("munged", lambda: self._ok("munge", "-n", "-S", f"{m}/sock"), 20)
        # MariaDB: a private data directory on its own port and socket
        db = b / "mysql"
        db.mkdir()
        shutil.chown(db, "mysql", "mysql")
        r = subprocess.run(["mariadb-install-db", "--user=mysql", f"--datadir={db}",
                            "--auth-root-authentication-method=socket", "--skip-test-db"],
                           capture_output=True, env=self.env, check=False)
        if r.returncode != 0:
            raise HarnessError(f"mariadb-install-db failed: {r.stdout[-2000:]!r}"
                               f"{r.stderr[-2000:]!r}")
        sock = b / "run" / "mysqld.sock"
        shutil.chown(b / "run", "mysql", "mysql")
        self._spawn("mariadbd", ["/usr/sbin/mariadbd", "--no-defaults", "--user=mysql",
                                 f"--datadir={db}", f"--socket={sock}",
                                 f"--port={self.ports['mysql']}", "--bind-address=127.0.0.1",
                                 f"--pid-file={b}/run/mariadbd.pid", "--skip-name-resolve",
                                 "--innodb-buffer-pool-size=64M"])
        self._until("mariadbd", lambda: self._ok("mariadb-admin", f"--socket={sock}", "ping"),
                    60)
        sql = ("CREATE USER 'slurm'@'%' IDENTIFIED BY 'slurmci'; "
               "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'%'; FLUSH PRIVILEGES;")
        if not self._ok("mariadb", f"--socket={sock}", "-e", sql):
            raise HarnessError("could not create the slurm user in MariaDB")
        dbd_log = b / "log" / "slurmdbd.log"
        self._spawn("slurmdbd", ["/usr/sbin/slurmdbd", "-D"])
        self._until("slurmdbd", lambda: dbd_log.exists() and re.search(
            r"slurmdbd version \S+ started", dbd_log.read_text(errors="replace")) is not None,
            60)
        self._spawn("slurmctld", ["/usr/sbin/slurmctld", "-D", "-i"])
        self._until("slurmctld", lambda: "is UP" in self.out("scontrol", "ping", check=False),
                    60)
        for n in self.nodes:
            (b / "spool" / n).mkdir(parents=True, exist_ok=True)
            self._spawn(f"slurmd-{n}", ["/usr/sbin/slurmd", "-D", "-N", n])
        self._until(f"slurmd-{self.nodes[-1]}", lambda: self.idle_nodes() == len(self.nodes),
                    60)
        self.startup_s = time.monotonic() - t0

    startup_s: float = 0.0

    def idle_nodes(self) -> int:
        out = self.out("sinfo", "-h", "-N", "-o", "%N %T", check=False)
        return sum(1 for line in out.splitlines() if line.split()[-1:] == ["idle"])

    def stop(self) -> list[str]:
        """Stop everything this cluster started, by PID, in reverse order. Returns notes."""
        notes: list[str] = []
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            ids = self.out("squeue", "-h", "-o", "%i", check=False).split()
            if ids:
                self.out("scancel", *ids, check=False)
                try:
                    wait_for(lambda: not self.out("squeue", "-h", "-o", "%i",
                                                  check=False).split(), "queue empty", 20)
                except HarnessError as e:
                    notes.append(str(e))
        order = [f"slurmd-{n}" for n in self.nodes] + ["slurmctld", "slurmdbd", "mariadbd",
                                                       "munged"]
        for name in order:
            p = self.procs.get(name)
            if p is None:
                continue
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    notes.append(f"{name} (pid {p.pid}) ignored SIGTERM for 15 s: SIGKILL")
                    p.kill()
                    p.wait(10)
        # job processes / slurmstepd that outlived their slurmd: ours carry MARKER
        for pid in self.marked_pids():
            notes.append(f"left-over process {pid} ({_cmdline(pid)[:80]}): SIGKILL")
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for ctl in ("memory", "freezer", "cpuset", "devices", "cpuacct", "cpu"):
            for n in self.nodes:
                _rmdir_tree(Path(f"/sys/fs/cgroup/{ctl}/slurm_{n}"))
        return notes

    def marked_pids(self) -> list[int]:
        want = f"{MARKER}={self.base}".encode()
        me = os.getpid()
        found = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit() or int(d.name) == me:
                continue
            try:
                env = (d / "environ").read_bytes()
            except OSError:
                continue
            if want in env.split(b"\0"):
                found.append(int(d.name))
        return found

    def running_daemons(self) -> list[str]:
        return [f"{n} (pid {p.pid})" for n, p in self.procs.items() if p.poll() is None]

    # -- commands ---------------------------------------------------------------------------
    def out(self, *cmd: str, check: bool = True, timeout: float = 60) -> str:
        r = subprocess.run(list(cmd), capture_output=True, text=True, env=self.env,
                           timeout=timeout, check=False)
        if check and r.returncode != 0:
            raise HarnessError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
        return r.stdout

    def record(self, action: str, job_id: str | None = None, started: float = 0.0,
               **detail: Any) -> Injection:
        inj = Injection(time.time(), action, job_id, detail, started)
        self.timeline.append(inj)
        return inj

    def sbatch(self, script: Path, name: str, *args: str, output: str | None = None,
               error: str | None = None, open_mode: str = "append",
               **exports: str | int) -> str:
        """Submit; output and error default to ``<jobdir>/slurm-%j.out/.err`` (Slurm's
        own default name), appended across requeues."""
        exp = ",".join(["ALL", *(f"{k}={v}" for k, v in exports.items())])
        out = output if output is not None else f"{self.jobdir}/slurm-%j.out"
        err = error if error is not None else (
            f"{self.jobdir}/slurm-%j.err" if output is None else None)
        io = ["-o", out] + (["-e", err] if err else [])
        jid = self.out("sbatch", "--parsable", "-J", name, f"--open-mode={open_mode}", *io,
                       f"--export={exp}", *args, str(script)).strip().split(";")[0]
        self.record("sbatch", jid, name=name, args=list(args), exports=dict(exports))
        return jid

    def job(self, jid: str) -> dict[str, str]:
        """``scontrol show job -o`` as a dict (empty once Slurm forgot the job)."""
        text = self.out("scontrol", "show", "job", "-o", jid, check=False)
        d: dict[str, str] = {}
        for k, v in re.findall(r"(\w+)=(\S*)", text):
            d.setdefault(k, v)
        return d

    def wait_running(self, jid: str, restarts: int = 0, timeout: float = 90) -> dict[str, str]:
        def ok() -> dict[str, str] | None:
            j = self.job(jid)
            return j if (j.get("JobState") == "RUNNING"
                         and int(j.get("Restarts", "0")) == restarts) else None
        return wait_for(ok, f"job {jid} running (restarts={restarts})", timeout)

    FINAL = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL",
             "BOOT_FAIL", "DEADLINE", "PREEMPTED")

    def wait_final(self, jid: str, timeout: float = 150) -> dict[str, str]:
        j = wait_for(lambda: (lambda j: j if j.get("JobState") in self.FINAL else None)(
            self.job(jid)), f"job {jid} to end", timeout, poll=0.3)
        self.record("observed_end", jid, state=j["JobState"], exit_code=j.get("ExitCode"),
                    restarts=j.get("Restarts"), end=j.get("EndTime"))
        return j

    def raw_id(self, jid: str) -> str:
        """The job's own id (an array task ``5_1`` runs as its own job id, its
        SLURM_JOB_ID, which names the trainer's truth and injection files)."""
        return self.job(jid).get("JobId", jid) if "_" in jid else jid

    def progress(self, jid: str) -> tuple[int, int]:
        """(last iteration, last saved checkpoint) of the job's current run, from the trainer's
        ground-truth file (not from the logs under test)."""
        it = ck = 0
        path = self.base / "truth" / f"{self.raw_id(jid)}.jsonl"
        if not path.exists():
            return 0, 0
        for line in path.read_text().splitlines():
            try:
                e = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line being written
            if e["event"] == "start":
                it = ck = int(e["iteration"])
            elif e["event"] == "iteration":
                it = int(e["iteration"])
            elif e["event"] == "saved":
                ck = int(e["iteration"])
        return it, ck

    def wait_iteration(self, jid: str, n: int, timeout: float = 90) -> None:
        wait_for(lambda: self.progress(jid)[0] >= n, f"job {jid} iteration {n}", timeout,
                 poll=0.1)

    # -- the training job -------------------------------------------------------------------
    def job_script(self) -> Path:
        """The batch script: launches trainer.py with srun on every node (``LAUNCH=srun``) or
        directly in the batch step (``LAUNCH=direct``: a memory-limit hit there makes the
        *job* OUT_OF_MEMORY). Parameters come from ``sbatch --export``: RUN_NAME,
        TRAIN_ITERS, plus the fixed ITER_MS / SAVE_INTERVAL."""
        bindir = self.base / "bin"
        bindir.mkdir(exist_ok=True)
        trainer = bindir / "trainer.py"
        shutil.copy(Path(__file__).with_name("trainer.py"), trainer)
        script = bindir / "train.sbatch"
        script.write_text(f"""#!/bin/bash
#SBATCH --partition=gpu
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=1
# SIGTERM (time limit, scancel, requeue) must not kill the batch shell before srun has
# forwarded it and relayed the trainer's last lines
trap 'true' TERM
CKPT={self.base}/ckpt/$RUN_NAME
ARGS="--save $CKPT --load $CKPT --train-iters $TRAIN_ITERS --iter-ms ${{ITER_MS:-250}}
      --save-interval ${{SAVE_INTERVAL:-20}} --inject-dir {self.base}/inject
      --truth {self.base}/truth"
if [ "${{LAUNCH:-srun}}" = srun ]; then
    srun --kill-on-bad-exit=1 {sys.executable} -u {trainer} $ARGS
else
    {sys.executable} -u {trainer} $ARGS
fi
""")
        script.chmod(0o755)
        return script

if __name__ == "__main__":  # manual use: python -m tests.integration.slurm_harness
    c = Cluster.create()
    c.write_configs()
    try:
        c.start()
        print(f"up in {c.startup_s:.1f} s at {c.base}", file=sys.stderr)
        print(c.out("sinfo", "-N"))
    finally:
        print(c.stop(), file=sys.stderr)
        shutil.rmtree(c.base, ignore_errors=True)
