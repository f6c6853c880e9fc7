"""The syslog of a healthy GPU node: what every node of a cluster writes while nothing is wrong.

Used by ``simulate --noise realistic`` (every node's ``kern.log``) and by the ingest benchmark's
``kernel-noise`` and ``fleet-dir`` mixes. The lines are stored as a central rsyslog collector
keeps them (all facilities of a host in one file): ``<stamp> <host> <ident>: <message>``, kernel
lines with imklog's ``[uptime]`` (``kernel: [1499771.335040] ...``).

Where each message comes from (texts as these programs print them; the same lines, from public
pastes, are in tests/data/formats/kernel.jsonl and nvidia.jsonl, groups ``healthy_boot`` /
``healthy_steady`` and the unlabelled lines of the other syslog groups):

* systemd 249-252 (Ubuntu 22.04, Debian 12) unit status: ``Starting %s...``, ``Finished %s.``
  (job.c, oneshot units), ``%s: Deactivated successfully.`` (unit.c ``unit_log_success``),
  ``Started %s.`` with the unit description (``session-N.scope - Session N of User ubuntu``);
  sysstat 12.5's ``sysstat-collect.timer`` runs ``sysstat-collect.service`` every 10 minutes.
* cron (Debian's cron 3.0pl1 ``do_command`` log ``(%s) CMD (%s)``): the sysstat cron.d entry
  ``command -v debian-sa1 > /dev/null && debian-sa1 1 1`` (every 10 minutes on nodes without
  the timer), ``/etc/crontab``'s hourly and daily run-parts lines.
* systemd-logind (logind-session.c): ``New session %s of user %s.``, ``Session %s logged out.
  Waiting for processes to exit.``, ``Removed session %s.``; OpenSSH auth.c ``Accepted %s for %s
  from %.200s port %d %s%s%s`` with the key type and SHA256 fingerprint.
* chrony 4.2 (sources.c) ``Selected source %s (%s)``; snapd 2.6x storehelpers.go:773
  ``cannot refresh: snap has no updates available: ...``; rsyslog 8.2112 ``rsyslogd was HUPed``.
* kubelet (klog header ``I%m%d %H:%M:%S.%f %7d file:line]``): kubelet_getters.go:218 ``"Pod
  status is inconsistent with cached status for pod, a reconciliation should be triggered"``;
  containerd 1.7 ``ImageCreate event`` (logrus text format).
* kernel: the audit apparmor ``type=1400`` record, auditd's ``SYSCALL ... key="gpu-tools"``,
  CNI bridge ``cni0: port %d(%s) entered forwarding state`` (net/bridge/br_stp.c),
  ``IPv6: ADDRCONF(NETDEV_CHANGE): %s: link becomes ready`` (net/ipv6/addrconf.c),
  ``eth0: renamed from tmp%s`` (net/core/dev.c), mlx5 ``Link up`` (en_main.c), ``perf:
  interrupt took too long (%d > %d), lowering kernel.perf_event_max_sample_rate to %d``
  (kernel/events/core.c), and at a boot the NVIDIA module banners, mlx5 probe and unit starts of
  the ``healthy_boot`` groups.

Volume: about 40 lines (5 KB) per node and hour with ``kubelet``, 30 (3 KB) without. No line
carries a reliability signal (a test checks the analysis of a campaign is the same with and
without them).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: one line: (time, ident, message); ident ``kernel`` gets imklog's [uptime] prefix
Entry = tuple[float, str, str]

SYSSTAT = "sysstat-collect.service - system activity accounting tool"
SA1 = "(root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)"
HOURLY = "(root) CMD (   cd / && run-parts --report /etc/cron.hourly)"
DAILY = "(root) CMD (test -x /usr/sbin/anacron || ( cd / && run-parts --report /etc/cron.daily ))"
KUBELET_SYNC = ('kubelet_getters.go:218] "Pod status is inconsistent with cached status for pod, '
                'a reconciliation should be triggered" pod="kube-system/kube-proxy-{}"')
IMAGE = ('time="{}" level=info msg="ImageCreate event name:\\"nvcr.io/nvidia/k8s/dcgm-exporter:'
         '3.3.5-3.4.1-ubuntu22.04\\" labels:{{key:\\"io.cri-containerd.image\\" value:'
         '\\"managed\\"}}"')
APPARMOR = ('audit: type=1400 audit({:.3f}:{}): apparmor="STATUS" operation="profile_replace" '
            'info="same as current profile, skipping" profile="unconfined" '
            'name="nvidia_modprobe" pid={} comm="apparmor_parser"')
SMI = ("SYSCALL arch=c000003e syscall=59 success=yes exit=0 a0=55d1 a1=55d2 a2=55d3 a3=0 items=2 "
       "ppid={} pid={} auid=1000 uid=0 gid=0 euid=0 suid=0 fsuid=0 egid=0 sgid=0 fsgid=0 "
       'tty=pts0 ses={} comm="nvidia-smi" exe="/usr/bin/nvidia-smi" key="gpu-tools"')
SNAP = ('storehelpers.go:773: cannot refresh: snap has no updates available: "core22", "lxd", '
        '"snapd"')
HUP = ('[origin software="rsyslogd" swVersion="8.2112.0" x-pid="{}" '
       'x-info="https://www.rsyslog.com"] rsyslogd was HUPed')
NIC = ("0000:17:00.0 ibp23s0", "0000:29:00.0 ibp41s0", "0000:39:00.0 ibp57s0",
       "0000:5c:00.0 ibp92s0", "0000:99:00.0 ibp153s0", "0000:aa:00.0 ibp170s0",
       "0000:b9:00.0 ibp185s0", "0000:da:00.0 ibp218s0")
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
HOUR, DAY = 3600.0, 86400.0


class NodeSyslog:
    """The healthy chatter of one node; ``entries(t0, t1)`` draws a window of it.

    ``kubelet``: a Kubernetes worker (kubelet, containerd, CNI lines); ``epoch_s``: Unix time of
    campaign t = 0 (for the stamps inside messages: containerd's RFC 3339, audit's seconds)."""

    def __init__(self, host: str, rng: np.random.Generator, *, kubelet: bool,
                 epoch_s: float) -> None:
        self.host, self.rng, self.kubelet, self.epoch_s = host, rng, kubelet, epoch_s
        self.timer = bool(rng.random() < 0.7)  #: sysstat by systemd timer, else by cron
        self.pid = {k: int(rng.integers(700, 4000)) for k in
                    ("logind", "chronyd", "kubelet", "containerd", "snapd", "rsyslogd")}
        self.next_pid = int(rng.integers(10_000, 400_000))
        self.session = int(rng.integers(100, 9000))
        self.audit_seq = int(rng.integers(100, 900))
        self.keys = ["".join(B64[int(i)] for i in rng.integers(0, 64, 43)) for _ in range(3)]
        self.cali = 0
        self.boot_t = -float(rng.uniform(2.0, 40.0)) * DAY  #: kernel uptime origin

    def boot(self, t: float) -> list[Entry]:
        """A reboot at ``t``: the kernel's uptime restarts; the boot's lines (``healthy_boot``
        groups: NVIDIA 570 open module banners, mlx5 probe, unit starts)."""
        self.boot_t = t
        rng = self.rng
        drv = ("570.133.20  Release Build  (dvs-builder@U22-I3-B12-01-2)  Wed Apr  9 22:36:52 UTC"
               " 2025")
        out: list[Entry] = [
            (t + 60.0, "kernel", "pcieport 0000:00:01.0: AER: enabled with IRQ 42"),
            (t + 61.0, "kernel", "MCE: In-kernel MCE decoding enabled."),
            (t + 63.0, "kernel", "EXT4-fs (nvme0n1p2): mounted filesystem "
             f"{int(rng.integers(0, 1 << 60)):015x} with ordered data mode. Quota mode: none."),
            (t + 70.0, "kernel", "nvidia-nvlink: Nvlink Core is being initialized, major device "
             "number 235"),
            (t + 70.5, "kernel", f"NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  {drv}"),
            (t + 70.6, "kernel", "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for "
             "UNIX platforms  570.133.20  Wed Apr  9 22:36:52 UTC 2025"),
            (t + 70.7, "kernel", "nvidia-uvm: Loaded the UVM driver, major device number 510."),
            (t + 72.0, "systemd[1]", "Started nvidia-persistenced.service - NVIDIA Persistence "
             "Daemon."),
            (t + 74.0, "systemd[1]", "Started nvidia-fabricmanager.service - NVIDIA fabric "
             "manager service."),
            (t + 75.0, f"chronyd[{self.pid['chronyd']}]", "chronyd version 4.2 starting (+CMDMON "
             "+NTP +REFCLOCK +RTC +PRIVDROP +SCFILTER +SIGND +ASYNCDNS +NTS +SECHASH +IPV6 "
             "-DEBUG)"),
        ]
        out += [(t + 66.0 + 0.2 * i, "kernel", f"mlx5_core {nic}: Link up")
                for i, nic in enumerate(NIC)]
        if self.kubelet:
            kp = self.pid["kubelet"]
            out.append((t + 80.0, "systemd[1]", "Started kubelet.service - kubelet: The "
                        "Kubernetes Node Agent."))
            out.append((t + 80.2, f"kubelet[{kp}]", f"I{self._klog(t + 80.2)} {kp:7d} "
                        'server.go:1256] "Started kubelet"'))
        return out

    def _pid(self) -> int:
        self.next_pid += int(self.rng.integers(1, 400))
        if self.next_pid > 4_000_000:
            self.next_pid = 1000
        return self.next_pid

    def _poisson(self, t0: float, t1: float, per_hour: float) -> np.ndarray:
        n = int(self.rng.poisson(per_hour * (t1 - t0) / HOUR))
        return np.sort(t0 + self.rng.random(n) * (t1 - t0))

    def _every(self, t0: float, t1: float, period: float, offset: float) -> np.ndarray:
        first = np.ceil((t0 - offset) / period) * period + offset
        base = np.arange(first, t1, period)
        return base + self.rng.random(base.size) * 0.9

    def entries(self, t0: float, t1: float) -> list[Entry]:
        """The node's lines in [t0, t1) (unsorted)."""
        out: list[Entry] = []
        add = out.append
        if self.timer:
            for t in self._every(t0, t1, 600.0, 0.0).tolist():
                add((t, "systemd[1]", f"Starting {SYSSTAT}..."))
                add((t + 0.05, "systemd[1]", "sysstat-collect.service: Deactivated successfully."))
                add((t + 0.06, "systemd[1]", f"Finished {SYSSTAT}."))
        else:
            for t in self._every(t0, t1, 600.0, 300.0).tolist():
                add((t, f"CRON[{self._pid()}]", SA1))
        for t in self._every(t0, t1, HOUR, 17 * 60.0).tolist():
            add((t, f"CRON[{self._pid()}]", HOURLY))
        for t in self._every(t0, t1, DAY, 6 * HOUR + 25 * 60.0).tolist():
            add((t, f"CRON[{self._pid()}]", DAILY))
        for t in self._every(t0, t1, DAY, 0.0).tolist():
            add((t + 1.0, f"rsyslogd[{self.pid['rsyslogd']}]", HUP.format(self.pid["rsyslogd"])))
        self._sessions(t0, t1, add)
        for t in self._poisson(t0, t1, 0.2).tolist():
            src = int(self.rng.integers(1, 4))
            add((t, f"chronyd[{self.pid['chronyd']}]",
                 f"Selected source 10.0.0.{src} (ntp{src}.cluster.internal)"))
        for t in self._poisson(t0, t1, 0.17).tolist():
            add((t, f"snapd[{self.pid['snapd']}]", SNAP))
        for t in self._poisson(t0, t1, 0.05).tolist():
            self.audit_seq += int(self.rng.integers(1, 30))
            add((t, "kernel", APPARMOR.format(self.epoch_s + t, self.audit_seq, self._pid())))
        for t in self._poisson(t0, t1, 0.02).tolist():
            add((t, "kernel", f"mlx5_core {NIC[int(self.rng.integers(8))]}: Link up"))
        for t in self._poisson(t0, t1, 0.01).tolist():
            lo = int(self.rng.integers(2501, 3300))
            add((t, "kernel", f"perf: interrupt took too long ({lo} > 2500), lowering "
                 f"kernel.perf_event_max_sample_rate to {int(self.rng.choice([50750, 79750]))}"))
        if self.kubelet:
            self._kube(t0, t1, add)
        return out

    def _sessions(self, t0: float, t1: float, add: Callable[[Entry], None]) -> None:
        """ssh logins (monitoring, admins): sshd, logind, the session scope, logout."""
        for t in self._poisson(t0, t1, 1.5).tolist():
            self.session += 1
            n, sshd = self.session, self._pid()
            ip = f"10.0.{int(self.rng.integers(1, 8))}.{int(self.rng.integers(2, 254))}"
            key = self.keys[int(self.rng.integers(3))]
            add((t, f"sshd[{sshd}]", f"Accepted publickey for ubuntu from {ip} port "
                 f"{int(self.rng.integers(32768, 61000))} ssh2: ED25519 SHA256:{key}"))
            add((t + 0.02, f"systemd-logind[{self.pid['logind']}]",
                 f"New session {n} of user ubuntu."))
            add((t + 0.03, "systemd[1]", f"Started session-{n}.scope - Session {n} of User "
                 "ubuntu."))
            if self.rng.random() < 0.3:
                add((t + 2.0, "audit", SMI.format(sshd + 2, sshd + 5, n)))
            end = t + float(self.rng.exponential(60.0)) + 1.0
            add((end, f"systemd-logind[{self.pid['logind']}]",
                 f"Session {n} logged out. Waiting for processes to exit."))
            add((end + 0.01, "systemd[1]", f"session-{n}.scope: Deactivated successfully."))
            add((end + 0.02, f"systemd-logind[{self.pid['logind']}]", f"Removed session {n}."))

    def _kube(self, t0: float, t1: float, add: Callable[[Entry], None]) -> None:
        kp = self.pid["kubelet"]
        for t in self._poisson(t0, t1, 9.0).tolist():
            add((t, f"kubelet[{kp}]", f"I{self._klog(t)} {kp:7d} "
                 + KUBELET_SYNC.format(f"{int(self.rng.integers(0, 1 << 20)):05x}")))
        for t in self._poisson(t0, t1, 0.5).tolist():  # a pod starts: CNI, veth, image
            self.cali += 1
            tag = f"{int(self.rng.integers(0, 1 << 44)):011x}"
            add((t, "kernel", f"IPv6: ADDRCONF(NETDEV_CHANGE): cali{tag}: link becomes ready"))
            add((t + 0.3, "kernel", f"eth0: renamed from tmp{tag[:5]}"))
            add((t + 0.5, "kernel", f"cni0: port {1 + self.cali % 40}(veth{tag[:8]}) entered "
                 "forwarding state"))
            add((t + 2.0, f"containerd[{self.pid['containerd']}]",
                 IMAGE.format(self._rfc3339(t + 2.0))))

    def _klog(self, t: float) -> str:
        """klog's header stamp ``%m%d %H:%M:%S.%f`` (UTC)."""
        s = np.datetime64(int((self.epoch_s + t) * 1e6), "us").astype(str)
        return f"{s[5:7]}{s[8:10]} {s[11:26]}"

    def _rfc3339(self, t: float) -> str:
        s = np.datetime64(int((self.epoch_s + t) * 1e6), "us").astype(str)
        return f"{s}{int(self.rng.integers(0, 1000)):03d}Z"




class Stamps:
    """rsyslog file stamps of campaign times (cached per second: formatting is the slow part).

    ``traditional``: RSYSLOG_TraditionalFileFormat, ``May  7 06:45:12`` (Ubuntu's default);
    ``precise``: RSYSLOG_FileFormat, ``2024-05-01T10:02:11.123456+00:00`` (Debian 12's)."""

    def __init__(self, epoch_s: float, style: str = "traditional") -> None:
        if style not in ("traditional", "precise"):
            raise ValueError(f"unknown stamp style {style!r}")
        self.epoch_s, self.style = epoch_s, style
        self._sec = -1
        self._text = ""

    def __call__(self, t: float) -> str:
        u = self.epoch_s + t
        sec = int(u // 1)
        if sec != self._sec:
            self._sec = sec
            iso = str(np.datetime64(sec, "s"))
            if self.style == "traditional":
                mon = _MONTHS[int(iso[5:7]) - 1]
                day = int(iso[8:10])
                self._text = f"{mon} {day:2d} {iso[11:19]}"
            else:
                self._text = iso
        if self.style == "traditional":
            return self._text
        return f"{self._text}.{int((u - sec) * 1e6):06d}+00:00"


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def render(host: str, entries: list[Entry], stamp: Stamps, boot_t: float
           ) -> list[tuple[float, str]]:
    """(time, line) of ``entries`` in time order (kernel lines with imklog's [uptime])."""
    entries.sort(key=lambda e: e[0])
    out = []
    for t, ident, msg in entries:
        if ident == "kernel":
            out.append((t, f"{stamp(t)} {host} kernel: [{t - boot_t:12.6f}] {msg}"))
        else:
            out.append((t, f"{stamp(t)} {host} {ident}: {msg}"))
    return out
