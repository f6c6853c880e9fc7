"""tqdm bars redrawn with ``\\r`` and HF Trainer loss dicts in a job log, read for a whole chunk.

An HF Trainer job's output is mostly lines like (tqdm/std.py ``format_meter`` and
``status_printer``: every redraw starts with ``\\r``; transformers/trainer_callback.py
``ProgressCallback.on_log`` prints ``str(logs)`` through ``tqdm.write``, which clears the bar
with a line of spaces first)::

    \\r  0%|          | 1/100000 [00:00<22:55:58,  1.21it/s]\\r  0%|   | 2/100000 [...]...
    \\r<spaces>\\r{'loss': 2.5376, 'grad_norm': 1.0381, 'learning_rate': 1.9e-05, 'epoch': 0.0}

Each non-blank ``\\r`` part is one row (``progress_bar`` / ``hf_log``, see parsers.hf_trainer).
``tqdm_lines`` takes a line when every part is blank, a bare bar (no description) or a loss
dict, in patterns narrower than the per-line ones (digits only in ``n/total``, printable ASCII
after the bar, a plain decimal loss), and no anchor of any recogniser but HfTrainerMatcher is
in it (so no matcher before it claims a part); the others go through ``parse_line``. The rows'
stamps (inherited from the lines before) are filled in by ``JobLogParser`` once the chunk's
per-line lines have been read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import polars as pl

from parsers.anchors import CompiledPrefilter

BAR = r"^ *[0-9]{1,3}%\|[^|]*\| *([0-9]{1,15})/([0-9]{1,15}) \[[ -~]*$"
LOSS = r"^\{'loss': (-?[0-9]{1,15}(?:\.[0-9]{1,15})?)[,}][ -~]*$"


@dataclass(frozen=True)
class TqdmRows:
    """The chunk's lines read here and their rows (one per non-blank part, in line order)."""

    lines: np.ndarray  #: chunk indices of the lines taken
    row_line: np.ndarray  #: chunk index of each row's line
    frame: pl.DataFrame  #: kind, iteration, value, format, message per row


@lru_cache(maxsize=8)
def _others(extra_key: tuple[str, ...]) -> CompiledPrefilter:
    from parsers.hf_trainer import HfTrainerMatcher
    from parsers.message import all_recognisers, prefilter_of

    return prefilter_of(all_recognisers(skip=(HfTrainerMatcher,)), claims=True).compiled()


def _others_prefilter() -> CompiledPrefilter:
    from parsers.signature_table import EXTRA

    return _others(tuple(s.id for s in EXTRA))


def tqdm_lines(lines: pl.Series) -> TqdmRows | None:
    """The chunk's bar / loss-dict lines (see module docstring), or None if it has none."""
    has = lines.str.contains("%|", literal=True) | lines.str.starts_with("{'loss': ")
    idx = np.flatnonzero(has.fill_null(False).to_numpy())
    if not idx.size:
        return None
    sub = lines.gather(idx)
    other = np.asarray(_others_prefilter().mask_np(sub), bool)
    idx, sub = idx[~other], sub.filter(pl.Series(~other))
    if not idx.size:
        return None
    parts = (pl.DataFrame({"i": idx, "l": sub})
             .with_columns(pl.col("l").str.split("\r")).explode("l")
             .with_columns(pl.col("l").str.contains(r"^ *$").alias("blank"),
                           pl.col("l").str.extract_groups(BAR).alias("bar"),
                           pl.col("l").str.extract(LOSS, 1).alias("loss"))
             .unnest("bar").rename({"1": "n", "2": "total"}))
    ok = pl.col("blank") | pl.col("n").is_not_null() | pl.col("loss").is_not_null()
    lines_ok = (parts.group_by("i", maintain_order=True)
                .agg(ok.all().alias("ok"), (~pl.col("blank")).any().alias("any"))
                .filter(pl.col("ok") & pl.col("any")).get_column("i"))
    if not len(lines_ok):
        return None
    rows = (parts.filter(pl.col("i").is_in(lines_ok.implode()) & ~pl.col("blank"))
            .select("i", pl.col("l").alias("message"),
                    pl.when(pl.col("n").is_not_null()).then(pl.lit("progress_bar"))
                    .otherwise(pl.lit("hf_log")).alias("kind"),
                    pl.col("n").cast(pl.Int64).alias("iteration"),
                    pl.coalesce(pl.col("total"), pl.col("loss")).cast(pl.Float64)
                    .alias("value"),
                    pl.when(pl.col("n").is_not_null()).then(pl.lit("tqdm"))
                    .otherwise(pl.lit("hf_trainer")).alias("format")))
    return TqdmRows(np.asarray(lines_ok.to_numpy(), np.int64),
                    np.asarray(rows.get_column("i").to_numpy(), np.int64), rows.drop("i"))
