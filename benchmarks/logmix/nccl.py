"""nccl-info: NCCL_DEBUG=INFO output of a 16,384-rank job (2,048 nodes x 8 GPUs).

One ``slurm-<id>.out`` as srun merges every rank's output: at each start of the job (it is
requeued until the file has its size) every rank prints its process lines and the lines of three
communicators, the world and, as Megatron-LM creates them, its tensor-parallel group (the 8 GPUs
of a node) and its data-parallel group (one rank per node); then a few iteration lines and, at
the end of each run, a watchdog timeout. Line formats: ``pipeline.simulate.noise_nccl`` (NCCL
2.21.5, with the source line of every message) and ``logmix.joblog`` (Megatron, torch).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from logmix.common import Sized
from logmix.joblog import OTHER, _iter_line
from pipeline.simulate.noise_nccl import comm_lines, interleave, process_lines, processes

NODES, GPN = 2048, 8


def nccl_info(out: Path, size: int, seed: int) -> tuple[list[Path], list[Path]]:
    rng = np.random.default_rng(seed)
    path = out / "slurm-5001.out"
    hosts = [f"node{i:04d}" for i in range(NODES)]
    it = 0
    with Sized(path, size) as w:
        while not w.full:
            procs = processes(hosts, GPN, rng)
            world = f"0x{int(rng.integers(0, 1 << 62)):x}"
            tp_ids = [f"0x{int(rng.integers(0, 1 << 62)):x}" for _ in range(NODES)]
            dp_ids = [f"0x{int(rng.integers(0, 1 << 62)):x}" for _ in range(GPN)]
            for i in range(NODES):
                blocks = []
                for local in range(GPN):
                    r = i * GPN + local
                    p = procs[r]

                    def comm() -> str:
                        return f"0x{int(rng.integers(0x550000000000, 0x560000000000)):x}"

                    blocks.append(process_lines(p, r)
                                  + comm_lines(p, r, NODES * GPN, GPN, comm(), world)
                                  + comm_lines(p, local, GPN, GPN, comm(), tp_ids[i])
                                  + comm_lines(p, i, NODES, 1, comm(), dp_ids[local]))
                w.write(interleave(blocks))
                if w.full:
                    break
            lines = []
            for _ in range(200):
                it += 1
                lines.append(_iter_line(it)[:-1])
            w.write([*lines, OTHER[4][:-1]])
    return [path], [path]
