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

import numpy as np
import polars as pl

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


def table_rows(lines: pl.Series, cols: list[tuple[str, int]], ref_us: int | None,
               host_hint: str | None) -> tuple[np.ndarray, pl.DataFrame]:
    """(mask of the lines read here, their rows' fields in line order) for ``lines`` (already
    right-stripped) under the header ``cols`` ((name, start) as ``_set_header`` found them)."""
    names = {c for c, _ in cols}
    none = np.zeros(len(lines), bool), pl.DataFrame()
    seen_col = next((c for c in ("LAST SEEN", "LASTSEEN") if c in names), None)
    if seen_col is None or "TYPE" not in names or "REASON" not in names \
            or "OBJECT" not in names:
        return none
    line = pl.col("l")
    n = len(cols)
    length = line.str.len_chars()
    ok = (line.str.contains(r"^[ -~]+$")
          & ~(line.str.contains("LAST SEEN|LASTSEEN") & line.str.contains("REASON", literal=True)
              & line.str.contains("OBJECT|KIND"))
          & ~line.str.starts_with("No resources found") & ~line.str.starts_with("No events found")
          & ~line.str.starts_with("Warning: "))
    cells = []
    for i, (name, start) in enumerate(cols):
        if i + 1 < n:
            end = cols[i + 1][1]
            ok = ok & ((length < end) | (line.str.slice(end - 1, 1) == " "))
            cell = line.str.slice(start, end - start)
        else:
            if start > 0:
                ok = ok & ((length <= start) | (line.str.slice(start - 1, 1) == " "))
            cell = line.str.slice(start)
        cells.append(cell.str.strip_chars(" ").alias(name))
    df = pl.DataFrame({"l": lines}).with_row_index("i").select("i", ok.alias("ok"), *cells)
    seen = pl.col(seen_col).str.extract_groups(SEEN)
    df = df.with_columns(seen.struct.field("1").alias("_age"),
                         seen.struct.field("2").alias("_count"))
    valid = (pl.col("ok") & pl.col("_age").is_not_null()
             & pl.col("TYPE").str.contains(r"^[A-Z][A-Za-z]*$") & (pl.col("REASON") != ""))
    df = df.filter(valid)
    count = pl.col("_count").cast(pl.Int64)
    if "COUNT" in names:
        count = pl.coalesce(count, pl.when(pl.col("COUNT").str.contains(r"^[0-9]{1,9}$"))
                            .then(pl.col("COUNT").cast(pl.Int64)))
    obj = pl.col("OBJECT")
    kind = obj.str.split_exact("/", 1).struct.field("field_0")
    obj_name = obj.str.splitn("/", 2).struct.field("field_1").fill_null("")
    message: pl.Expr = pl.col("MESSAGE") if "MESSAGE" in names else pl.lit("")
    if "SOURCE" in names:
        src = pl.col("SOURCE").str.splitn(", ", 2)
        comp, inst = src.struct.field("field_0"), src.struct.field("field_1").fill_null("")
        from_source = (inst != "") & ~((comp != "") & comp.str.contains(_CLUSTER))
    else:
        inst, from_source = pl.lit(""), pl.lit(False)
    reason = pl.col("REASON")
    host = (pl.when((kind.str.to_lowercase() == "node") & (obj_name != "")).then(obj_name)
            .when(from_source).then(inst)
            .when((reason == "Scheduled") & (message != ""))
            .then(message.str.extract(_ASSIGNED, 1))
            .when((reason == "Preempted") & (message != ""))
            .then(message.str.extract(_ON_NODE, 1))
            .otherwise(pl.lit(None, pl.String)))
    ts = (pl.lit(ref_us) - _age_s(pl.col("_age")) * 1_000_000) if ref_us is not None \
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
