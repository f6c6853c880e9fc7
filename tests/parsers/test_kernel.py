"""Kernel-log parser: envelopes, Xid and the other kernel signals, accounting, sniffing.

Every log line below is in the format the real tool prints; the source is cited next to it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from parsers.base import Accounting
from parsers.kernel import KernelLogParser
from tests.parsers.util import parse, pick

MTIME = datetime(2024, 6, 1, tzinfo=UTC)
SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs" / "real_formats" / "kernel"
K = ("ts", "host", "kind", "code", "value", "device")


def run(text: str, path: str = "node017/kern.log") -> tuple[list[dict[str, Any]], Accounting]:
    """Parse ``text`` as a kernel log named ``path`` (file mtime June 2024)."""
    events, _, acct = parse(KernelLogParser, text, path, mtime=MTIME)
    return events, acct


def test_dmesg_raw_xid119_with_gsp_details() -> None:
    # NVIDIA/open-gpu-kernel-modules issue paste (dmesg | grep NVRM, driver 535.129.03);
    # Xid line format: krcReportXid_IMPL in src/nvidia/src/kernel/gpu/rc/kernel_rc.c.
    text = (
        "[ 2638.641500] NVRM: GPU at PCI:0000:03:00: GPU-7775f835-5e4a-cd4e-363f-3c5afb460b28\n"
        "[ 2638.641513] NVRM: GPU Board Serial Number: 1320223035733\n"
        "[ 2638.641516] NVRM: Xid (PCI:0000:03:00): 119, pid=32273, name=nvitop, Timeout "
        "waiting for RPC from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) (0x2080a097 0x490).\n"
        "[ 2638.641531] NVRM: GPU0 GSP RPC buffer contains function 76 (GSP_RM_CONTROL) and "
        "data 0x000000002080a097 0x0000000000000490.\n"
        "[ 2638.641541] NVRM: GPU0 RPC history (CPU -> GSP):\n"
    )
    events, acct = run(text, "node017/dmesg.txt")
    # the GSP RPC buffer / history lines after the Xid are the report's lines: each gets a
    # gsp_error row with the block's code
    assert pick(events, K) == [
        {"ts": None, "host": "node017", "kind": "xid", "code": "119", "value": 32273.0,
         "device": "0000:03:00"},
        {"ts": None, "host": "node017", "kind": "gsp_error", "code": "xid119", "value": None,
         "device": None},
        {"ts": None, "host": "node017", "kind": "gsp_error", "code": "xid119", "value": None,
         "device": None},
    ]
    assert [(e["ts_flag"], e["uptime_s"], e["format"], e["host_from"], e["line_no"])
            for e in events] == [("uptime", 2638.641516, "dmesg", "path", 3),
                                 ("uptime", 2638.641531, "dmesg", "path", 4),
                                 ("uptime", 2638.641541, "dmesg", "path", 5)]
    e = events[0]
    assert e["message"].startswith("NVRM: Xid (PCI:0000:03:00): 119, pid=32273, name=nvitop,")
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (5, 3, 2, 0)


def test_xid_variants() -> None:
    text = (
        # gpud docs (dmesg --ctime): pid='<unknown>', name=<unknown> form
        "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', "
        "name=<unknown>, Graphics SM Warp Exception on (GPC 7, TPC 1, SM 0): Out Of Range Address\n"
        # stas00/ml-engineering compute/accelerator/nvidia/debug.md (pid without name)
        "[Fri Aug 30 11:50:00 2024] NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: "
        "New row marked for remapping, reset gpu to activate.\n"
        # pastebin.com/xJaypMZt: old driver, no "PCI:" and no pid
        "[Fri Aug 30 11:51:00 2024] NVRM: Xid (0000:01:00): 3, C 00000005 SC 00000007 "
        "M 00001ffc Data ffffffff\n"
        # MIG attribution: "NVRM: Xid (PCI:%04x:%02x:%02x GPU-I:%02u GPU-CI:%02u): %d, pid=%s,
        # name=%s, %s" (kernel_rc.c)
        "[Fri Aug 30 11:52:00 2024] NVRM: Xid (PCI:0000:3B:00 GPU-I:01 GPU-CI:00): 31, "
        "pid=3430, name=python, Ch 00000008, intr 10000000. MMU Fault: ENGINE GRAPHICS "
        "GPCCLIENT_T1_3 faulted @ 0x7f6c_8e000000. Fault is of type FAULT_PDE "
        "ACCESS_TYPE_VIRT_READ\n"
        # NVSentinel test case of a malformed Xid: names an Xid, no number -> unparsed
        "[Fri Aug 30 11:53:00 2024] NVRM: Xid (PCI:0000:66:00): abc, pid=2280636\n"
    )
    events, acct = run(text, "gpu-node-3/dmesg-T.log")
    assert pick(events, K) == [
        {"ts": "2024-08-30T11:43:09Z", "host": "gpu-node-3", "kind": "xid", "code": "13",
         "value": None, "device": "0000:cb:00"},
        {"ts": "2024-08-30T11:50:00Z", "host": "gpu-node-3", "kind": "xid", "code": "63",
         "value": 1896.0, "device": "0000:10:1c"},
        {"ts": "2024-08-30T11:51:00Z", "host": "gpu-node-3", "kind": "xid", "code": "3",
         "value": None, "device": "0000:01:00"},
        {"ts": "2024-08-30T11:52:00Z", "host": "gpu-node-3", "kind": "xid", "code": "31",
         "value": 3430.0, "device": "0000:3b:00"},
    ]
    assert {e["format"] for e in events} == {"dmesg-T"}
    assert {e["ts_flag"] for e in events} == {"assumed_tz"}
    assert acct.unparsed == 1 and acct.samples[0][0] == 5


def test_xid79_echo_and_154_syslog_with_uptime() -> None:
    # rsyslog RFC 3164 with the kernel's [uptime] (cf. openstreetmap/operations#300 layout);
    # Xid 79 / "GPU ... has fallen off the bus." / Xid 154 sequence as in
    # NVIDIA/open-gpu-kernel-modules#1151 and NVSentinel tests.
    text = (
        "May  7 07:02:39 node018 kernel: [21585697.123401] NVRM: Xid (PCI:0000:05:00): 79, "
        "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
        "May  7 07:02:39 node018 kernel: [21585697.123412] NVRM: GPU 0000:05:00.0: GPU has "
        "fallen off the bus.\n"
        "May  7 07:02:39 node018 kernel: [21585697.123478] NVRM: Xid (PCI:0000:05:00): 154, GPU "
        "recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)\n"
        "May  7 07:03:00 node018 sshd[20411]: Accepted publickey for root from 10.1.0.5 port "
        "50122 ssh2\n"
    )
    events, acct = run(text, "logs/kern.log")
    assert pick(events, K) == [
        {"ts": "2024-05-07T07:02:39Z", "host": "node018", "kind": "xid", "code": "79",
         "value": None, "device": "0000:05:00"},
        {"ts": "2024-05-07T07:02:39Z", "host": "node018", "kind": "gpu_lost",
         "code": "fallen_off_bus", "value": None, "device": "0000:05:00"},
        {"ts": "2024-05-07T07:02:39Z", "host": "node018", "kind": "xid", "code": "154",
         "value": None, "device": "0000:05:00"},
    ]
    assert [e["uptime_s"] for e in events] == [21585697.123401, 21585697.123412,
                                               21585697.123478]
    assert {(e["format"], e["ts_flag"], e["host_from"]) for e in events} == {
        ("syslog-rfc3164", "inferred_year", "line")}
    # the driver's echo of Xid 79 gets its own gpu_lost row (no dedup); sshd is noise
    assert (acct.events, acct.irrelevant, acct.unparsed) == (3, 1, 0)


def test_gpu_lost_without_xid() -> None:
    text = (
        # NVIDIA/NVSentinel#155 (dmesg): multi-line probe message, continuation lines indented;
        # printf in kernel-open/nvidia/nv.c ("NVRM: The NVIDIA GPU %04x:%02x:%02x.%x\n...").
        "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
        "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
        "               NVRM: fallen off the bus and is not responding to commands.\n"
        "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n"
        # Bumblebee-Project/Bumblebee#554: old driver wording
        "[   49.261458] NVRM: GPU at 0000:01:00.0 has fallen off the bus.\n"
        "[   49.261465] NVRM: os_pci_init_handle: invalid context!\n"
        # Cyridd/cmpunlocker#4
        "[   21.091872] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:894)\n"
        "[   21.092238] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0\n"
    )
    events, acct = run(text, "node017/dmesg.txt")
    # each line of the 3-line message gets a gpu_lost row (the indented continuation lines
    # take the first line's uptime); the probe failure that follows is a gpu_lost row of its
    # own; "rm_init_adapter failed" after "RmInitAdapter failed!" gets its own row too
    assert pick(events, ("kind", "code", "device", "uptime_s", "line_no")) == [
        {"kind": "gpu_lost", "code": "fallen_off_bus", "device": "0000:b3:00",
         "uptime_s": 1843.308145, "line_no": 1},
        {"kind": "gpu_lost", "code": "fallen_off_bus", "device": "0000:b3:00",
         "uptime_s": 1843.308145, "line_no": 2},
        {"kind": "gpu_lost", "code": "fallen_off_bus", "device": "0000:b3:00",
         "uptime_s": 1843.308145, "line_no": 3},
        {"kind": "gpu_lost", "code": "probe_failed", "device": None,
         "uptime_s": 1843.439662, "line_no": 4},
        {"kind": "gpu_lost", "code": "fallen_off_bus", "device": "0000:01:00",
         "uptime_s": 49.261458, "line_no": 5},
        {"kind": "gpu_lost", "code": "RmInitAdapter", "device": "0000:01:00",
         "uptime_s": 21.091872, "line_no": 7},
        {"kind": "gpu_lost", "code": "RmInitAdapter", "device": "0000:01:00",
         "uptime_s": 21.092238, "line_no": 8},
    ]
    assert events[0]["ts_flag"] == "uptime"
    assert (acct.events, acct.irrelevant, acct.unparsed) == (7, 1, 0)


def test_gsp_heartbeat_journal_one_row_per_line() -> None:
    # ublue-os/bazzite#4449 (journalctl --no-hostname -k), driver 570+ "GPU0 " prefix
    text = (
        "Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspProcessRpcEvent: Attempted to process RPC "
        "event from GPU0: 0x101a (PFM_REQ_HNDLR_STATE_SYNC_CALLBACK) during bootup without API "
        "lock\n"
        "Mar 21 21:42:01 kernel: NVRM: GPU0 nvAssertFailedNoLog: Assertion failed: 0 @ "
        "kernel_gsp.c:1446\n"
        "Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspIsHeartbeatTimedOut: Heartbeat timed out, "
        "currentTimeMs 322227881 heartbeat 0 heartbeatWithOffsetMs 318098841 diff 4129040 "
        "timeout 5200\n"
        "Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspRpcRecvPoll: GSP RM heartbeat timed out\n"
        "Mar 21 21:43:00 kernel: nvidia 0000:05:00.0: Enabling HDA controller\n"
        # NVIDIA/open-gpu-kernel-modules#1230: the same heartbeat line twice in a row
        "Mar 21 21:50:24 kernel: NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, "
        "currentTimeMs 812751949 heartbeat 1899482 heartbeatWithOffsetMs 812745879 diff 6070 "
        "timeout 5200\n"
        "Mar 21 21:50:24 kernel: NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, "
        "currentTimeMs 812751949 heartbeat 1899482 heartbeatWithOffsetMs 812745879 diff 6070 "
        "timeout 5200\n"
    )
    events, acct = run(text, "node019/journal-k.txt")
    assert pick(events, ("ts", "host", "kind", "code", "device")) == [
        {"ts": "2024-03-21T21:42:01Z", "host": "node019", "kind": "nvrm_error",
         "code": "nvAssertFailedNoLog", "device": None},
        {"ts": "2024-03-21T21:42:01Z", "host": "node019", "kind": "gsp_error",
         "code": "_kgspIsHeartbeatTimedOut", "device": "GPU0"},
        {"ts": "2024-03-21T21:42:01Z", "host": "node019", "kind": "gsp_error",
         "code": "_kgspRpcRecvPoll", "device": "GPU0"},
        # the repeated heartbeat line is not deduplicated: one row per line
        {"ts": "2024-03-21T21:50:24Z", "host": "node019", "kind": "gsp_error",
         "code": "_kgspIsHeartbeatTimedOut", "device": "GPU6"},
        {"ts": "2024-03-21T21:50:24Z", "host": "node019", "kind": "gsp_error",
         "code": "_kgspIsHeartbeatTimedOut", "device": "GPU6"},
    ]
    assert [e["line_no"] for e in events] == [2, 3, 4, 6, 7]
    assert {e["host_from"] for e in events} == {"path"}  # --no-hostname: host from path
    assert {e["format"] for e in events} == {"journal-short"}
    assert (acct.events, acct.irrelevant) == (5, 2)


def test_sxid_and_fabric_manager() -> None:
    text = (
        # NVSentinel e2e test lines ("kernel: [..] nvidia-nvswitch0: SXid (PCI:..): 24007, ...")
        "May 01 12:00:00 node019 kernel: nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 24007, "
        "Fatal, Link 30 sourcetrack timeout error\n"
        "May 01 12:00:01 node019 kernel: nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 20009, "
        "Non-fatal, Link 28 RX Short Error Rate\n"
        # NVIDIA/gpu-operator#610 (journalctl): Fabric Manager start failure
        "May 01 12:00:02 node019 nv-fabricmanager[4177]: request to query NVSwitch device "
        "information from NVSwitch driver failed with error:WARNING Nothing to do "
        "[NV_WARN_NOTHING_TO_DO]\n"
        # bottlerocket-os/bottlerocket-kernel-kit#142: healthy Fabric Manager INFO line
        "May 01 12:00:03 node019 nv-fabricmanager[29850]: [May 16 2025 15:10:21] [INFO] "
        "[tid 30042] GPU probe request received from node Id 0 and module Id 7 GUID "
        "0x3ba54f661add0c35 on the partition 57082 requestId 0x18400a7ecabe8408.\n"
    )
    events, acct = run(text)
    assert pick(events, ("kind", "code", "device")) == [
        {"kind": "nvlink_error", "code": "24007", "device": "0000:c3:00.0"},
        {"kind": "nvlink_error", "code": "20009", "device": "0000:c3:00.0"},
        {"kind": "nvlink_error", "code": "fabricmanager", "device": None},
    ]
    assert {e["format"] for e in events} == {"journal-short"}
    assert (acct.events, acct.irrelevant) == (3, 1)


def test_other_envelopes() -> None:
    text = (
        # rsyslog RSYSLOG_FileFormat (RFC 3339 high precision)
        "2024-05-01T12:00:00.123456+00:00 node022 kernel: NVRM: Xid (PCI:0000:3b:00): 48, "
        "pid=2280636, name=python3, Ch 00000008\n"
        # journalctl -o short-iso (older systemd prints %z without a colon)
        "2024-05-01T12:00:01+0000 node022 kernel: NVRM: Xid (PCI:0000:3b:00): 64, pid=2280636, "
        "name=python3, Ch 00000008\n"
        # journalctl -o short-precise
        "May 01 12:00:02.984246 node022 kernel: NVRM: Xid (PCI:0000:3b:00): 94, pid=2280636, "
        "name=python3, Ch 00000008\n"
        # RFC 3164 with PRI, as forwarded by a kernel logger to a remote syslog
        "<4>May  1 12:00:03 node022 kernel: [12345.678] NVRM: Xid (PCI:0000:3b:00): 95, "
        "pid=2280636, name=python3, Ch 00000008\n"
        # RFC 5424 (rsyslog RSYSLOG_SyslogProtocol23Format)
        "<3>1 2024-05-01T12:00:04.500000Z node022 kernel - - - nvme nvme0: I/O 258 (I/O Cmd) "
        "QID 4 timeout, aborting\n"
        "<30>1 2024-05-01T12:00:05.000000Z node022 systemd 1 - - Started session-42.scope.\n"
        # localhost is no host: the path's host is used
        "2024-05-01T12:00:06.000000+00:00 localhost kernel: nfs: server nfs01 not responding, "
        "timed out\n"
    )
    events, acct = run(text, "node022/messages")
    assert pick(events, ("ts", "host", "kind", "code")) == [
        {"ts": "2024-05-01T12:00:00.123456Z", "host": "node022", "kind": "xid", "code": "48"},
        {"ts": "2024-05-01T12:00:01Z", "host": "node022", "kind": "xid", "code": "64"},
        {"ts": "2024-05-01T12:00:02.984246Z", "host": "node022", "kind": "xid", "code": "94"},
        {"ts": "2024-05-01T12:00:03Z", "host": "node022", "kind": "xid", "code": "95"},
        {"ts": "2024-05-01T12:00:04.500000Z", "host": "node022", "kind": "io_error",
         "code": "nvme"},
        {"ts": "2024-05-01T12:00:06Z", "host": "node022", "kind": "io_error", "code": "nfs"},
    ]
    assert [(e["format"], e["ts_flag"], e["uptime_s"], e["host_from"]) for e in events] == [
        ("syslog-iso", "exact", None, "line"),
        ("journal-short-iso", "exact", None, "line"),
        ("journal-short-precise", "inferred_year", None, "line"),
        ("syslog-rfc3164", "inferred_year", 12345.678, "line"),
        ("syslog-rfc5424", "exact", None, "line"),
        ("syslog-iso", "exact", None, "path"),
    ]
    assert (acct.events, acct.irrelevant, acct.unparsed) == (6, 1, 0)


def test_year_rollover_and_tz() -> None:
    # journalctl short lines across New Year; file mtime in January 2025
    text = (
        "Dec 31 23:59:59 node019 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', "
        "name=<unknown>, GPU has fallen off the bus.\n"
        "Jan 01 00:00:01 node019 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', "
        "name=<unknown>, GPU has fallen off the bus.\n"
    )
    from parsers.timeutil import get_tz

    events, _, _ = parse(KernelLogParser, text, "node019/journal.txt",
                         mtime=datetime(2025, 1, 5, tzinfo=UTC), tz=get_tz("+02:00"))
    assert [e["ts"].isoformat() for e in events] == [
        "2024-12-31T21:59:59+00:00", "2024-12-31T22:00:01+00:00"]


def test_noise_and_malformed() -> None:
    text = (
        "    indented text before any envelope\n"
        "[    8.046867] nvidia-nvlink: Nvlink Core is being initialized, major device number 239\n"
        "[    8.060361] nvidia 0000:01:00.0: enabling device (0000 -> 0003)\n"
        "[   11.097374] mlx5_core 0004:01:00.0: Port module event: module 0, Cable plugged\n"
        "\n"
        "this is not a kernel log line\n"
        "[abc] broken stamp\n"
        "Foo 12 12:00:00 host kernel: not a month\n"
    )
    events, acct = run(text, "node017/dmesg.txt")
    assert events == []
    assert (acct.read, acct.events, acct.irrelevant, acct.unparsed) == (8, 0, 4, 4)
    assert [n for n, _ in acct.samples] == [1, 6, 7, 8]


def test_samples_parse_without_unparsed_lines() -> None:
    files = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.name != "NOTES.md")
    assert len(files) == 6
    for f in files:
        text = f.read_text()
        assert KernelLogParser.sniff(text[:65536], str(f)) >= 80, f
        events, acct = run(text, str(f.relative_to(SAMPLES)))
        assert acct.unparsed == 0, (f, acct.samples)
        assert events, f
        assert {e["host"] for e in events} == {f.parent.name}, f


def test_sniff_rejects_other_sources() -> None:
    others = {
        # slurmctld log (slurm src/common/log.c "[%s] %s")
        "slurmctld.log": "[2024-05-01T12:00:00.123] _slurm_rpc_submit_batch_job: JobId=1234 "
                         "InitPrio=4294901759 usec=1234\n",
        # sacct --parsable2
        "sacct.txt": "JobID|JobName|Partition|Account|AllocCPUS|State|ExitCode\n"
                     "1234|train|gpu|proj|64|COMPLETED|0:0\n",
        # NCCL INFO line (NCCL debug.cc "%s:%d:%d [%d] NCCL INFO ...")
        "slurm-1234.out": "node017:12345:12345 [0] NCCL INFO Bootstrap : Using eth0:"
                          "10.0.0.17<0>\n",
        # Megatron-LM training log
        "train.log": " iteration      100/  500000 | consumed samples:        51200 | "
                     "elapsed time per iteration (ms): 1234.5 |\n",
        # Python logging default format
        "run.log": "2024-05-01 12:00:00,123 - INFO - starting training\n",
        "pods.json": '{"apiVersion": "v1", "items": [], "kind": "List"}\n',
    }
    for name, head in others.items():
        assert KernelLogParser.sniff(head, name) < 30, name


def _merged_syslog() -> str:
    """An rsyslog file of many hosts (RSYSLOG_TraditionalFileFormat): an Xid 119 of one host
    (krcReportXid_IMPL's text, as in the dmesg paste above), then other hosts' systemd lines
    (systemd >= 252 prints "Starting <unit> - <description>..."), a line of the GSP report, a
    kernel line of another subsystem (kernel/events/core.c's perf throttling message), which
    ends the report, and a history line that is then no longer the report's."""
    sysd = "".join(f"May  1 03:40:00 node{1000 + i:04d} systemd[1]: Starting sysstat-collect"
                   ".service - system activity accounting tool...\n" for i in range(400))
    k = "May  1 03:40:01 node0975 kernel: [2413865.916181] "
    return (k + "NVRM: Xid (PCI:0000:2a:00): 119, pid=687595, name=nv_queue, Timeout waiting "
            "for RPC from GSP1! Expected function 10 (FREE) (0xa55a0210 0x0).\n" + sysd
            + k + "NVRM: GPU0 GSP RPC buffer contains function 10 (FREE) and data "
            "0x00000000a55a0210 0x0000000000000000.\n" + sysd
            + k + "perf: interrupt took too long (2512 > 2500), lowering "
            "kernel.perf_event_max_sample_rate to 79500\n" + sysd
            + k + "NVRM: GPU0 RPC history (CPU -> GSP):\n" + sysd)


def test_an_open_gsp_report_skips_other_programs_lines(monkeypatch: Any) -> None:
    """While only a GSP report is open, Python reads only lines that may be kernel lines
    (``KernelLogParser.open_wake``); rows and accounting are those of reading every line."""
    import parsers.base

    text = _merged_syslog()
    monkeypatch.setattr(parsers.base, "SMALL_CHUNK", 0)  # plan even this small chunk
    calls = []
    real = KernelLogParser.parse_line

    def spy(self: KernelLogParser, line: str, line_no: int) -> int:
        calls.append(line_no)
        return real(self, line, line_no)

    monkeypatch.setattr(KernelLogParser, "parse_line", spy)
    got = run(text, "syslog")
    monkeypatch.setenv("TORMORTEM_PREFILTER", "0")
    want = run(text, "syslog")
    assert pick(got[0], K) == pick(want[0], K)
    assert [e["line_no"] for e in got[0]] == [1, 402]  # the Xid and the report's line
    assert [(a.read, a.events, a.irrelevant, a.unparsed) for a in (got[1], want[1])] == [
        (1604, 2, 1602, 0)] * 2
    assert len(calls) - 1604 == 4  # with the prefilter: the four kernel lines only


def test_envelope_mask_taken_from_the_month_mask() -> None:
    """``kernel_plan.masks`` tests ``V_ENVELOPE`` only on lines without a ``V_SHORT`` month;
    the mask must equal the regex on every line, in a chunk of mostly short-stamped lines (the
    others gathered) and of mostly others (every line tested)."""
    import numpy as np
    import polars as pl

    from parsers import kernel_plan, prefilter

    # rsyslog's traditional file format, journalctl -o short / short-precise / short-iso,
    # raw dmesg, RFC 5424 (rsyslog's RSYSLOG_SyslogProtocol23Format), a PRI'd RFC 3164 line
    short = ["May  1 12:00:01 node017 kernel: [12345.678901] NVRM: Xid (PCI:0000:3b:00): 79",
             "May 01 12:00:01.123456 node017 systemd[1]: Started Session 5 of user root.",
             "<14>May  1 12:00:01 node017 CRON[2211]: (root) CMD (run-parts /etc/cron.hourly)",
             "  Dec 31 23:59:59 node017 sshd[88]: Accepted publickey for root"]
    other = ["[12345.678901] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python",
             "2024-05-01T12:00:01+0000 node017 kernel: mlx5_core 0000:5e:00.0: link down",
             "<11>1 2024-05-01T12:00:01.000Z node017 kernel - - - NVRM: Xid 48",
             "[Wed May  1 12:00:01 2024] NVRM: GPU at PCI:0000:3b:00: GPU has fallen off",
             "not a log line at all", "", "May  1 12:00:01 no-tag-colon here",
             "Mayo 1 12:00:01 node017 kernel: x"]
    for lines in (short * 40 + other, other * 40 + short):
        s = pl.Series("line", lines)
        m = kernel_plan.masks(s)
        assert (m["env"] == prefilter.mask(s, kernel_plan.V_ENVELOPE)).all()
        assert np.count_nonzero(m["env"]) >= len(lines) // 2

