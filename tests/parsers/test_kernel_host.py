"""Kernel-log parser: host hardware and OS signals (PCIe AER, MCE/EDAC, mlx5/InfiniBand, OOM
killer, storage, hung tasks and panics). Envelopes, Xid and accounting are in test_kernel.py.

Every log line below is in the format the real tool prints; the source is cited next to it.
"""

from __future__ import annotations

from tests.parsers.test_kernel import run
from tests.parsers.util import pick


def test_aer_blocks() -> None:
    text = (
        # rwth-i6/returnn#1500 (dmesg -H there; raw stamps here): fatal, header + details
        "[ 5120.334101] pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error "
        "received: 0000:00:03.0\n"
        "[ 5120.334105] pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), "
        "type=Transaction Layer, (Requester ID)\n"
        "[ 5120.335003] pcieport 0000:00:03.0:   device [8086:6f08] error status/mask="
        "00004020/00000000\n"
        "[ 5120.335892] pcieport 0000:00:03.0:    [ 5] SDES                  \n"
        "[ 5120.336786] pcieport 0000:00:03.0:    [14] CmpltTO                (First)\n"
        "[ 5120.337707] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)\n"
        # endlessm/linux#625 (4.x): header with id=, no device found -> row from the header
        "[ 6000.000001] pcieport 0000:00:1c.5: AER: Corrected error received: id=00e5\n"
        "[ 6000.000002] pcieport 0000:00:1c.5: can't find device of ID00e5\n"
        # minisforum-docs/MS-02-Ultra#10 (6.x wording), with a TLP header line
        "[ 7000.000001] pcieport 0000:80:1b.4: AER: Uncorrectable (Non-Fatal) error message "
        "received from 0000:80:1b.4\n"
        "[ 7000.000002] pcieport 0000:80:1b.4: PCIe Bus Error: severity=Uncorrectable "
        "(Non-Fatal), type=Transaction Layer, (Receiver ID)\n"
        "[ 7000.000003] pcieport 0000:80:1b.4:   device [8086:7f44] error status/mask="
        "00200000/00000000\n"
        "[ 7000.000004] pcieport 0000:80:1b.4:    [21] ACSViol                (First)\n"
        "[ 7000.000005] pcieport 0000:80:1b.4: AER:   TLP Header: 0x34000000 0x00000052 "
        "0x00000000 0x00000000\n"
        # pop-os/pop#3363 (6.x): a correctable header whose details never came (end of file)
        "[ 8000.000001] pcieport 0000:00:03.1: AER: Correctable error message received from "
        "0000:00:00.0\n"
    )
    events, acct = run(text, "node017/dmesg.txt")
    # every line of a report gets a row with the device's severity code: the header's row
    # (its own uptime) waits for the device line; the device line and the detail lines
    # (error status/mask, [NN] bits, TLP Header) get rows of their own
    fatal = {"kind": "pcie_aer", "code": "uncorrected_fatal", "device": "0000:00:03.0"}
    nonfatal = {"kind": "pcie_aer", "code": "uncorrected_nonfatal", "device": "0000:80:1b.4"}
    assert pick(events, ("kind", "code", "device", "uptime_s", "line_no")) == [
        {**fatal, "uptime_s": 5120.334101, "line_no": 1},
        {**fatal, "uptime_s": 5120.334105, "line_no": 2},
        {**fatal, "uptime_s": 5120.335003, "line_no": 3},
        {**fatal, "uptime_s": 5120.335892, "line_no": 4},
        {**fatal, "uptime_s": 5120.336786, "line_no": 5},
        {"kind": "pcie_aer", "code": "corrected", "device": "0000:00:1c.5",
         "uptime_s": 6000.000001, "line_no": 7},
        {**nonfatal, "uptime_s": 7000.000001, "line_no": 9},
        {**nonfatal, "uptime_s": 7000.000002, "line_no": 10},
        {**nonfatal, "uptime_s": 7000.000003, "line_no": 11},
        {**nonfatal, "uptime_s": 7000.000004, "line_no": 12},
        {**nonfatal, "uptime_s": 7000.000005, "line_no": 13},
        {"kind": "pcie_aer", "code": "corrected", "device": "0000:00:00.0",
         "uptime_s": 8000.000001, "line_no": 14},
    ]
    dev = ("pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), "
           "type=Transaction Layer, (Requester ID)")
    assert events[0]["message"] == ("pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) "
                                    "error received: 0000:00:03.0 -> " + dev)
    assert events[1]["message"] == dev
    assert (acct.events, acct.irrelevant, acct.unparsed) == (12, 2, 0)


def test_mce_edac() -> None:
    text = (
        # grondo/edac-utils#10 (dmesg -T)
        "[Mon Jan 27 19:27:15 2020] mce: [Hardware Error]: Machine check events logged\n"
        "[Mon Jan 27 19:27:15 2020] EDAC sbridge MC0: HANDLING MCE MEMORY ERROR\n"
        "[Mon Jan 27 19:27:15 2020] EDAC sbridge MC0: CPU 0: Machine Check Event: 0 Bank 5: "
        "8c00004000010092\n"
        "[Mon Jan 27 19:27:15 2020] EDAC MC0: 1 CE memory read error on "
        "CPU_SrcID#0_Ha#0_Chan#2_DIMM#0 (channel:2 slot:0 page:0x849923 offset:0x380 grain:32 "
        "syndrome:0x0 -  area:DRAM err_code:0001:0092 socket:0 ha:0 channel_mask:4 rank:0)\n"
        # andikleen/mcelog#74: UE from ghes/skx_edac
        "[Mon Jan 27 19:30:00 2020] EDAC MC0: 1 UE memory read error on "
        "CPU_SrcID#0_MC#0_Chan#0_DIMM#0 (channel:0 slot:0 page:0xe16677 offset:0x0 grain:32 -  "
        "err_code:0000:009f socket:0 imc:0 rank:0 bg:0 ba:3 row:dad3 col:3c0)\n"
        # __print_mce format (arch/x86/kernel/cpu/mce/core.c); status bit 61 (UC) set
        "[Mon Jan 27 19:31:00 2020] mce: [Hardware Error]: CPU 1: Machine Check Exception: 5 "
        "Bank 7: be00000000800400\n"
        "[Mon Jan 27 19:31:00 2020] mce: [Hardware Error]: TSC 0 ADDR 1f4dc0000 MISC 86\n"
        # corrected: bit 61 clear (mcelog-style 8c00... status above)
        "[Mon Jan 27 19:32:00 2020] mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 7: "
        "8c00004000010092\n"
    )
    events, acct = run(text, "node020/dmesg-T.txt")
    assert pick(events, ("ts", "kind", "code", "device", "value")) == [
        {"ts": "2020-01-27T19:27:15Z", "kind": "mce", "code": "events_logged", "device": None,
         "value": None},
        {"ts": "2020-01-27T19:27:15Z", "kind": "edac", "code": "CE",
         "device": "mc0:CPU_SrcID#0_Ha#0_Chan#2_DIMM#0", "value": 1.0},
        {"ts": "2020-01-27T19:30:00Z", "kind": "edac", "code": "UE",
         "device": "mc0:CPU_SrcID#0_MC#0_Chan#0_DIMM#0", "value": 1.0},
        {"ts": "2020-01-27T19:31:00Z", "kind": "mce", "code": "uncorrected",
         "device": "cpu1/bank7", "value": None},
        # the open report's next [Hardware Error] line gets a row of its own
        {"ts": "2020-01-27T19:31:00Z", "kind": "mce", "code": "uncorrected",
         "device": None, "value": None},
        {"ts": "2020-01-27T19:32:00Z", "kind": "mce", "code": "corrected",
         "device": "cpu3/bank7", "value": None},
    ]
    assert (acct.events, acct.irrelevant) == (6, 2)


def test_mlx5_and_ib() -> None:
    text = (
        # leptonai/gpud#1209 (journalctl -k): IB port state changes (ib_cache.c "Port: %d Link %s")
        "Feb 14 05:03:41 node019 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link INIT\n"
        "Feb 14 05:03:41 node019 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE\n"
        "Feb 14 09:12:07 node019 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN\n"
        # NVSentinel syslog tests (mlx5 events.c / health.c / cmd.c)
        "Feb 14 09:12:08 node019 kernel: mlx5_core 0000:63:00.1: Port module event: module 1, "
        "Cable unplugged\n"
        "Feb 14 09:12:09 node019 kernel: mlx5_core 0000:41:00.0: poll_health:852:(pid 0): "
        "device's health compromised - reached miss count\n"
        "Feb 14 09:12:09 node019 kernel: mlx5_core 0000:41:00.0: print_health_info:458:(pid 0): "
        "synd 0x8: unrecoverable hardware error\n"
        "Feb 14 09:12:10 node019 kernel: mlx5_core 0000:d2:00.0: mlx5_cmd_out_err:838:(pid "
        "1441871): ACCESS_REG(0x805) op_mod(0x1) failed, status bad operation(0x2), syndrome "
        "(0x305684), err(-22)\n"
        # geerlingguy/arm-nas#16: healthy mlx5 probe lines
        "Feb 14 09:13:00 node019 kernel: mlx5_core 0004:01:00.0: firmware version: 16.27.2048\n"
        "Feb 14 09:13:00 node019 kernel: mlx5_core 0004:01:00.0: Port module event: module 0, "
        "Cable plugged\n"
    )
    events, acct = run(text, "node019/journal-k.txt")
    assert pick(events, ("kind", "code", "device")) == [
        {"kind": "ib_link_down", "code": "DOWN", "device": "mlx5_5/1"},
        {"kind": "mlx5_error", "code": "cable_unplugged", "device": "0000:63:00.1"},
        # each health line gets a row (print_health_info after poll_health)
        {"kind": "mlx5_error", "code": "health_compromised", "device": "0000:41:00.0"},
        {"kind": "mlx5_error", "code": "health_compromised", "device": "0000:41:00.0"},
        {"kind": "mlx5_error", "code": "cmd_out_err", "device": "0000:d2:00.0"},
    ]
    assert (acct.events, acct.irrelevant) == (5, 4)


def test_oom_sequences_and_job_from_memcg() -> None:
    # equinor/ert#7797: dmesg --time-format iso, verbatim (global OOM)
    text = (
        "2024-04-29T14:55:41,678628+02:00 pool invoked oom-killer: gfp_mask=0x6200ca"
        "(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0\n"
        "2024-04-29T14:55:41,678661+02:00  oom_kill_process.cold.33+0xb/0x10\n"
        "2024-04-29T14:55:41,679685+02:00 oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),"
        "cpuset=/,mems_allowed=0,global_oom,task_memcg=/user.slice/user-21417.slice/"
        "user@21417.service,task=perl,pid=1440763,uid=21417\n"
        "2024-04-29T14:55:41,679700+02:00 Out of memory: Killed process 1440763 (perl) "
        "total-vm:87033376kB, anon-rss:60356340kB, file-rss:0kB, shmem-rss:0kB, UID:21417 "
        "pgtables:169956kB oom_score_adj:0\n"
        "2024-04-29T14:55:46,947445+02:00 oom_reaper: reaped process 1440763 (perl), now "
        "anon-rss:0kB, file-rss:0kB, shmem-rss:0kB\n"
        # Slurm cgroup v1 memcg path (task_memcg=/slurm/uid_<uid>/job_<id>/step_<s>/task_<t>)
        "2024-04-29T15:00:00,000001+02:00 oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),"
        "cpuset=/,mems_allowed=0-1,oom_memcg=/slurm/uid_1000/job_4242,task_memcg=/slurm/"
        "uid_1000/job_4242/step_0/task_0,task=python,pid=9876,uid=1000\n"
        "2024-04-29T15:00:00,000002+02:00 Memory cgroup out of memory: Killed process 9876 "
        "(python) total-vm:3149468kB, anon-rss:164992kB, file-rss:52176kB, shmem-rss:92kB, "
        "UID:1000 pgtables:1372kB oom_score_adj:0\n"
    )
    events, acct = run(text, "node021/dmesg-iso.txt")
    # every report line (invoked oom-killer, oom-kill:constraint=, Killed process) is an
    # oom_kill row; the stack line and oom_reaper are noise
    assert pick(events, ("ts", "kind", "code", "value", "job_id")) == [
        {"ts": "2024-04-29T12:55:41.678628Z", "kind": "oom_kill", "code": "pool",
         "value": None, "job_id": None},
        {"ts": "2024-04-29T12:55:41.679685Z", "kind": "oom_kill", "code": "oom-kill",
         "value": None, "job_id": None},
        {"ts": "2024-04-29T12:55:41.679700Z", "kind": "oom_kill", "code": "perl",
         "value": 1440763.0, "job_id": None},
        {"ts": "2024-04-29T13:00:00.000001Z", "kind": "oom_kill", "code": "oom-kill",
         "value": None, "job_id": "4242"},
        {"ts": "2024-04-29T13:00:00.000002Z", "kind": "oom_kill", "code": "python",
         "value": 9876.0, "job_id": "4242"},
    ]
    assert {(e["format"], e["ts_flag"]) for e in events} == {("dmesg-iso", "exact")}
    assert (acct.events, acct.irrelevant) == (5, 2)


def test_storage_hung_panic() -> None:
    text = (
        # oxidecomputer/crucible#408
        "[  415.118808] blk_update_request: I/O error, dev nvme1n1, sector 823872 op 0x0:(READ) "
        "flags 0x80700 phys_seg 1 prio class 0\n"
        # MichaIng/DietPi#2353
        "[29821.550114] EXT4-fs error (device mmcblk0p2): ext4_evict_inode:292: comm rm: "
        "couldn't truncate inode 11376 (err -5)\n"
        "[29821.550141] Buffer I/O error on dev mmcblk0p2, logical block 0, lost sync page "
        "write\n"
        "[29821.600000] EXT4-fs warning (device mmcblk0p2): ext4_end_bio:323: I/O error 10 "
        "writing to inode 3294 (offset 0 size 0 starting block 120835)\n"
        # xfs_corruption_error (fs/xfs/xfs_error.c): xfs_alert(mp, "Corruption detected. ...")
        "[30000.000001] XFS (sdb1): Corruption detected. Unmount and run xfs_repair\n"
        "[30000.000002] XFS (sdb1): Mounting V5 Filesystem\n"
        # a Lustre client's dmesg (import.c LCONSOLE_WARN), verbatim from a public runbook
        "[31000.000001] LustreError: 11-0: fs-abcd12345-OST0000-osc-XXXXX: operation ost_read "
        "to node 10.0.1.5@tcp failed: rc = -107\n"
        "[31000.000002] LustreError: Skipped 3 previous similar messages\n"
        # net/sunrpc/clnt.c "%s: server %s not responding, still trying"
        "[32000.000001] nfs: server nfs01 not responding, still trying\n"
        "[32100.000001] nfs: server nfs01 OK\n"
        # kernel/hung_task.c
        "[33000.000001] INFO: task python:48213 blocked for more than 122 seconds.\n"
        "[33000.000002]       Not tainted 5.15.0-105-generic #115-Ubuntu\n"
        "[33000.000003] \"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this "
        "message.\n"
        # kernel/panic.c "Kernel panic - not syncing: %s"
        "[34000.000001] Kernel panic - not syncing: Fatal machine check\n"
        "[34000.000002] ---[ end Kernel panic - not syncing: Fatal machine check ]---\n"
    )
    events, acct = run(text, "node017/dmesg.txt")
    assert pick(events, ("kind", "code", "device", "value")) == [
        {"kind": "io_error", "code": "blk", "device": "nvme1n1", "value": None},
        {"kind": "io_error", "code": "ext4", "device": "mmcblk0p2", "value": None},
        {"kind": "io_error", "code": "buffer_io", "device": "mmcblk0p2", "value": None},
        # fs/ext4/page-io.c ext4_end_bio: the write that failed (signature ext4-end-bio-io-error)
        {"kind": "io_error", "code": "ext4_write", "device": "mmcblk0p2", "value": None},
        {"kind": "io_error", "code": "xfs", "device": "sdb1", "value": None},
        {"kind": "io_error", "code": "lustre", "device": None, "value": None},
        {"kind": "io_error", "code": "nfs", "device": "nfs01", "value": None},
        {"kind": "hung_task", "code": "python", "device": None, "value": 48213.0},
        {"kind": "kernel_panic", "code": "Fatal machine check", "device": None, "value": None},
        # "---[ end Kernel panic - not syncing: X ]---" is a kernel_panic row too
        {"kind": "kernel_panic", "code": "Fatal machine check", "device": None, "value": None},
    ]
    assert (acct.events, acct.irrelevant, acct.unparsed) == (10, 5, 0)
