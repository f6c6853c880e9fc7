"""How each failure category shows up to the scheduler: end state, exit code, whether Slurm
requeues the same job id or the user's wrapper submits a new job, and whether one node (and one
GPU on it) is at fault. These choices are part of the campaign (they decide job ids), so they are
drawn from the campaign's ``present`` stream, never from the cosmetic one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Presentation:
    #: (state, exit code, probability, same job id requeued?) alternatives
    outcomes: tuple[tuple[str, str, float, bool], ...]
    faulty_node: bool  #: one node is at fault (and is swapped out afterwards)
    faulty_gpu: bool  #: one GPU on that node is at fault


_FAILED = (("FAILED", "1:0", 1.0, False),)

PRESENTATION: dict[str, Presentation] = {
    "gpu_hardware": Presentation(_FAILED, True, True),
    "gpu_memory": Presentation(_FAILED, True, True),
    "gpu_driver": Presentation(_FAILED, True, True),
    "nvlink": Presentation(_FAILED, True, True),
    "network": Presentation(_FAILED, True, False),
    "nccl_error": Presentation(_FAILED, False, False),
    "nccl_timeout": Presentation(_FAILED, False, False),
    # Slurm requeues a batch job whose node failed when --requeue is set (same id); otherwise
    # the job ends NODE_FAIL and the user's wrapper submits a new one.
    "node_failure": Presentation((("NODE_FAIL", "0:0", 0.5, True),
                                  ("NODE_FAIL", "0:0", 0.5, False)), True, False),
    "storage": Presentation(_FAILED, True, False),
    "oom_host": Presentation((("OUT_OF_MEMORY", "0:125", 1.0, False),), True, False),
    "oom_gpu": Presentation(_FAILED, True, True),
    "user_code": Presentation(_FAILED, False, False),
    # host maintenance: the job is preempted (PreemptMode=REQUEUE) or an operator runs
    # `scontrol requeue` before draining the node; both keep the job id.
    "preemption": Presentation((("PREEMPTED", "0:0", 0.5, True),
                                ("REQUEUED", "0:0", 0.5, True)), True, False),
    "scheduler": Presentation((("TIMEOUT", "0:0", 0.5, False),
                               ("CANCELLED", "0:15", 0.5, False)), False, False),
    "unknown": Presentation(_FAILED, False, False),
}


def choose(category: str, rng: np.random.Generator) -> tuple[str, str, bool]:
    """(state, exit code, requeued with the same job id) for one interruption."""
    outs = PRESENTATION[category].outcomes
    if len(outs) == 1:
        s, e, _, rq = outs[0]
        return s, e, rq
    p = np.array([o[2] for o in outs])
    k = int(rng.choice(len(outs), p=p / p.sum()))
    s, e, _, rq = outs[k]
    return s, e, rq
