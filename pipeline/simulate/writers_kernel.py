"""Kernel log lines (``nodes/<node>/kern.log``) in rsyslog's Debian 12 default high-precision
file format: ``2024-05-01T10:02:11.123456+00:00 node017 kernel: [123456.789012] <message>``.

Message texts (as NVIDIA's driver and the kernel print them):

* Xid (open-gpu-kernel-modules ``nvRmXid``/``nvErrorLog``; texts as in NVIDIA's Xid catalogue
  and field reports): ``NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has
  fallen off the bus.``; 48 ``An uncorrectable double bit error (DBE) has been detected on GPU in
  the framebuffer at physAddr 0x... partition N, subpartition M``; 94 ``Contained: CE User
  Channel (0x9). RST: No, D-RST: No``; 95 ``Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST:
  No``; 63 ``Row Remapper: New row marked for remapping, reset gpu to activate.``; 119 ``Timeout
  after 6s of waiting for RPC response from GPU1 GSP! Expected function 76 (GSP_RM_CONTROL)
  (0x20802a02 0x8).``
* mlx5: ``mlx5_core 0000:17:00.0 ibp23s0: Link down``.
* block layer: ``blk_update_request: I/O error, dev nvme0n1, sector ... op 0x1:(WRITE) flags 0x0
  phys_seg 1 prio class 0``.
* MCE: ``mce: [Hardware Error]: Machine check events logged``.
* healthy noise: ``nvidia-uvm: Loaded the UVM driver, major device number 508.`` and systemd's
  ``Started session-N.scope - Session N of User root.``
"""

from __future__ import annotations

import numpy as np

from pipeline.simulate.timefmt import Clock

#: PCI bus of GPU 0..7 on an HGX H100 board
GPU_BUS = ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")
#: ConnectX NIC for GPU 0..7 and its IPoIB name
NIC = (("0000:17:00.0", "ibp23s0"), ("0000:29:00.0", "ibp41s0"), ("0000:39:00.0", "ibp57s0"),
       ("0000:5c:00.0", "ibp92s0"), ("0000:99:00.0", "ibp153s0"), ("0000:aa:00.0", "ibp170s0"),
       ("0000:b9:00.0", "ibp185s0"), ("0000:da:00.0", "ibp218s0"))


class KernelLogs:
    """Collects kernel lines per node (few: only at faults, boots and noise) and writes them
    sorted by time at the end."""

    def __init__(self, clock: Clock, rng: np.random.Generator) -> None:
        self.clock = clock
        self.rng = rng
        self.lines: dict[str, list[tuple[float, str]]] = {}
        self.boot: dict[str, float] = {}

    def _boot(self, node: str) -> float:
        if node not in self.boot:
            self.boot[node] = -float(self.rng.uniform(2.0, 40.0)) * 86400.0
        return self.boot[node]

    def add(self, node: str, t: float, msg: str, ident: str = "kernel") -> None:
        if ident == "kernel":
            up = t - self._boot(node)
            text = f"{self.clock.rsyslog(t)} {node} kernel: [{up:12.6f}] {msg}"
        else:
            text = f"{self.clock.rsyslog(t)} {node} {ident}: {msg}"
        self.lines.setdefault(node, []).append((t, text))

    def reboot(self, node: str, t: float) -> None:
        self.boot[node] = t
        self.add(node, t + float(self.rng.uniform(20.0, 40.0)),
                 "nvidia-uvm: Loaded the UVM driver, major device number 508.")

    def fault(self, category: str, node: str, gpu: int | None, t: float) -> None:
        g = gpu if gpu is not None else int(self.rng.integers(8))
        pci = f"PCI:0000:{GPU_BUS[g % 8]}:00"
        xid = f"NVRM: Xid ({pci}): "
        who = "pid='<unknown>', name=<unknown>, "
        if category in ("gpu_hardware", "nvlink"):
            self.add(node, t, f"{xid}79, {who}GPU has fallen off the bus.")
        elif category == "gpu_memory":
            kind = int(self.rng.integers(3))
            if kind == 0:
                addr = int(self.rng.integers(0x10000000, 0x7FFFFFFFF))
                self.add(node, t, f"{xid}48, {who}An uncorrectable double bit error (DBE) has "
                         f"been detected on GPU in the framebuffer at physAddr {addr:#x} "
                         f"partition {int(self.rng.integers(8))}, subpartition "
                         f"{int(self.rng.integers(2))}")
                self.add(node, t + 0.002, f"{xid}63, {who}Row Remapper: New row marked for "
                         "remapping, reset gpu to activate.")
            elif kind == 1:
                self.add(node, t, f"{xid}94, {who}Contained: CE User Channel (0x9). RST: No, "
                         "D-RST: No")
            else:
                self.add(node, t, f"{xid}95, {who}Uncontained: LTC TAG (0x2,0x0). RST: Yes, "
                         "D-RST: No")
        elif category == "gpu_driver":
            for k in range(2):
                self.add(node, t + 6.0 * k, f"{xid}119, pid=2961, name=python3, Timeout after 6s"
                         f" of waiting for RPC response from GPU{g} GSP! Expected function 76 "
                         "(GSP_RM_CONTROL) (0x20802a02 0x8).")
        elif category == "network":
            bdf, dev = NIC[g % 8]
            self.add(node, t, f"mlx5_core {bdf} {dev}: Link down")
        elif category == "storage":
            sector = int(self.rng.integers(1, 2**31))
            self.add(node, t, f"blk_update_request: I/O error, dev nvme0n1, sector {sector} op "
                     "0x1:(WRITE) flags 0x0 phys_seg 1 prio class 0")
        elif category == "node_failure" and self.rng.uniform() < 0.5:
            self.add(node, t - float(self.rng.uniform(1.0, 20.0)),
                     "mce: [Hardware Error]: Machine check events logged")

    def noise(self, node: str, t0: float, t1: float) -> None:
        """Interactive root sessions every few hours on a healthy node."""
        t = t0 + float(self.rng.exponential(6 * 3600.0))
        n = int(self.rng.integers(1, 40))
        while t < t1:
            self.add(node, t, f"Started session-{n}.scope - Session {n} of User root.",
                     ident="systemd[1]")
            n += 1
            t += float(self.rng.exponential(6 * 3600.0))

    def sorted_lines(self) -> dict[str, list[str]]:
        return {n: [x for _, x in sorted(v)] for n, v in sorted(self.lines.items())}
