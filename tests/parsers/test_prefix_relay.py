"""Parallel-shell labels: ``pdsh -w nodes dmesg`` and ``pdsh ... cat /var/log/syslog`` put each
remote line behind ``host: `` (pdsh src/pdsh/dsh.c, ``out("%S: %s", a->host, buf)`` unless
``-N``). In the prefix layer (parsers/prefix.py) the label is the host of a node's log line
that names none itself; a syslog line's own host field wins (the label may be a log
server's). The kernel parser reads a file of such lines without the labels."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from parsers.driver import parse_text
from parsers.kernel import KernelLogParser
from parsers.prefix import peel
from parsers.text import TextParser
from parsers.timeutil import YearInference
from tests.parsers.test_kernel import K, _merged_syslog, run
from tests.parsers.util import pick

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


def _labelled(text: str) -> str:
    """``text``'s lines as ``pdsh -w nodes ...`` prints them (src/pdsh/dsh.c:
    ``out("%S: %s", a->host, buf)``): each behind the host it ran on and ``: ``."""
    return "".join(f"gpu{i % 7:03d}: {ln}\n" for i, ln in enumerate(text.splitlines()))


# ``pdsh -w gpu[001-003] dmesg``: raw dmesg stamps (no host of their own), an AER report with
# its indented detail lines (drivers/pci/pcie/aer.c), a label pdsh could not have printed
# (a Slurm daemon's own prefix) and a line of pdsh itself (src/pdsh/dsh.c err("%p: %S: ..."))
PDSH_DMESG = """\
gpu001: [  100.500000] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.
gpu002: [  200.000001] systemd[1]: Started Journal Service.
gpu002: \n\
slurmd-n1: [  200.000002] systemd[1]: Started Journal Service.
gpu002: [  201.000000] pcieport 0000:00:01.0: AER: Uncorrected (Non-Fatal) error received: \
0000:01:00.0
gpu002: [  201.000001] nvidia 0000:01:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), \
type=Transaction Layer, (Requester ID)
gpu002: [  201.000002] nvidia 0000:01:00.0:   device [10de:2330] error status/mask=00004000/\
00000000
gpu003: [  300.000000] NVRM: Xid (PCI:0000:86:00): 48, pid=1234, name=python, An uncorrectable \
double bit error (DBE) has been detected on GPU in the framebuffer at partition 0, subpartition 0.
slurmd-n1: [  301.000000] NVRM: Xid (PCI:0000:86:00): 13, Graphics Exception
pdsh@login1: gpu004: ssh exited with exit code 255
"""


def test_pdsh_labelled_logs(monkeypatch: Any) -> None:
    """A file of several nodes' dmesg or syslog fetched with pdsh is a kernel log: the label
    is the host of a line that names none (dmesg), a syslog line's own host field wins,
    well-formed lines are irrelevant, not unparsed; rows and counts equal with the plan
    (every chunk planned) and without it."""
    import parsers.base

    assert KernelLogParser.sniff(PDSH_DMESG, "all-dmesg.txt") >= 85
    merged = _labelled(_merged_syslog())
    assert KernelLogParser.sniff(merged, "all.txt") >= 85
    monkeypatch.setattr(parsers.base, "SMALL_CHUNK", 0)
    got = [run(t, "all.txt") for t in (PDSH_DMESG, merged)]
    monkeypatch.setenv("TORMORTEM_PREFILTER", "0")
    want = [run(t, "all.txt") for t in (PDSH_DMESG, merged)]
    for (ev, acct), (ev2, acct2) in zip(got, want, strict=True):
        assert ev == ev2
        assert (acct.read, acct.events, acct.irrelevant, acct.unparsed, acct.samples) == \
            (acct2.read, acct2.events, acct2.irrelevant, acct2.unparsed, acct2.samples)
    (dm, dm_acct), (sl, sl_acct) = got
    assert [(e["host"], e["host_from"], e["kind"], e["code"], e["uptime_s"]) for e in dm
            if e["kind"] == "xid"] == [("gpu001", "line", "xid", "79", 100.5),
                                       ("gpu003", "line", "xid", "48", 300.0),
                                       (None, "unknown", "xid", "13", None)]
    assert {e["host"] for e in dm if e["kind"].startswith("pcie")} == {"gpu002"}
    # unparsed: slurmd-n1's healthy line, pdsh's own line; irrelevant: gpu002's systemd line
    # and its empty line
    assert (dm_acct.unparsed, dm_acct.irrelevant) == (2, 2)
    plain = run(_merged_syslog(), "all.txt")
    assert pick(sl, K) == pick(plain[0], K)  # the syslog host field, not the label
    assert (sl_acct.events, sl_acct.irrelevant, sl_acct.unparsed) == \
        (plain[1].events, plain[1].irrelevant, plain[1].unparsed)
