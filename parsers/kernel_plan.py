"""The kernel dialect's vectorised plan (parsers/prefilter.py): its envelopes as Rust-regex
tests and the masks of a chunk, which depend on the chunk alone (so ``KernelLogParser.prepare``
runs them on the driver's helper thread); ``KernelLogParser.vector_plan`` combines them with
the file's state."""

from __future__ import annotations

import numpy as np
import polars as pl

from parsers import line_heads, prefilter
from parsers.message import global_prefilter

# The envelopes as vectorised (Rust regex) tests, mirroring KernelLogParser._envelope:
V_MON = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
V_TAG = r"(?:[^\s:\[\]]+ )?[^\s:\[\]]+(?:\[\d+\])?:"
V_SHORT = (r"^\s*(?:<\d{1,3}>)?(" + V_MON + r") (?: \d|\d\d) \d\d:\d\d:\d\d(?:\.\d{1,6})? "
            + V_TAG)
V_ENVELOPE = (r"^\s*(?:\[\s*\d+\.\d+\]|\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) " + V_MON
               + r" [ \d]\d \d\d:\d\d:\d\d \d{4}\]"
               r"|(?:<\d{1,3}>)?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d) "
               r"|<\d{1,3}>1 \S+ \S+ \S+ \S+ \S+ (?:-|\[)"
               r"|(?:<\d{1,3}>)?" + V_MON + r" (?: \d|\d\d) \d\d:\d\d:\d\d(?:\.\d{1,6})? " + V_TAG
               + ")")
FM_ERROR = r"nv-fabricmanager.*(?:\[ERROR\]|failed with error)"


#: what decides a ``Mon DD`` line's variant by itself (``_short_fmt``'s rule), as masks
FMT_HINTS = {"rfc_pri": r"^\s*<\d{1,3}>", "rfc_day": r"^\s*[A-Z][a-z]{2}  \d ",
              "rfc_up": V_SHORT + r" ?\[\s*\d+\.\d+\]",
              "frac": r"^\s*[A-Z][a-z]{2} (?: \d|\d\d) \d\d:\d\d:\d\d\.",
              "zero": r"^\s*[A-Z][a-z]{2} 0"}


#: the masks ``prefix_masks`` answers with numpy (anchored tests of a line's first bytes)
PREFIX: dict[str, prefilter.Pattern] = {
    "ws": r"^\s", "blank": r"^\s*$", "bracket": r"^\s*\[",
    **{k: v for k, v in FMT_HINTS.items() if k != "rfc_up"}}


def prefix_masks(lines: pl.Series) -> dict[str, np.ndarray]:
    """``PREFIX``'s masks: numpy on the first 16 bytes of the lines ``line_heads.plain``
    marks (there ``^\\s*`` matches nothing), the regexes on the others (~9 ms of CPU per
    8 MiB chunk of syslog less than seven regexes over every line)."""
    m, lens = line_heads.heads(lines, 16)
    ok = line_heads.plain(m, lens)
    dg = line_heads.digit(m)
    mon = line_heads.upper(m[:, 0]) & line_heads.lower(m[:, 1]) & line_heads.lower(m[:, 2]) \
        & (m[:, 3] == 32)  # "Mmm "
    pri = (m[:, 0] == 60) & dg[:, 1] & ((m[:, 2] == 62) | dg[:, 2] & (
        (m[:, 3] == 62) | dg[:, 3] & (m[:, 4] == 62)))  # <N>, <NN>, <NNN>
    day = ((m[:, 4] == 32) & dg[:, 5]) | (dg[:, 4] & dg[:, 5])  # " D" or "DD"
    clock = (m[:, 6] == 32) & dg[:, 7] & dg[:, 8] & (m[:, 9] == 58) & dg[:, 10] & dg[:, 11] \
        & (m[:, 12] == 58) & dg[:, 13] & dg[:, 14]
    out = {"ws": np.zeros(len(lens), bool), "blank": np.zeros(len(lens), bool),
           "bracket": m[:, 0] == 91, "rfc_pri": pri,
           "rfc_day": mon & (m[:, 4] == 32) & dg[:, 5] & (m[:, 6] == 32),
           "frac": mon & day & clock & (m[:, 15] == 46), "zero": mon & (m[:, 4] == 48)}
    rest = np.flatnonzero(~ok)
    if rest.size:
        got = prefilter.masks(lines.gather(rest), PREFIX, {}, unique=None)
        for k, v in out.items():
            v &= ok
            v[rest] = got[k]
    return out


#: ``kernel_common.split_label``'s label (``PDSH``) without its look-ahead (Rust's regex has
#: none): the words it refuses are tested on the labels apart (``_NOT_LABEL``)
V_LABEL = r"^([a-z][a-z0-9.\-]*\d): "
_NOT_LABEL = r"^(?:slurmstepd|srun|sbatch|salloc|slurmd|slurmctld)[.\-]"


def unlabel(lines: pl.Series) -> pl.Series:
    """``lines`` without the parallel-shell label ``split_label`` takes off each (the same
    Series when no line begins with a lower-case letter: no regex then): the masks of a
    ``pdsh ... dmesg`` file are those of its lines as the nodes wrote them."""
    if not line_heads.lower(line_heads.first_bytes(lines)).any():
        return lines  # (a label begins with a lower-case letter)
    line = pl.col("l")
    label = line.str.extract(V_LABEL, 1)
    keep = label.is_not_null() & ~label.str.contains(_NOT_LABEL)
    return pl.DataFrame({"l": lines}).select(
        pl.when(keep).then(line.str.slice(label.str.len_chars() + 2)).otherwise(line)
        .alias(lines.name)).to_series()


def masks(lines: pl.Series) -> dict[str, np.ndarray]:
    """The chunk's masks. ``env`` is tested only on the lines without a ``V_SHORT`` month
    (``month`` 0): ``V_SHORT`` is ``V_ENVELOPE``'s last branch (with the same ``^\\s*``), so
    a line with one has an envelope; a healthy syslog's lines all have one (~4 ms of CPU per
    8 MiB chunk not spent)."""
    m = prefilter.masks(lines, {
        "fm": FM_ERROR, "kernel": "kernel", "cand": global_prefilter(claims=False),
        "rfc_up": FMT_HINTS["rfc_up"]}, {"month": V_SHORT})
    m.update(prefix_masks(lines))
    env = m["month"] > 0
    rest = np.flatnonzero(~env)
    if rest.size * 2 > env.size:
        env |= prefilter.mask(lines, V_ENVELOPE)
    elif rest.size:
        env[rest] = prefilter.mask(lines.gather(rest), V_ENVELOPE)
    m["env"] = env
    return m


#: the ``Mon DD`` variants by code (``fmt_hints``); 0: the line keeps the file's current one
FMTS = ("", "journal-short", "journal-short-precise", "syslog-rfc3164")


def fmt_hints(m: dict[str, np.ndarray], short: np.ndarray) -> np.ndarray:
    """The variant each ``Mon DD`` line decides by itself, as a code of ``FMTS`` (0 where it
    keeps the file's current one), as ``_short_fmt`` decides it (``m``: the ``FMT_HINTS``
    masks)."""
    rfc = m["rfc_pri"] | m["rfc_day"] | m["rfc_up"]
    out = np.zeros(short.size, np.int8)
    out[short & m["zero"]] = 1
    out[short & m["frac"]] = 2
    out[short & rfc] = 3
    return out


def forward_fill(codes: np.ndarray, start: int) -> np.ndarray:
    """Each 0 replaced by the last non-zero code before it (``start`` before the first)."""
    idx = np.where(codes > 0, np.arange(codes.size), -1)
    np.maximum.accumulate(idx, out=idx)
    return np.where(idx >= 0, codes[np.maximum(idx, 0)], start).astype(np.int8)
