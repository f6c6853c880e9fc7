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


# Kernel messages of healthy nodes that hold a broad anchor of the kernel recognisers (nvme,
# EXT4-fs, Lustre:, Port module event, health) and no row: in a kernel log (where an enveloped
# line is noise by default) they stay out of Python.
KERNEL_HEALTHY = [
    # fs/ext4/super.c (5.15) ext4_fill_super: ext4_msg(sb, KERN_INFO, "mounted filesystem
    # with%s. Opts: %.*s%s. Quota mode: %s.") through ext4_msg's "EXT4-fs (%s): %pV"
    "EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Opts: (null). Quota "
    "mode: none.",
    # drivers/nvme/host/pci.c nvme_probe "pci function %s", nvme_setup_io_queues
    # "%d/%d/%d default/read/poll queues", nvme_timeout "I/O %d QID %d timeout, completion
    # polled" (the command completed: no error)
    "nvme nvme0: pci function 0000:c1:00.0",
    "nvme nvme0: 64/0/0 default/read/poll queues",
    "nvme nvme0: I/O 123 QID 4 timeout, completion polled",
    # lustre/ptlrpc/import.c: LCONSOLE_INFO("%s: Connection restored to %s (at %s)\n")
    "Lustre: lustre-OST0003-osc-ffff8a0e1c2d3000: Connection restored to 10.0.0.3@o2ib (at "
    "10.0.0.3@o2ib)",
    # mlx5 events.c port_module_event: "Port module event: module %u, %s" (mlx5_core_info's
    # "%s:%d:(pid %d): " head); health.c mlx5_trigger_health_work
    "mlx5_core 0000:3b:00.0: mlx5_port_module_event:1135:(pid 0): Port module event: module "
    "0, Cable plugged",
    "mlx5_core 0000:3b:00.0: mlx5_trigger_health_work:756:(pid 0): new health works are not "
    "permitted at this stage",
]
# ... and lines of the same anchors that are events (kernel_host.py, kernel_pci.py cite them)
KERNEL_EVENTS = [
    "nvme nvme0: I/O 258 (I/O Cmd) QID 4 timeout, aborting",
    "nvme nvme0: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0xffff",
    "EXT4-fs error (device nvme0n1p2): ext4_find_entry:1455: inode #2: comm ls: reading "
    "directory lblock 0",
    "EXT4-fs (nvme0n1p2): Remounting filesystem read-only",
    "Lustre: 12345:0:(client.c:2289:ptlrpc_expire_one_request()) @@@ Request sent has timed "
    "out for slow reply: [sent 1714521600/real 1714521600]",
    "Lustre: lustre-MDT0000-mdc-ffff8a0e1c2d3000: Connection to lustre-MDT0000 (at "
    "10.0.0.2@o2ib) was lost; in progress operations using this service will wait for "
    "recovery to complete",
    "mlx5_core 0000:3b:00.0: mlx5_port_module_event:1135:(pid 0): Port module event: module "
    "0, Cable unplugged",
    "mlx5_core 0000:3b:00.0: Port module event[error]: module 0, Cable error, High Temperature",
    "mlx5_core 0000:3b:00.0: print_health_info:424:(pid 0): PCI slot is unavailable",
    "mlx5_core 0000:3b:00.0: poll_health:800:(pid 0): device's health compromised - reached "
    "miss count",
    # mlx5 before 5.16 (cmd.c mlx5_cmd_check) and eq.c's CQ error event, pasted in
    # charmplusplus/charm#2532 and ofiwg/libfabric#4525 (tests/parsers/test_pasted_round5.py)
    "mlx5_core 0000:04:00.0: mlx5_cmd_check:795:(pid 9993): RTR2RTS_QP(0x504) op_mod(0x0) "
    "failed, status bad parameter(0x3), syndrome (0x35f4b4)",
    "mlx5_core 0000:02:00.0: mlx5_eq_int:556:(pid 0): CQ error on CQN 0x40a, syndrom 0x1",
]


def _syslog(messages: list[str]) -> list[str]:
    return [f"May  1 00:00:{i % 60:02d} node{i % 7:03d} kernel: [ {100 + i}.000001] {m}"
            for i, m in enumerate(messages)]


def test_kernel_broad_anchors_checked() -> None:
    """Without noise claims (the kernel dialect's enveloped lines) the healthy lines are no
    candidates and the event lines are; with them (any other dialect) all are, as before."""
    free, claims = global_prefilter(claims=False), global_prefilter(claims=True)
    healthy, events = pl.Series(_syslog(KERNEL_HEALTHY)), pl.Series(_syslog(KERNEL_EVENTS))
    assert not free.mask_np(healthy).any()
    assert free.mask_np(events).all()
    assert claims.mask_np(healthy).all() and claims.mask_np(events).all()


@pytest.mark.parametrize("source", ["kernel", "-"])
def test_kernel_rows_the_same_with_the_prefilter_off(tmp_path: Path, source: str) -> None:
    both = KERNEL_HEALTHY + KERNEL_EVENTS
    lines = _syslog([both[i % len(both)] for i in range(10 * len(both))])
    f = tmp_path / "syslog"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    off, on = _parse_all([str(f)], source, "0"), _parse_all([str(f)], source, "1")
    assert off == on
    events = off[0][3]  # type: ignore[index]
    assert isinstance(events, int) and events >= 10 * len(KERNEL_EVENTS)
