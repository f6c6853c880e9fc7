"""Signal lines as users paste them: nvidia-smi after an Xid 79, old PyTorch NCCL errors.

nvidia-smi prints ``Unable to determine the device handle for GPU<bus id>: <NVML error>``
(with or without the index and the space) when NVML cannot open a GPU that is still on the
PCI bus list; forum threads and issue reports carry all the forms below (NVIDIA developer
forums thread 231710 and others). A health check or an epilogue that runs nvidia-smi puts
it in a job's or a node's log: it is ``gpu_lost`` (category gpu_hardware), on that GPU.
"""

from __future__ import annotations

from parsers.joblog import JobLogParser
from parsers.text import TextParser
from tests.parsers.util import parse

LINES = [
    ("Unable to determine the device handle for GPU0000:25:00.0: Unknown Error", "0000:25:00.0"),
    ("Unable to determine the device handle for GPU3: 0000:5F:00.0: Unknown Error",
     "0000:5F:00.0"),
    ("Unable to determine the device handle for GPU2: Unknown Error", None),
    ("Unable to determine the device handle for gpu 0000:3B:00.0: GPU is lost.  Reboot the "
     "system to recover this GPU", "0000:3B:00.0"),
]


def test_device_handle_lines_are_a_lost_gpu() -> None:
    text = "".join(t + "\n" for t, _ in LINES)
    for cls, name in ((TextParser, "paste.txt"), (JobLogParser, "slurm-77.out")):
        events, _, acct = parse(cls, text, name)
        assert acct.events == len(LINES), cls
        assert [(e["kind"], e["code"], e["device"]) for e in events] == [
            ("gpu_lost", "nvidia_smi", dev) for _, dev in LINES], cls


def test_old_torch_nccl_errors_are_nccl_errors() -> None:
    """torch.cuda.nccl's ``NCCL Error <n>: <ncclGetErrorString>`` (torch/csrc/cuda/nccl.cpp
    throw_nccl_error; DataParallel and older c10d print it), pasted in many threads as
    ``RuntimeError: NCCL Error 2: unhandled system error``."""
    text = ("RuntimeError: NCCL Error 2: unhandled system error\n"
            "RuntimeError: NCCL Error 6: remote process exited or there was a network error\n")
    for cls, name in ((TextParser, "paste.txt"), (JobLogParser, "slurm-77.out")):
        events, _, _ = parse(cls, text, name)
        assert [(e["kind"], e["code"]) for e in events if e["kind"] == "nccl_error"] == [
            ("nccl_error", "unhandled system error"),
            ("nccl_error", "remote process exited or there was a network error")], cls
