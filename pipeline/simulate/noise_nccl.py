"""NCCL_DEBUG=INFO start-up output of every rank of a job, as NCCL 2.21.5 prints it.

Used by ``simulate --noise realistic`` (each attempt's job output begins with it) and by the
ingest benchmark's ``nccl-info``, ``kubectl-stamped`` and ``fleet-dir`` mixes.

Envelope (src/debug.cc, 2.4-2.25): ``"%s:%d:%d [%d] NCCL INFO "`` = host, pid, tid, CUDA device,
then the message. Messages, in the order a rank prints them, with the NVIDIA/nccl v2.21.5-1
source line of each (default ``NCCL_DEBUG_SUBSYS`` = INIT,BOOTSTRAP,ENV):

* once per process: ``NCCL version 2.21.5+cuda12.4`` (rank 0 only, init.cc:479 ``showVersion``),
  ``Bootstrap : Using%s`` (bootstrap.cc:56), ``cudaDriverVersion %d`` (misc/cudawrap.cc:185),
  ``NET/Plugin: Using internal network plugin.`` (net.cc:422), ``NET/IB : Using%s %s; OOB %s:%s``
  with `` [%d]%s:%d/%s`` per HCA (transport/net_ib.cc:538), ``Using non-device net plugin
  version %d`` (net.cc:518), ``Using network %s`` (init.cc:322);
* per communicator: ``ncclCommInitRank comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx
  commId 0x%llx - Init START`` (init.cc:1544), ``Setting affinity for GPU %d to %s``
  (graph/topo.cc:936), ``NVLS multicast support is not available on dev %d``
  (transport/nvls.cc:258), ``comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d
  MNNVL %d`` (init.cc:1160), on rank 0 ``Channel %02d/%02d : `` + `` %3d`` per rank, at most 20
  (graph/rings.cc:35 ``dumpLine``), ``Trees`` + `` [%d] %d/%d/%d->%d->%d`` per channel
  (init.cc:1224), ``P2P Chunksize set to %d`` (init.cc:578), per channel the ring connection:
  ``Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/CUMEM/read`` inside a node
  (transport/p2p.cc:371), ``Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/IB/%d/GDRDMA`` and
  ``... [receive] via NET/IB/%d/GDRDMA`` across nodes (transport/net.cc:195/235), ``Connected all
  rings`` (init.cc:1264), ``Connected all trees`` (init.cc:1274), ``TUNER/Plugin: Using internal
  tuner plugin.`` (misc/tuner.cc:154), ``threadThresholds %ld/%ld/%ld | %ld/%ld/%ld | %ld | %ld``
  (graph/tuning.cc:398), ``%d coll channels, %d collnet channels, %d nvls channels, %d p2p
  channels, %d p2p channels per peer`` (init.cc:1297), ``ncclCommInitRank ... - Init COMPLETE``
  (init.cc:1573).

The ranks of a node print at the same time, so their lines interleave (round robin here); nodes
follow one another. None of these lines is a signal (healthy INFO: ``signal:false`` in
tests/data/formats/nccl.jsonl).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

VERSION = "2.21.5+cuda12.4"
BUS = ("18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000")
AFFINITY = ("ffffffff,00000000,ffffffff", "ff,ffff0000,00ffffff")


@dataclass
class Process:
    """One rank's process: where its lines come from."""

    host: str
    pid: int
    tid: int  #: the thread that runs the communicator init
    dev: int  #: CUDA device = local rank
    ip: str


def processes(hosts: list[str], gpn: int, rng: np.random.Generator) -> list[Process]:
    """The processes of a job on ``hosts`` (``gpn`` ranks each, rank = node index x gpn +
    local rank)."""
    out = []
    for i, h in enumerate(hosts):
        base = int(rng.integers(20_000, 400_000))
        ip = f"10.{1 + i // 65_000 % 200}.{i // 250 % 256}.{i % 250 + 2}"
        for d in range(gpn):
            pid = base + 3 * d
            out.append(Process(h, pid, pid + 190 + int(rng.integers(0, 40)), d, ip))
    return out


def process_lines(p: Process, rank: int) -> list[str]:
    """The once-per-process lines (before the first communicator)."""
    pre = f"{p.host}:{p.pid}:{p.pid} [{p.dev}] NCCL INFO "
    hcas = "".join(f" [{k}]mlx5_{k}:1/IB" for k in range(8))
    first = [f"{pre}NCCL version {VERSION}"] if rank == 0 else []
    return [
        *first,
        f"{pre}Bootstrap : Using ib0:{p.ip}<0>",
        f"{pre}cudaDriverVersion 12040",
        f"{pre}NET/Plugin: Using internal network plugin.",
        f"{pre}NET/IB : Using{hcas} [RO]; OOB ib0:{p.ip}<0>",
        f"{pre}Using non-device net plugin version 0",
        f"{pre}Using network IB",
    ]


def comm_lines(p: Process, rank: int, nranks: int, gpn: int, comm: str, comm_id: str,
               channels: int = 16) -> list[str]:
    """One rank's lines for one communicator of ``nranks`` ranks (rank = its rank in it)."""
    pre = f"{p.host}:{p.pid}:{p.tid} [{p.dev}] NCCL INFO "
    local, nodes = rank % gpn, max(1, -(-nranks // gpn))
    nxt, prv = (rank + 1) % nranks, (rank - 1) % nranks
    bus = BUS[p.dev % 8]
    out = [f"{pre}ncclCommInitRank comm {comm} rank {rank} nranks {nranks} cudaDev {p.dev} "
           f"nvmlDev {p.dev} busId {bus} commId {comm_id} - Init START",
           f"{pre}Setting affinity for GPU {p.dev} to {AFFINITY[p.dev * 2 // gpn % 2]}",
           f"{pre}NVLS multicast support is not available on dev {p.dev}",
           f"{pre}comm {comm} rank {rank} nRanks {nranks} nNodes {nodes} localRanks {gpn} "
           f"localRank {local} MNNVL 0"]
    if rank == 0:
        ring = "".join(f" {r:3d}" for r in range(min(nranks, 20)))
        out += [f"{pre}Channel {c:02d}/{channels:02d} :{ring}" for c in range(channels)]
    up = rank - 1 if local else (rank - gpn if rank >= gpn else -1)
    down = rank + 1 if local < gpn - 1 and rank + 1 < nranks else -1
    out.append(f"{pre}Trees" + "".join(f" [{c}] {down}/-1/-1->{rank}->{up}"
                                        for c in range(channels)))
    out.append(f"{pre}P2P Chunksize set to 524288")
    same_next, same_prev = nxt // gpn == rank // gpn, prv // gpn == rank // gpn
    for c in range(channels):
        nic = (p.dev + c) % 8
        if not same_prev:
            out.append(f"{pre}Channel {c:02d}/0 : {prv}[{prv % gpn}] -> {rank}[{p.dev}] "
                       f"[receive] via NET/IB/{nic}/GDRDMA")
        if same_next:
            out.append(f"{pre}Channel {c:02d}/0 : {rank}[{p.dev}] -> {nxt}[{nxt % gpn}] via "
                       "P2P/CUMEM/read")
        else:
            out.append(f"{pre}Channel {c:02d}/0 : {rank}[{p.dev}] -> {nxt}[{nxt % gpn}] [send] "
                       f"via NET/IB/{nic}/GDRDMA")
    out += [f"{pre}Connected all rings", f"{pre}Connected all trees",
            f"{pre}TUNER/Plugin: Using internal tuner plugin.",
            f"{pre}threadThresholds 8/8/64 | {8 * nranks}/8/64 | 512 | 512",
            f"{pre}{channels} coll channels, {channels} collnet channels, 0 nvls channels, "
            f"{channels} p2p channels, 2 p2p channels per peer",
            f"{pre}ncclCommInitRank comm {comm} rank {rank} nranks {nranks} cudaDev {p.dev} "
            f"nvmlDev {p.dev} busId {bus} commId {comm_id} - Init COMPLETE"]
    return out


def job_startup(hosts: list[str], gpn: int, rng: np.random.Generator,
                channels: int = 16) -> Iterator[list[str]]:
    """The start-up output of a job on ``hosts``: per node (in order), its ranks' process
    lines and world-communicator lines, interleaved round robin."""
    procs = processes(hosts, gpn, rng)
    nranks = len(procs)
    comm_id = f"0x{int(rng.integers(0, 1 << 62)):x}"
    for i in range(len(hosts)):
        per_rank = []
        for r in range(i * gpn, (i + 1) * gpn):
            p = procs[r]
            comm = f"0x{int(rng.integers(0x550000000000, 0x560000000000)):x}"
            per_rank.append(process_lines(p, r)
                            + comm_lines(p, r, nranks, gpn, comm, comm_id, channels))
        yield interleave(per_rank)


def interleave(blocks: list[list[str]]) -> list[str]:
    out: list[str] = []
    longest = max((len(b) for b in blocks), default=0)
    for k in range(longest):
        out += [b[k] for b in blocks if k < len(b)]
    return out
