"""The prefix layer's parallel-shell label (parsers/prefix.py): ``pdsh -w nodes dmesg`` and
``pdsh ... cat /var/log/syslog`` put each remote line behind ``host: `` (pdsh src/pdsh/dsh.c,
``out("%S: %s", a->host, buf)`` unless ``-N``). The label is the line's host when the line
names none itself; a syslog line's own host field wins (the label may be a log server's)."""

from __future__ import annotations

from datetime import UTC

from parsers.driver import parse_text
from parsers.prefix import peel
from parsers.text import TextParser
from parsers.timeutil import YearInference

# dmesg lines as the NVIDIA driver prints them (open-gpu-kernel-modules nv.c / os-interface.c
# "NVRM: Xid (PCI:%04x:%02x:%02x): %d, ..."), fetched from three nodes with pdsh
DMESG = """\
node0025: [   12.000001] systemd[1]: Started Journal Service.
node0026: [  100.500000] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.
gpu-a100-17: [  300.000000] NVRM: Xid (PCI:0000:86:00): 48, pid=1234, name=python, An \
uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition \
0, subpartition 0.
"""


def test_pdsh_label_is_the_host_of_a_dmesg_line() -> None:
    p = peel("node0026: [  100.500000] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen "
             "off the bus.", UTC, YearInference(None, None))
    assert (p.host, p.uptime_s) == ("node0026", 100.5)
    assert p.msg.startswith("NVRM: Xid")
    rows = parse_text(TextParser, DMESG, "dmesg-all.txt")[0].to_pylist()
    assert [(r["host"], r["host_from"], r["code"], r["uptime_s"]) for r in rows] == [
        ("node0026", "line", "79", 100.5), ("gpu-a100-17", "line", "48", 300.0)]


def test_a_syslog_lines_own_host_wins_over_the_label() -> None:
    """``pdsh -w logserver01 cat /var/log/remote/all.log``: the label is the log server."""
    line = ("logserver01: May  1 10:00:02 node0026 kernel: [  100.500000] NVRM: Xid "
            "(PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.")
    assert peel(line, UTC, YearInference(None, None)).host == "node0026"


def test_label_of_a_dmesg_T_line() -> None:
    line = ("node0007: [Mon May  6 10:00:00 2024] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU "
            "has fallen off the bus.")
    assert peel(line, UTC, YearInference(None, None)).host == "node0007"


def test_no_label_no_host() -> None:
    """Words that end in no digit are not host labels (``error: ``, a logger's name); job
    output behind a word ending in a digit names no host either (``rank3: ``, DeepSpeed's
    pdsh runner: its lines are no node's log)."""
    for line in ("rank3: RuntimeError: NCCL communicator was aborted on rank 3.",
                 "worker-0: [2024-05-01 12:00:00,123] [INFO] [engine.py:100:step] x",
                 "error: [  100.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, x",
                 "torch.distributed.elastic.agent: [  100.5] NVRM: Xid (PCI:0000:3b:00): 79, x"):
        assert peel(line, UTC, YearInference(None, None)).host is None
