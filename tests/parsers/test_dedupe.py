"""Masks evaluated once per digit-zeroed line shape (parsers/dedupe.py) must equal the masks
evaluated line by line, for every pattern set the dialects use."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest

from parsers import dedupe, joblog_plan, kernel_plan, prefilter, reader
from parsers.message import global_prefilter
from parsers.signature_table import builtin

# real-format lines (their sources are cited where the dialects' tests give them): syslog
# envelopes of several programs, NCCL INFO (init.cc / transport), Megatron, an Xid, Slurm
SHAPES = [
    "May {} 0{}:1{}:2{} gpu-node-{} kernel: [{}.{}] EXT4-fs (nvme0n1p{}): mounted filesystem",
    "May {} 0{}:1{}:2{} gpu-node-{} kernel: [{}.{}] EXT{}-fs (sda{}): recovery complete",
    "May {} 0{}:1{}:2{} gpu-node-{} kernel: [{}.{}] mlx{}_core 0000:{}:00.0: Port module event",
    "<{}>1 2024-05-0{}T1{}:00:0{}.{}Z node{} kernel - - - NVRM: Xid (PCI:0000:{}:00): 79, pid={}",
    "May 0{} 1{}:2{}:3{} node{} systemd[{}]: Started Session {} of user root.",
    "node{}:{}:{} [{}] NCCL INFO Channel 0{}/32 : {}[{}] -> {}[{}] via P2P/IPC",
    "node{}:{}:{} [{}] NCCL INFO comm 0x{}e{} rank {} nranks {} cudaDev {} busId {}000 - Init",
    "[rank{}] step {} | loss {}.{} | {} ms/it 0x{}",
    " iteration {}/ {} | consumed samples: {} | elapsed time per iteration (ms): {}.{}",
    "[2024-05-01 1{}:0{}:0{},{}] [INFO] [logging.py:{}:log_dist] [Rank {}] step={}",
    "", "   ", "{}", "Event(v{}.ObjectReference{{Kind:\"Pod\"}}) {}",
]
DIGITS = ["0", "1", "4", "5", "7", "9"]  #: (a one-digit number keeps a line's shape)
WIDER = ["12", "57", "0000", "99999"]


def _lines(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        shape = rnd.choice(SHAPES)
        out.append(shape.format(*(rnd.choice(DIGITS if rnd.random() < 0.97 else WIDER)
                                   for _ in range(shape.count("{}")))))
    for sig in builtin():  # every signature's own example lines, digits and all
        out += list(sig.examples) * 3
    rnd.shuffle(out)
    return out


PATTERN_SETS = {
    "kernel": ({"env": kernel_plan.V_ENVELOPE, "ws": r"^\s", "blank": r"^\s*$",
                "fm": kernel_plan.FM_ERROR, "kernel": "kernel", "bracket": r"^\s*\[",
                "cand": global_prefilter(claims=False), **kernel_plan.FMT_HINTS},
               {"month": kernel_plan.V_SHORT}),
    "joblog": ({"nccl": joblog_plan.V_NCCL_INFO, "empty": joblog_plan.V_EMPTY,
                "level": joblog_plan.V_LEVEL_NOISE, "stamped": joblog_plan.V_STAMPED,
                "c1": global_prefilter(), "c0": global_prefilter(claims=False)}, {}),
    "text": ({"cand": global_prefilter(), "blank": r"^\s*$", "stamped": prefilter.STAMPED,
              "glog": prefilter.GLOG_MONTH}, {"month": prefilter.SHORT_MONTH}),
}


@pytest.mark.parametrize("name", sorted(PATTERN_SETS))
def test_masks_on_shapes_equal_masks_on_lines(name: str) -> None:
    pats, months = PATTERN_SETS[name]
    lines = pl.Series(_lines(dedupe.MIN_LINES + 500, seed=len(name)))
    u = dedupe.shapes(lines)
    assert len(u.keys) < len(lines) // 4  # the test exercises the shapes
    got = prefilter.masks(lines, pats, months, unique=u)
    want = prefilter.masks(lines, pats, months, unique=None)
    assert sorted(got) == sorted(want)
    for k in want:
        assert np.array_equal(got[k], want[k]), k
    if "cand" in want:
        assert want["cand"].any() and not want["cand"].all()


def test_joblog_plan_on_shapes_equals_plan_on_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """``joblog_plan.plan`` with shapes runs each candidate prefilter on its own shapes (the
    claims-free one on NCCL INFO lines' shapes only, ``Unique.subset``); without shapes, on
    the lines. Every signature's example also stands behind an NCCL INFO prefix, so both
    prefilters have candidates among their shapes."""
    base = _lines(dedupe.MIN_LINES + 500, seed=3)
    nccl = [f"node1:2:3 [0] NCCL INFO {x}" for s in builtin() for x in s.examples] + [
        "node1:2:3 [0] NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/IPC"] * 50
    lines = pl.Series(base + nccl * 2)
    u = dedupe.unique_lines(lines)
    assert u is not None and len(u.keys) < len(lines) // 4
    got = joblog_plan.plan(lines)
    monkeypatch.setattr(dedupe, "unique_lines", lambda *a, **k: None)
    want = joblog_plan.plan(lines)
    for field in ("candidate", "noise", "context"):
        assert np.array_equal(getattr(got, field), getattr(want, field)), field
    tail = want.candidate[len(base):]
    assert tail.any() and not tail.all()  # NCCL INFO lines on both sides
    assert want.candidate[:len(base)].any()


def test_subset_keeps_the_lines_of_the_kept_shapes() -> None:
    lines = pl.Series(["a1", "b2", "a3", "c4", "b5", "a6"])
    u = dedupe.shapes(lines)
    keep = np.array([k != "b0" for k in u.keys.to_list()])
    idx, sub = u.subset(keep)
    assert idx.tolist() == [0, 2, 3, 5]
    assert sub.keys.to_list() == ["a0", "c0"]
    assert [sub.keys[int(c)] for c in sub.codes] == ["a0", "a0", "c0", "a0"]
    assert u.subset(np.ones(len(u.keys), bool))[1] is u


def test_of_lines_is_the_shapes_of_those_lines() -> None:
    """``of_lines``: the lines' keys, each key once, only keys those lines have -- what
    ``shapes`` of the gathered lines finds (its keys in another order)."""
    lines = pl.Series(["a1", "b2", "a3", "c4", "b5", "a6", "d7"])
    u = dedupe.shapes(lines)
    for idx in ([0, 2, 5], [3, 1, 6], [6], [4, 0, 3, 2]):
        got = u.of_lines(np.array(idx))
        want = dedupe.shapes(lines.gather(idx))
        assert got.keys.gather(got.codes).to_list() == want.keys.gather(want.codes).to_list()
        assert sorted(got.keys.to_list()) == sorted(want.keys.to_list())
        assert got.keys.n_unique() == len(got.keys)


def test_digit_literals_are_confirmed_on_the_line() -> None:
    """``mlx5_cmd_out_err`` is a literal of the prefilter: on keys it is ``mlx0_cmd_out_err``,
    which ``mlx7_cmd_out_err`` has too; the line itself decides."""
    cp = global_prefilter(claims=False)
    parts = cp.key_parts
    assert parts is not None and parts.relaxed is not None
    lines = pl.Series(["May 1 00:00:00 h kernel: mlx5_core 0000:3b:00.0: mlx5_cmd_out_err:838:(p"
                       "id 0): QUERY_VPORT_STATE(0x750) op_mod(0x0) failed, status bad",
                       "May 1 00:00:00 h kernel: mlx5_core 0000:3b:00.0: mlx7_cmd_out_err:838:(p"
                       "id 0): QUERY_VPORT_STATE(0x750) op_mod(0x0) failed, status bad"] * 9000)
    got = prefilter.masks(lines, {"c": cp}, unique=dedupe.shapes(lines))["c"]
    assert got[0::2].all() and not got[1::2].any()


@pytest.mark.parametrize(("pattern", "blind"), [
    (r"\d{4}-\d\d", True), (r"[0-9a-f]{12,}", True), (r"\w+\S*[^\s:]", True),
    (r"[a-z0-9.\-]*\d: ", True), (r"[^0-9]x", True), (r"<\d{1,3}>1 ", False),
    (r"[1-9]", False), (r"[^0]", False), (r"0x[0-9a-f]+", False), (r"(a)\1", False),
    (r"(?i:mlx5)", False), (r"[[:digit:]]", False),
])
def test_digit_blind(pattern: str, blind: bool) -> None:
    assert dedupe.digit_blind(pattern) is blind


def test_keys_zero_every_ascii_digit_and_nothing_else() -> None:
    lines = [*_lines(3000, seed=3), "\u0663\u0664 caf\u00e9 12", "1234567890123", "x" * 40]
    data = ("\n".join(lines) + "\n").encode()
    series = reader.lines_series(data)  # string views: inline lines and long ones
    want = [x.translate(str.maketrans("123456789", "000000000")) for x in lines]
    assert dedupe.keys(series).to_list() == want
    idx = np.arange(len(lines))[::-7]
    assert dedupe.keys(series.gather(idx)).to_list() == [want[i] for i in idx]
    assert dedupe.keys(series.slice(5, 100)).to_list() == want[5:105]


def test_zero_digit_bytes_is_translate_on_every_byte_value() -> None:
    raw = bytes(range(256)) * 3 + "\u0663 caf\u00e9 09".encode()
    got = dedupe.zero_digit_bytes(np.frombuffer(raw, np.uint8))
    assert got.tobytes() == raw.translate(bytes.maketrans(b"123456789", b"000000000"))


def test_worth_it_only_where_lines_repeat() -> None:
    rnd = random.Random(1)
    varied = pl.Series(["".join(rnd.choice("abcdefgh ") for _ in range(60))
                        for _ in range(dedupe.MIN_LINES + 10)])
    assert dedupe.unique_lines(varied) is None
    assert dedupe.unique_lines(pl.Series(_lines(1000, seed=2))) is None  # a small chunk
    repeated = pl.Series(_lines(dedupe.MIN_LINES + 10, seed=4))
    u = dedupe.unique_lines(repeated)
    assert u is not None and len(u.codes) == len(repeated)
    assert (u.keys.gather(u.codes) == dedupe.keys(repeated)).all()
