"""The rows of a ``kubectl get events`` table, cut and read for a whole chunk (polars).

``K8sEventsParser`` reads a row per line in Python (``_cut``, ``_valid``, ``_row``): ~15 us a
row, and a week of a cluster's events is hundreds of thousands of rows. ``table_rows`` does the
same for the chunk's rows under one header, with the same rules (see parsers/k8s_events.py):

* cells are cut at the header's column starts; a cut that would split a word disqualifies
  the line (it goes through ``parse_line``, which then tries the loose layout);
* LAST SEEN must be an age of one or two units (``7d``, ``5h3m``; apimachinery
  ``duration.HumanDuration`` prints no more), optionally `` (xN over AGE)``; TYPE a capitalised
  ASCII word; REASON not empty; the OBJECT column present (not the pre-1.11 layout);
* host as ``k8s_common.event_host``: a Node object's name, else the SOURCE host unless the
  component is a cluster controller, else the Scheduled / Preempted message's node.

Only printable-ASCII lines are taken (so Python's ``str.strip``, ``\\S`` and offsets mean what
polars' do), and none that looks like a header or a kubectl notice. The caller keeps the
per-line state (pending row, continuation lines, headers) in Python; see
``K8sEventsParser.parse_chunk``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl
import pyarrow.compute as pc

from parsers import fastrows

_AGE = r"(?:[0-9]{1,6}[ydhms]){1,2}"
_AGE_ANY = r"(?:<unknown>|<invalid>|(?:[0-9]+[ydhms])+)"
SEEN = r"^(" + _AGE + r")(?: \(x([0-9]{1,9}) over " + _AGE_ANY + r"\))?$"
_UNIT_S = {"y": 365 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
_ASSIGNED = r"^Successfully assigned \S+/\S+ to (\S+)$"
_ON_NODE = r" on node (\S+?)\.?$"
_CLUSTER = r"(?i)(?:scheduler|controller|operator|manager)$"


def _age_s(age: pl.Expr) -> pl.Expr:
    """Seconds of a one- or two-unit age (``7d``, ``5h3m``)."""
    parts = age.str.extract_all(r"[0-9]+[ydhms]")
    secs = parts.list.eval(
        pl.element().str.head(-1).cast(pl.Int64)
        * pl.element().str.tail(1).replace_strict(_UNIT_S, return_dtype=pl.Int64))
    return secs.list.sum()


#: a right-stripped line that ``table_rows`` may read: printable ASCII, not empty
PRINTABLE = r"^[ -~]+$"


def ascii_lines(lines: pl.Series, stripped: pl.Series) -> np.ndarray:
    """Per line: ``stripped`` (``lines`` right-stripped) matches ``PRINTABLE`` but for its
    emptiness, which ``table_rows`` tests. A printable line stays printable when stripped;
    the regex reads only the lines that are not (a tab or ``\\r`` at the end, non-ASCII):
    ~5 ms per 8 MiB chunk against ~14 ms for the regex on every line."""
    ok = fastrows.printable(lines)
    rest = np.flatnonzero(~ok)
    if rest.size:
        ok[rest] = np.asarray(stripped.gather(rest).str.contains(r"^[ -~]*$")
                              .fill_null(False).to_numpy(), bool)
    return ok


def _seen(cells: pl.Series, with_age: bool) -> list[pl.Series]:
    """Of each LAST SEEN cell: ``_age_ok`` (``SEEN`` matches), ``_count`` (its ``xN``) and,
    ``with_age``, ``_age_s`` (the age in seconds), worked out once per distinct cell (a
    listing has a handful of ages among ~70,000 rows of a chunk: ~2 ms, not ~7)."""
    enc = pc.dictionary_encode(cells.to_arrow(compat_level=pl.CompatLevel.newest()))
    u, idx = pl.from_arrow(enc.dictionary), pl.from_arrow(enc.indices)
    assert isinstance(u, pl.Series) and isinstance(idx, pl.Series)
    g = pl.DataFrame({"k": u}).select(pl.col("k").str.extract_groups(SEEN).alias("g")).unnest("g")
    g = g.select(pl.col("1").is_not_null().alias("_age_ok"),
                 pl.col("2").cast(pl.Int64).alias("_count"),
                 *([_age_s(pl.col("1")).alias("_age_s")] if with_age else []))
    return [g.get_column(c).gather(idx) for c in g.columns]


def _header_like(lines: pl.Series) -> np.ndarray:
    """Per line: it has the words of a header (the rare lines with ``REASON`` in them are
    tested for the others)."""
    got = np.asarray(lines.str.contains("REASON", literal=True).to_numpy(), bool)
    idx = np.flatnonzero(got)
    if idx.size:
        sub = lines.gather(idx)
        got[idx] = np.asarray((sub.str.contains("LAST SEEN|LASTSEEN")
                               & sub.str.contains("OBJECT|KIND")).to_numpy(), bool)
    return got


def _where(df: pl.DataFrame, reason: str, read: Callable[[pl.Series], pl.Series]
           ) -> pl.Series:
    """``read`` of MESSAGE on the rows whose REASON is ``reason`` and MESSAGE is not empty;
    null on the others (a regex on every row cost ~8 ms per 70,000)."""
    on = np.flatnonzero(df.select((pl.col("REASON") == reason) & (pl.col("MESSAGE") != ""))
                        .to_series().to_numpy())
    out = pl.repeat(None, df.height, dtype=pl.String, eager=True)
    return out.scatter(on, read(df.get_column("MESSAGE").gather(on))) if on.size else out


def assigned_node(messages: pl.Series) -> pl.Series:
    """``_ASSIGNED``'s node (else null) without a capture (~3x cheaper): on a match the
    node is what follows the first `` to `` (the words before it hold no space)."""
    m = pl.col("m")
    return pl.DataFrame({"m": messages}).select(
        pl.when(m.str.contains(_ASSIGNED))
        .then(m.str.slice(m.str.find(" to ", literal=True) + 4))).to_series()


def table_rows(lines: pl.Series, cols: list[tuple[str, int]], ref_us: int | None,
               host_hint: str | None, ascii_ok: np.ndarray | None = None
               ) -> tuple[np.ndarray, pl.DataFrame]:
    """(mask of the lines read here, their rows' fields in line order) for ``lines`` (already
    right-stripped) under the header ``cols`` ((name, start) as ``_set_header`` found them).
    ``ascii_ok``: which of ``lines`` are printable ASCII (``ascii_lines``), if known."""
    names = {c for c, _ in cols}
    none = np.zeros(len(lines), bool), pl.DataFrame()
    seen_col = next((c for c in ("LAST SEEN", "LASTSEEN") if c in names), None)
    if seen_col is None or "TYPE" not in names or "REASON" not in names \
            or "OBJECT" not in names:
        return none
    line = pl.col("l")
    n = len(cols)
    # bytes: chars on the printable lines, the only ones kept
    length = line.str.len_bytes()
    printable = line.str.contains(PRINTABLE) if ascii_ok is None else pl.lit(pl.Series(ascii_ok))
    ok = (printable & (length > 0) & ~pl.lit(pl.Series(_header_like(lines)))
          & ~line.str.starts_with("No resources found") & ~line.str.starts_with("No events found")
          & ~line.str.starts_with("Warning: "))
    raw, cells = [], []
    for i, (name, start) in enumerate(cols):
        if i + 1 < n:
            end = cols[i + 1][1]
            # no word across the cut: the cell's last character is a space, or the line ends
            # before it
            ok = ok & ((length < end) | pl.col(f"_{i}").str.ends_with(" "))
            raw.append(line.str.slice(start, end - start).alias(f"_{i}"))
        else:
            if start > 0 and n == 1:  # (else implied by the previous cell's test)
                ok = ok & ((length <= start) | (line.str.slice(start - 1, 1) == " "))
            raw.append(line.str.slice(start).alias(f"_{i}"))
        cells.append(pl.col(f"_{i}").str.strip_chars(" ").alias(name))
    df = (pl.DataFrame({"l": lines}).with_row_index("i").with_columns(raw)
          .select("i", ok.alias("ok"), *cells))
    df = df.with_columns(_seen(df.get_column(seen_col), ref_us is not None))
    valid = (pl.col("ok") & pl.col("_age_ok")
             & pl.col("TYPE").str.contains(r"^[A-Z][A-Za-z]*$") & (pl.col("REASON") != ""))
    df = df.filter(valid)
    count = pl.col("_count")
    if "COUNT" in names:
        count = pl.coalesce(count, pl.when(pl.col("COUNT").str.contains(r"^[0-9]{1,9}$"))
                            .then(pl.col("COUNT").cast(pl.Int64)))
    obj = pl.col("OBJECT")
    obj_name = obj.str.splitn("/", 2).struct.field("field_1").fill_null("")
    message: pl.Expr = pl.col("MESSAGE") if "MESSAGE" in names else pl.lit("")
    if "SOURCE" in names:
        src = pl.col("SOURCE").str.splitn(", ", 2)
        comp, inst = src.struct.field("field_0"), src.struct.field("field_1").fill_null("")
        from_source = (inst != "") & ~((comp != "") & comp.str.contains(_CLUSTER))
    else:
        inst, from_source = pl.lit(""), pl.lit(False)
    reason = pl.col("REASON")
    if "MESSAGE" in names:  # the two patterns read only the rows of their reason
        df = df.with_columns(
            _where(df, "Scheduled", assigned_node).alias("_assigned"),
            _where(df, "Preempted", lambda m: m.str.extract(_ON_NODE, 1)).alias("_on_node"))
        assigned, on_node = pl.col("_assigned"), pl.col("_on_node")
    else:
        assigned = on_node = pl.lit(None, pl.String)
    # kind == "node" in any case (the kept rows are ASCII): the 5-character head of OBJECT
    host = (pl.when((obj.str.slice(0, 5).str.to_lowercase() == "node/") & (obj_name != ""))
            .then(obj_name)
            .when(from_source).then(inst)
            .when(assigned.is_not_null()).then(assigned)
            .when(on_node.is_not_null()).then(on_node)
            .otherwise(pl.lit(None, pl.String)))
    ts = (pl.lit(ref_us) - pl.col("_age_s") * 1_000_000) if ref_us is not None \
        else pl.lit(None, pl.Int64)
    fmt = "k8s_events-" + ("wide" if "SOURCE" in names else "table")
    rows = df.select(
        "i", ts.cast(pl.Int64).alias("ts"),
        pl.lit("relative" if ref_us is not None else "missing").alias("ts_flag"),
        reason.alias("code"), count.cast(pl.Float64).alias("value"), obj.alias("device"),
        message.alias("message"), pl.lit(fmt).alias("format"), host.alias("host"))
    hf = (pl.when(pl.col("host").is_not_null()).then(pl.lit("line"))
          .otherwise(pl.lit("path" if host_hint else "unknown")))
    rows = rows.with_columns(hf.alias("host_from"),
                             pl.col("host").fill_null(pl.lit(host_hint, pl.String)))
    mask = np.zeros(len(lines), bool)
    mask[rows.get_column("i").to_numpy()] = True
    return mask, rows
