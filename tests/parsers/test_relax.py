"""Relaxed patterns (parsers/relax.py): a Rust regex that matches wherever its pattern can be
found, cannot tell digits apart, and confirms a prefilter candidate without changing a row."""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import polars as pl
import pytest

from parsers.message import global_prefilter
from parsers.relax import relaxed
from parsers.signature_table import builtin
from tests.parsers.test_prefilter import _parse_all

ALL = [chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i <= 0xDFFF]


@pytest.mark.parametrize("pattern", [
    r"\s", r"\S", r"\w", r"\W", r"\d", r"\D", r"[\s]", r"[^\s]", r"[^\w]", r"[^\d]",
    r"[\w.-]", r"[^\S]", r"[^\W]", r"[^\D]", r"[a-f3-7]", r"[^a-f3-7]", r"5", r"[^5]", r".",
    r"[^x\d]", r"[\d\s]", r"[^\s\w]"])
def test_relaxed_class_holds_every_character_python_matches(pattern: str) -> None:
    """Python's ``\\s`` and ``\\w`` hold characters Rust's do not (``\\x1c``, ``²``): the
    relaxed class must hold every one of them, on every code point."""
    rx = relaxed(pattern)
    assert rx is not None
    py = re.compile(pattern)
    want = [py.fullmatch(ch) is not None for ch in ALL]
    got = pl.Series(ALL).str.contains("^(?:" + rx + ")$").to_list()
    missed = [hex(ord(ch)) for ch, w, g in zip(ALL, want, got, strict=True) if w and not g]
    assert missed == [], (pattern, rx, missed[:10])


def test_relaxed_form_cannot_tell_digits_apart() -> None:
    rx = relaxed(r"Xid \(PCI:0000:3b:00\): 79, pid=(\d+)")
    assert rx is not None
    s = pl.Series(["Xid (PCI:0000:3b:00): 79, pid=12", "Xid (PCI:1234:3b:56): 13, pid=7",
                   "Xid (PCI:0000:3b:00): 7x, pid=1"])
    assert s.str.contains(rx).to_list() == [True, True, False]


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?i)error", r"x(?i:error)", r"(?(1)a|b)"])
def test_what_cannot_be_relaxed_safely_is_none(pattern: str) -> None:
    assert relaxed(pattern) is None


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    atoms = ["a", "b", "7", "0", " ", ":", r"\.", r"\d", r"\s", r"\w", r"\S", "[a-c]",
             "[^a]", "[0-4]", "[^0-4x]", ".", "^", "$", r"\b", "(?=a)", "(?!b)", "(?<=a)"]
    parts = []
    for _ in range(rng.randint(1, 5)):
        r = rng.random()
        if r < 0.15 and depth < 2:
            inner = _random_pattern(rng, depth + 1)
            parts.append(rng.choice([f"({inner})", f"(?:{inner})", f"(?:{inner}|"
                                     f"{_random_pattern(rng, depth + 1)})", f"(?>{inner})"]))
        else:
            parts.append(rng.choice(atoms))
        if rng.random() < 0.3:
            parts[-1] = "(?:" + parts[-1] + ")" + rng.choice(["*", "+", "?", "{1,3}", "*?",
                                                              "{2}", "++"])
    return "".join(parts)


def test_relaxed_matches_wherever_the_pattern_matches() -> None:
    """Random patterns (assertions, look-arounds, atomic groups, lazy and possessive
    repeats, digit classes) on random lines: wherever Python finds the pattern, the relaxed
    form is found, in the line and with its digits changed; it can also be found elsewhere."""
    rng = random.Random(20261203)
    alphabet = "ab7 0:.\x1c²xZ9-"
    lines = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
             for _ in range(400)]
    other = [ln.translate(str.maketrans("0123456789", "5738291046")) for ln in lines]
    tested = found = 0
    for _ in range(600):
        p = _random_pattern(rng)
        try:
            py = re.compile(p)
        except re.error:
            continue
        rx = relaxed(p)
        assert rx is not None, p
        hit = [py.search(ln) is not None for ln in lines]
        for variant in (lines, other):
            got = pl.Series(variant).str.contains(rx).to_list()
            bad = [ln for ln, h, g in zip(variant, hit, got, strict=True) if h and not g]
            assert bad == [], (p, rx, bad[:5])
        tested += 1
        found += sum(hit)
    assert tested > 500 and found > 10_000


def test_every_signature_relaxes_and_matches_its_examples_in_a_longer_line() -> None:
    for sig in builtin():
        rx = relaxed(sig.regex.pattern)
        assert rx is not None, sig.id  # a new signature that does not relax: say why here
        lines = [f"Mar  1 12:00:01 node0007 prog[4411]: {ex} (x)" for ex in sig.examples]
        assert all(pl.Series(lines).str.contains(rx).to_list()), sig.id


def _coloured(ex: str) -> str:
    return " ".join(f"\x1b[31m{w}\x1b[0m" if i % 2 else w for i, w in enumerate(ex.split(" ")))


def _variants(ex: str, rng: random.Random) -> list[str]:
    """Lines near a signature's example: cut, its words shuffled or spaced, JSON-wrapped."""
    shuffled = ex.split(" ")
    rng.shuffle(shuffled)
    cut = ex[: max(1, len(ex) * 2 // 3)]
    return [ex, cut, " ".join(shuffled), ex.replace(" ", "  "),
            json.dumps({"log": ex + "\n", "stream": "stderr"}),
            json.dumps({"log": cut.replace(" ", "\t") + "\n", "stream": "stdout"}),
            "[rank3]: " + " ".join(shuffled), "Mar  1 12:00:01 node0007 kernel: " + cut]


def test_rewritten_lines_are_never_confirmed_away() -> None:
    """A coloured or JSON-escaped line's message is not a part of it (``strip_ansi``, JSON
    decoding), so its relaxed patterns cannot judge it: it stays a candidate on its anchors."""
    lines = []
    for sig in builtin():
        for ex in sig.examples:
            lines += [_coloured(ex), json.dumps({"log": _coloured(ex)}), json.dumps({"m": ex})]
    series = pl.Series(lines)
    pf = global_prefilter(claims=False)
    flat = series.str.contains(pf.pattern).to_numpy()
    ok = series.str.contains(r"[\x1b\\]").to_numpy()
    assert (pf.mask_np(series) == flat)[ok].all()


@pytest.mark.parametrize("source", [
    "-", "kernel", pytest.param("joblog", marks=pytest.mark.slow),
    pytest.param("text", marks=pytest.mark.slow)])
def test_confirmed_candidates_change_nothing(tmp_path: Path, source: str) -> None:
    """Lines that hold a signature's anchor but not its pattern (cut, shuffled, spaced,
    JSON-wrapped) and a public server's sshd lines: every row, count and sample the same with
    the confirmation on and off. (With the prefilter off too, a file that jumbles the months
    of several examples differs in the year of a few year-less stamps, and one kernel line's
    count, with or without the confirmation; the corpus and the sample logs agree in all
    three: ``test_prefilter``.)"""
    rng = random.Random(7)
    groups = [["Dec 10 09:11:52 LabSZ sshd[24460]: Failed password for sshd from 103.99.0.122 "
               "port 51359 ssh2",  # logpai/loghub OpenSSH_2k.log
               "Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure; logname= "
               "uid=0 euid=0 tty=NODEVssh ruser= rhost=218.188.2.4 "]]  # loghub Linux_2k.log
    for sig in builtin():
        groups += [_variants(ex, rng) for ex in sig.examples[:2]]
    # a file per example: its variants' year-less stamps in one order (a jumble of months
    # across examples gives lines Python does not see a say in the year: see above)
    files = []
    for i, g in enumerate(groups):
        p = tmp_path / f"ex{i:03d}.log"
        p.write_text("\n".join(g) + "\n", encoding="utf-8")
        files.append(str(p))
    lines = [x for g in groups for x in g]
    pf = global_prefilter(claims=False)
    series = pl.Series(lines)
    flat = pl.Series(series).str.contains(pf.pattern).to_list()
    confirmed = pf.mask_np(series)
    assert sum(flat) - int(confirmed.sum()) > 100  # the test holds lines confirmed away
    off, on = _parse_all(files, source, "1", confirm="0"), _parse_all(files, source, "1")
    assert [a[0] for a, b in zip(off, on, strict=True) if a != b] == []


# Lines whose only TorchDistMatcher keywords are checked ones (TorchDistMatcher.CHECKED).
_ERROR_ONLY_LINES = [
    # kubernetes pkg/kubelet/pod_workers.go (klog.ErrorS): glog-prefixed, claimed as noise
    'E0501 00:02:26.239508    2251 pod_workers.go:1298] "Error syncing pod, skipping" '
    'err="failed to \\"StartContainer\\" for \\"trainer\\" with CrashLoopBackOff" '
    'pod="default/llama-0"',
    # torch/distributed/elastic/rendezvous (RendezvousTimeoutError), c10d DistNetworkError
    "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
    "torch.distributed.DistNetworkError: Connection reset by peer",
    # the same class as a trainer's own ``log.error(repr(e))`` prints it (Python's repr)
    "ERROR:train:RendezvousTimeoutError()",
    # torch/distributed/elastic/multiprocessing/api.py; c10d socket.cpp (torch 2.2+)
    "Sending process 41277 closing signal SIGTERM",
    "[W socket.cpp:663] [c10d] The client socket has timed out after 900s while trying to "
    "connect to (node-0, 29500).",
    "RuntimeError: The server socket has failed to listen on any local network address. The "
    "server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).",
    # c10/util/Logging.cpp prefix (ProcessGroupGloo.cpp monitoredBarrier)
    "[E ProcessGroupGloo.cpp:138] Rank 1 successfully reached monitoredBarrier, but received "
    "errors while waiting for send/recv from rank 0.",
    # openssh sshd.c; containerd's logrus line; systemd: claimed by none
    "error: kex_exchange_identification: Connection closed by remote host",
    'time="2024-05-01T00:00:01.000000000Z" level=error msg="failed to delete dangling shim"',
    "Error: Could not resolve host: mirror.example.org",
    # the kernel's audit init and openssh's sshd on SIGTERM (loghub Linux_2k.log)
    "audit: initializing netlink socket (disabled)",
    "Received signal 15; terminating.",
]


def test_error_only_lines_claimed_per_line_pass_the_prefilter() -> None:
    """Every such line TorchDistMatcher claims (fresh, as at the start of a file) passes
    the prefilter; the sshd / containerd / curl-like ones it does not claim are kept out."""
    from parsers.torch_dist import TorchDistMatcher

    mask = global_prefilter(claims=False).mask_np(pl.Series(_ERROR_ONLY_LINES))
    claimed = [TorchDistMatcher().match(x, 1, lambda **kw: None) is not None
               for x in _ERROR_ONLY_LINES]
    assert claimed[:8] == [True] * 8 and claimed[8:] == [False] * 5
    assert list(mask) == claimed


# kubectl's describe / get events wording (kubernetes/kubectl describe.go, printers.go) and
# other programs' lines with the same words (logpai/loghub Mac_2k.log: syncPowerState:)
_K8S_WORD_LINES = [
    ("    State:          Terminated", True),
    ("      Reason:       Evicted", True),
    ("      Exit Code:    137", False),  # claimed only under a Terminated state
    ("  Message:  The node was low on resource: memory.", False),  # under an eviction
    ("Status:           Failed", True),
    ("  Warning  BackOff  2m (x25 over 10m)  kubelet  Back-off restarting failed container",
     True),
    ("5m          Normal    Scheduled   pod/trainer-0   Successfully assigned default/trainer-0",
     True),
    ("kernel[0]: AppleBCM5701Ethernet _Brcm43xx::syncPowerState: WWEN[enabled]", False),
    ("Warning: Permanently added 'node7' (ED25519) to the list of known hosts.", False),
]


def test_k8s_word_lines_claimed_per_line_pass_the_prefilter() -> None:
    """A line K8sText claims (fresh) passes the prefilter; the other programs' lines with
    ``State:`` or ``Warning`` do not (``K8sText.CHECKED``)."""
    from parsers.k8s_text import K8sText

    lines = [x for x, _ in _K8S_WORD_LINES]
    mask = global_prefilter(claims=False).mask_np(pl.Series(lines))
    claimed = [K8sText().match(x, 1, lambda **kw: None) is not None for x in lines]
    assert claimed == [c for _, c in _K8S_WORD_LINES]
    assert all(m for m, c in zip(mask, claimed, strict=True) if c)
    assert not mask[-1] and not mask[-2]
