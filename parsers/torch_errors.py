"""What an error text means: shared by ``TorchDistMatcher`` for standalone lines, a Python
traceback's final line, and a C++ ``what():`` line.

Sources of the wordings (pytorch/pytorch unless noted):

* ``CUDA error: <cudaGetErrorString>`` -- c10/cuda/CUDAException.h (C10_CUDA_CHECK).
* ``CUDA out of memory. Tried to allocate 2.00 GiB (GPU 3; 79.15 GiB total capacity; ...)``
  (<= 2.0), ``... Tried to allocate 496.00 MiB. GPU 0 has a total capacty of ...`` (2.1,
  sic), ``... GPU 0 has a total capacity of ...`` (2.2+) -- c10/cuda/CUDACachingAllocator.cpp.
* ``NCCL error in: <file>:<line>, <ncclGetErrorString>, NCCL version X`` (C10D_NCCL_CHECK) and
  ``NCCL error: <ncclGetErrorString>, NCCL version X`` (watchdog) -- torch/csrc/distributed/c10d/
  NCCLUtils.hpp; the error strings are NCCL's ``ncclGetErrorString`` (src/init.cc), old and
  new (``(run with NCCL_DEBUG=INFO for details)`` suffixes) alike.
* ``NCCL communicator was aborted on rank N. Original reason for failure was: ...`` --
  NCCLUtils.cpp ``NCCLComm::getNcclComm``.
* ``DistNetworkError`` / ``DistStoreError`` (torch/distributed), ``Rendezvous*Error``
  (torch/distributed/elastic/rendezvous/api.py), c10d TCPStore socket messages
  (torch/csrc/distributed/c10d/socket.cpp).
* Megatron-LM ``found NaN in local grad norm`` (megatron/core/distributed/
  param_and_grad_buffer.py: ``Rank {r}: found NaN in local grad norm in backward pass before
  data-parallel communication collective. Device: {d}, node: {host}``; newer rerun machine:
  ``found NaN in local grad norm for bucket #{i} ...``).
"""

from __future__ import annotations

import re
from typing import Any

_CUDA_ERROR = re.compile(r"CUDA error: (?P<err>[^\n]+?)\s*$")
_OOM_GPU = re.compile(r"\(GPU (\d+);|GPU (\d+) has a total capac")
_NCCL_ERROR = re.compile(
    r"NCCL error(?: in: [^,\s]+)?[:,] (?P<err>.+?)(?:, NCCL version (?P<ver>\S+))?\s*$")
NCCL_NAME_LINE = re.compile(r"^(?P<name>ncclUnhandledCudaError|ncclSystemError|ncclInternalError"
                            r"|ncclInvalidArgument|ncclInvalidUsage|ncclRemoteError"
                            r"|ncclInProgress|ncclTimeout): ")
#: ncclGetErrorString prefixes -> result names (src/init.cc, all versions)
_NCCL_STRINGS = (
    ("unhandled cuda error", "ncclUnhandledCudaError"),
    ("unhandled system error", "ncclSystemError"),
    ("internal error", "ncclInternalError"),
    ("invalid argument", "ncclInvalidArgument"),
    ("invalid usage", "ncclInvalidUsage"),
    ("remote process exited or there was a network error", "ncclRemoteError"),
    ("NCCL operation in progress", "ncclInProgress"),
    ("timeout", "ncclTimeout"),
)
_ABORTED = re.compile(r"NCCL communicator was aborted on rank (\d+)")
_RDZV = re.compile(r"\b(DistNetworkError|DistStoreError|Rendezvous(?:Timeout|Connection|Closed|"
                   r"State|Graceful\w*)?Error)\b")
RDZV = _RDZV  #: (parsers/torch_dist.py confirms its keyword lines with it)
_NAN = re.compile(r"(?:Rank (?P<rank>\d+): )?found NaN in local grad norm"
                  r"(?:.*?Device: (?P<dev>\d+), node: (?P<node>[^\s,)]+))?")


def nccl_code(err: str) -> str | None:
    """ncclGetErrorString text -> ncclResult_t name (None if not one of them)."""
    for prefix, name in _NCCL_STRINGS:
        if err.startswith(prefix):
            return name
    return None


def classify_error(text: str) -> dict[str, Any] | None:
    """Fields (kind, code, device, rank, host, value) for an error text, or None.

    Order: OOM, NCCL, CUDA, NaN, rendezvous -- the most specific first (a CUDA OOM is also a
    "CUDA error: out of memory"; an NCCL error may mention CUDA)."""
    if "out of memory" in text and "CUDA" in text:
        out: dict[str, Any] = {"kind": "cuda_oom", "code": "CUDA out of memory"}
        g = _OOM_GPU.search(text)
        if g:
            out["device"] = g.group(1) or g.group(2)
        return out
    if "NCCL error" in text:
        m = _NCCL_ERROR.search(text)
        if m:
            return {"kind": "nccl_error", "code": nccl_code(m.group("err"))}
    if "NCCL communicator was aborted" in text:
        a = _ABORTED.search(text)
        return {"kind": "nccl_error", "code": "aborted"} if a else None
    if "CUDA error: " in text:
        c = _CUDA_ERROR.search(text)
        if c:
            return {"kind": "cuda_error", "code": c.group("err").rstrip(".")}
    n = NCCL_NAME_LINE.match(text)
    if n:
        return {"kind": "nccl_error", "code": n.group("name")}
    if "found NaN in local grad norm" in text:
        f = _NAN.search(text)
        out = {"kind": "nan_loss", "code": "nan_grad_norm"}
        if f and f.group("rank"):
            out["rank"] = int(f.group("rank"))
        if f and f.group("dev"):
            out["device"] = f.group("dev")
            out["host"] = f.group("node")
        return out
    if "Error" in text:
        r = _RDZV.search(text)
        if r:
            return {"kind": "rendezvous_error", "code": r.group(1)}
    if "server socket has failed to listen" in text:
        return {"kind": "rendezvous_error", "code": "server_listen_failed"}
    if "The client socket has timed out" in text:
        return {"kind": "rendezvous_error", "code": "client_timeout"}
    if "Timed out initializing process group in store based barrier" in text:
        return {"kind": "rendezvous_error", "code": "store_barrier_timeout"}
    return None
