"""The job-log dialect's vectorised Megatron iteration rows (``joblog_fast``'s lines): their
prefixes read (stamps, ranks; a table per distinct prefix, or ``kubectl logs --timestamps``
stamps vectorised) and their EVENTS rows built per chunk, with the stamps of unstamped rows
inherited over every line of the chunk, as the per-line path inherits them."""

from __future__ import annotations

from datetime import UTC, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

from parsers import fastrows, progress_batch
from parsers.joblog_fast import kubectl_us, view_series
from parsers.joblog_prefix import Prefix, split_prefix

NO_TS = np.iinfo(np.int64).min  #: no stamp

#: a prefix that is only ``kubectl logs --timestamps``' RFC3339Nano UTC stamp (and spaces):
#: split_prefix reads it as an exact stamp and nothing else (a date that does not exist is
#: null here and left to split_prefix)
V_KUBECTL = r"^(" + fastrows.ISO_SECONDS + r")(?:\.([0-9]{1,9}))?Z +$"


def fast_prefix(tz: tzinfo, fast: Any
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Own ts (us, or NO_TS), flag code, rank (-1 none) and keep-mask of the fast rows
    (``fast``: ``joblog_fast.megatron_iterations``), from their prefixes (in ``tz``)."""
    m = len(fast.rows)
    ts = np.full(m, NO_TS, np.int64)
    flag = np.zeros(m, np.int8)  # 0 none, 1 assumed_tz, 2 exact
    rank = np.full(m, -1, np.int64)
    keep = np.ones(m, bool)
    has_stamp = fast.stamp_s >= 0
    if has_stamp.any():
        ts[has_stamp] = naive_to_us(fast.stamp_s[has_stamp], tz)
        flag[has_stamp] = 1
    pe = fast.prefix_end
    trivial = (pe == 0) | ((pe == 1) & (fast.data[fast.starts] == 32))
    if trivial.all():
        return ts, flag, rank, keep
    idx = np.flatnonzero(~trivial)
    pre = view_series(fast.data, fast.starts[idx], pe[idx], "p")
    # more than 4096 distinct prefixes: often already so among the first 8192 (no need to
    # hash the whole chunk's)
    uniq = None if pre.head(8192).n_unique() > 4096 else pre.unique()
    if uniq is None or len(uniq) > 4096:
        keep[idx] = False
        # ``kubectl logs --timestamps``: every prefix a different RFC3339Nano UTC stamp;
        # those rows go through ``joblog_preset.kube_chunk`` (flag 2, keep False)
        us, plain = kubectl_us(fast.data, fast.starts[idx], pe[idx])
        kts_np = np.where(plain, us, NO_TS)
        odd = np.flatnonzero(~plain)
        if odd.size:  # the regex reads the rest (most are no kubectl stamp at all)
            kts_np[odd] = kubectl_regex(pre.gather(odd))
        got = kts_np != NO_TS
        ts[idx[got]], flag[idx[got]] = kts_np[got], 2
        return ts, flag, rank, keep
    table: dict[str, tuple[int, int, int, bool]] = {}
    rec = Prefix()
    for u in uniq.to_list():
        r = split_prefix(u, tz, rec)
        table[u] = (r.ts if r.ts is not None else NO_TS,
                    2 if r.flag == "exact" else (1 if r.flag else 0),
                    r.rank if r.rank is not None else -1, not r.msg.strip())
    for j, u in zip(idx.tolist(), pre.to_list(), strict=True):
        t, fl, rk, ok = table[u]
        if not ok:
            keep[j] = False
            continue
        if t != NO_TS:
            ts[j], flag[j] = t, fl
        rank[j] = rk
    return ts, flag, rank, keep

def kubectl_regex(pre: pl.Series) -> np.ndarray:
    """UTC epoch microseconds of each prefix that is ``V_KUBECTL``, else NO_TS."""
    g = pl.col("p").str.extract_groups(V_KUBECTL)
    kts = pl.DataFrame({"p": pre}).select(
        fastrows.iso_us(g.struct.field("1"), g.struct.field("2"), 0)).to_series()
    return np.asarray(kts.fill_null(NO_TS).to_numpy(), np.int64)


def naive_to_us(secs: np.ndarray, tz: tzinfo) -> np.ndarray:
    """Naive local epoch seconds (in --tz) -> UTC epoch microseconds."""
    if tz is UTC:
        return secs * 1_000_000
    if isinstance(tz, timezone):
        off = tz.utcoffset(None)
        return (secs - int(off.total_seconds())) * 1_000_000
    if isinstance(tz, ZoneInfo):
        s = pl.from_epoch(pl.Series(secs), time_unit="s").dt.replace_time_zone(
            tz.key, ambiguous="earliest", non_existent="null").dt.convert_time_zone("UTC")
        out = s.dt.epoch("us").fill_null(NO_TS).to_numpy()
        return np.asarray(out, np.int64)
    from datetime import datetime

    from parsers.timeutil import to_us

    uniq, inv = np.unique(secs, return_inverse=True)
    conv = np.array([to_us(datetime.fromtimestamp(int(u), UTC).replace(tzinfo=tz))
                     for u in uniq], np.int64)
    return np.asarray(conv[inv], np.int64)

def add_fast_frame(p: Any, fast: Any, keep: np.ndarray, rows: np.ndarray, ts: np.ndarray,
                   flag: np.ndarray, rank: np.ndarray, first: int,
                   start_state: tuple[int, int | None]) -> None:
    """Rows of the vectorised iteration lines, into ``p``'s (a ``JobLogParser``) events;
    inherited stamps resolved over all lines (``p._own``: the per-line stamps)."""
    line_no = rows + first
    own = ts != NO_TS
    flag = flag.copy()
    if not own.all():
        # timeline of every stamp up to this chunk's end: previous chunks, per-line, fast
        t_lines = [np.array([start_state[0]], np.int64)] if start_state[1] is not None \
            else []
        t_ts = [np.array([start_state[1]], np.int64)] if start_state[1] is not None else []
        if p._own:
            arr = np.array(p._own, np.int64)
            t_lines.append(arr[:, 0])
            t_ts.append(arr[:, 1])
        t_lines.append(line_no[own])
        t_ts.append(ts[own])
        tl = np.concatenate(t_lines) if t_lines else np.zeros(0, np.int64)
        tt = np.concatenate(t_ts) if t_ts else np.zeros(0, np.int64)
        order = np.argsort(tl, kind="stable")
        tl, tt = tl[order], tt[order]
        miss = np.flatnonzero(~own)
        k = np.searchsorted(tl, line_no[miss]) - 1
        found = k >= 0
        # no stamp before any of them (none in the file so far): np.where reads tt[0] too
        ts[miss] = np.where(found, tt[np.maximum(k, 0)], NO_TS) if tt.size else NO_TS
        flag[miss] = np.where(found, 3, 4)
    # the state after this chunk: the latest stamp among per-line and fast rows
    if own.any():
        last = int(np.flatnonzero(own)[-1])
        if line_no[last] > p._last_line:
            p._last_line, p._last_ts = int(line_no[last]), int(ts[last])
    n = len(rows)
    p.events.add_batch(progress_batch.make(
        ts, ts == NO_TS, flag, rank, fast.iteration[keep], fast.value[keep], line_no, {
            "host": p._path_host, "host_from": p._path_host_from,
            "source": p.name, "format": "megatron", "kind": "iteration",
            "job_id": p.ctx.job_hint, "file": p.ctx.path}))
    p.acct.read += n
    p.acct.events += n
