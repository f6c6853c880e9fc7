"""Is a file job output? Markers of the training frameworks and launchers in its head."""

from __future__ import annotations

#: text that only training output holds, one tuple per family (Megatron-LM, DeepSpeed, HF
#: Trainer / accelerate / tqdm, Slurm's step messages, NCCL, PyTorch distributed, Lightning /
#: NeMo): each family found in a file's first bytes makes it job output more surely. Every
#: progress, checkpoint and PyTorch group of tests/data/formats is sniffed as job output
#: from its lines alone (tests/parsers/test_joblog_sniff.py). ``_FAR``: the markers also
#: looked for past the first ``_NEAR`` characters of the head (a search costs ~50 us per
#: 64 KiB, and a syslog file no other parser is sure of pays for each).
_FAR = (
    ("elapsed time per iteration (ms)", "> building ", "successfully saved checkpoint",
     "------------------------ arguments ------------------------"),
    ("[logging.py:", "[engine.py:", "RunningAvgSamplesPerSec=", "[Rank 0] step="),
    ("***** Running training *****", "{'loss': ", "[INFO|trainer.py:"),
    ("srun: error: ", "slurmstepd: error: ", "srun: Job step aborted"),
    ("NCCL INFO", "NCCL WARN", "NCCL version "),
    ("[default0]:", "[rank0]:", "torch.distributed.elastic", "Traceback (most recent call last)"),
)
_MARKERS = (
    (*_FAR[0], "| consumed samples:", "loading checkpoint from ",
     "loading distributed checkpoint from ", "will not load any checkpoints",
     "(min, max) time across ranks (ms):"),
    (*_FAR[1], "[deepspeed] ", "[deepscale] ", "OVERFLOW! Rank ", "iter time (s):"),
    (*_FAR[2], "it/s]", "s/it]", "it/s, ", "s/it, ", "Saving model checkpoint to ",
     "Continuing training from ", "Loading model from ", "accelerate.accelerator",
     "accelerate.checkpointing", "Resumed from checkpoint", "Training finished"),
    _FAR[3],
    _FAR[4],
    (*_FAR[5], "ProcessGroupNCCL", "torch.distributed.run", "torch/distributed/run.py",
     "OMP_NUM_THREADS", "[c10d] ", "/site-packages/torch/"),
    ("[NeMo I ", "[NeMo W ", "[NeMo E ", "Training epoch ", "reduced_train_loss",
     "global_step=", ", global step ", "LOCAL_RANK: ", "Restoring states from the checkpoint",
     "Restored all states from"),
)
_NEAR = 16_384


def score(head: str, job_hint: str | None, path: str) -> int:
    """55 + 10 per marker family found (at most 95; 5 more when the name carries a job id);
    35 for a ``.out``/``.err`` file named after a job with no marker; else 0."""
    near = head[:_NEAR]
    families = sum(1 for fam in _MARKERS if any(m in near for m in fam))
    if not families and len(head) > _NEAR:  # (overlap: a marker across the cut)
        far = head[_NEAR - 64:]
        families = sum(1 for fam in _FAR if any(m in far for m in fam))
    if families:
        return min(95, 55 + 10 * families + (5 if job_hint else 0))
    return 35 if job_hint and path.endswith((".out", ".err")) else 0
