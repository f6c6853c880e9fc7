"""Job output is recognised by its lines, whatever the file is called.

A probe named ``torchrun-3.out`` (NeMo 2's progress lines, kubectl stamps) was read as text of
no known layout, so ``analyze`` said "no training progress lines" of a file full of them:
the sniffer knew Megatron's, DeepSpeed's and HF's banners but not Lightning's, NeMo's, tqdm's
or PyTorch's own lines. Every progress, checkpoint and PyTorch-distributed group of the
format corpus (tests/data/formats: real lines, each group citing the code that prints it)
must be sniffed as job output from its lines alone, under names that carry no job id.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parsers import registry
from parsers.joblog import JobLogParser

FORMATS = Path(__file__).resolve().parents[1] / "data" / "formats"
GROUPS = [json.loads(line) for fam in ("progress", "checkpoint", "torch")
          for line in (FORMATS / f"{fam}.jsonl").read_text().splitlines()]
NAMES = ["/logs/train.log", "/logs/torchrun-3.out", "/runs/rank0/stdout.txt"]


@pytest.mark.parametrize("name", NAMES)
def test_every_training_group_is_job_output(name: str) -> None:
    wrong = []
    for g in GROUPS:
        head = "\n".join(ln["text"] for ln in g["lines"]) + "\n"
        cls, score = registry.detect(head, name)
        if cls is not JobLogParser:
            wrong.append((g["group"], cls.name if cls else None, score))
    assert not wrong, f"{len(wrong)} of {len(GROUPS)} groups: {wrong[:10]}"


def test_node_logs_are_not_claimed() -> None:
    """Kernel and NVIDIA driver groups (dmesg, journald, rsyslog) keep their own parsers: the
    markers are text only training output holds."""
    claimed = []
    for fam in ("kernel", "nvidia"):
        for line in (FORMATS / f"{fam}.jsonl").read_text().splitlines():
            g = json.loads(line)
            head = "\n".join(ln["text"] for ln in g["lines"]) + "\n"
            if registry.detect(head, "/logs/node.log")[0] is JobLogParser:
                claimed.append(g["group"])
    assert not claimed, claimed
