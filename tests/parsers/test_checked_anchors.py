"""Broad anchors that must be confirmed: ``torch`` (TorchDistMatcher) and ``heckpoint``
(MegatronMatcher, DeepSpeedMatcher) make a line a candidate only with a pattern of a rule that
can claim it (``CHECKED``, parsers/relax.py). torch's own warnings, printed through Python's
``warnings`` module (``{path}:{line}: {Category}: {message}``) with a path inside the torch
package, stay out of Python; every line those recognisers claim still gets in."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from parsers.message import global_prefilter
from tests.parsers.test_prefilter import _parse_all

# torch/utils/checkpoint.py (PyTorch 2.1-2.3), as users pasted them in public threads (a
# conda env, a Debian dist-packages, behind torchrun's [rankN]: and kubectl's RFC 3339 stamp)
_REENTRANT = ("UserWarning: torch.utils.checkpoint: please pass in use_reentrant=True or "
              "use_reentrant=False explicitly. The default value of use_reentrant will be "
              "updated to be False in the future. To maintain current behavior, pass "
              "use_reentrant=True. It is recommended that you use use_reentrant=False. Refer "
              "to docs for more details on the differences between the two variants.")
WARNINGS = [
    "/blue/cap4773/z.liu1/conda/lib/python3.11/site-packages/torch/utils/checkpoint.py:429: "
    + _REENTRANT,
    "/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:429: " + _REENTRANT,
    "[rank3]:/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:464: "
    + _REENTRANT,
    "2024-05-01T00:10:21.835150Z /usr/local/lib/python3.10/dist-packages/torch/utils/"
    "checkpoint.py:429: " + _REENTRANT,
    # torch/distributed/fsdp/_init_utils.py (2.1)
    "/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/_init_utils.py:440: "
    "UserWarning: FSDP is switching to use `NO_SHARD` instead of ShardingStrategy.FULL_SHARD "
    "since the world size is 1.",
    "  warnings.warn(",
]
# lines the three recognisers claim whose only broad anchors are these (tests of each cite
# the printing code): Megatron's checkpointing.py, DeepSpeed's torch checkpoint engine,
# torchrun's banner
CLAIMED = [
    "saving checkpoint at iteration     100 to /ckpt",
    " loading release checkpoint from /ckpt/gpt2-345m",
    "2024-05-01T00:10:21.835150Z   successfully saved checkpoint at iteration     100 to /ckpt",
    "[2023-08-02 00:41:17,937] [INFO] [logging.py:96:log_dist] [Rank 0] [Torch] Checkpoint "
    "global_step100 is ready now!",
    "WARNING:torch.distributed.run:",
    "[rank0]: torch.distributed.DistNetworkError: Connection reset by peer",
]


@pytest.mark.parametrize("claims", [True, False])
def test_torch_warnings_stay_out_and_claimed_lines_get_in(claims: bool) -> None:
    pf = global_prefilter(claims=claims)
    assert not pf.mask_np(pl.Series(WARNINGS)).any()
    assert pf.mask_np(pl.Series(CLAIMED)).all()


@pytest.mark.parametrize("source", ["joblog", "text", "-"])
def test_the_rows_are_the_same_with_the_prefilter_off(tmp_path: Path, source: str) -> None:
    """A job log of iterations, torch warnings and the claimed lines: every row, count and
    unparsed sample the same with the prefilter on and off."""
    body = []
    for i in range(40):
        body += [f" iteration {i + 1:8d}/    1000 | consumed samples: {i * 8:12d} | elapsed "
                 "time per iteration (ms): 812.3 | learning rate: 3.0E-04 |",
                 WARNINGS[i % len(WARNINGS)], CLAIMED[i % len(CLAIMED)]]
    f = tmp_path / "slurm-77.out"
    f.write_text("\n".join(body) + "\n", encoding="utf-8")
    off, on = _parse_all([str(f)], source, "0"), _parse_all([str(f)], source, "1")
    assert off == on
    events = off[0][3]  # type: ignore[index]
    assert isinstance(events, int) and events >= 40 + 3 * 10
