"""Kernel lines that start with a device name and a colon (the driver's netdev/disk prefix)
are the message, not a pdsh host label; a pdsh label before a node's line still names it."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import pytest

from parsers.reader import InputFile
from pipeline.ingest.explain import explain_files

CASES = [
    # Linux drivers/infiniband/ulp/ipoib/ipoib_main.c ipoib_timeout(): ipoib_warn(priv,
    # "transmit timeout: latency %d msecs\n"), ipoib_warn printing "%s: " with the netdev name
    ("ib0: transmit timeout: latency 10000 msecs", "ib_error", "tx_timeout", None),
    ("Mar  3 10:00:00 gpu01 kernel: [87512.221094] ib0.8002: transmit timeout: latency 9164 "
     "msecs", "ib_error", "tx_timeout", "gpu01"),
    # pdsh -w node0025 dmesg (pdsh src/pdsh/dsh.c: "host: " before each line); NVIDIA
    # open-gpu-kernel-modules nv.c Xid line
    ("node0025: [   12.300000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has "
     "fallen off the bus.", "xid", "79", "node0025"),
]


@pytest.mark.parametrize(("line", "kind", "code", "host"), CASES)
def test_device_name_is_the_message(tmp_path: Path, line: str, kind: str, code: str,
                                    host: str | None) -> None:
    f = tmp_path / "kern.log"
    f.write_text(line + "\n")
    rows = list(explain_files([InputFile(f, "kern.log")], tz=UTC, year=2024))
    assert [(r["kind"], r["code"]) for r in rows] == [(kind, code)]
    if host:
        assert rows[0]["host"] == host
