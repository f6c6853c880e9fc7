"""``sacct --parsable2 --delimiter=X``: fields joined by another character, never quoted.

sacct(1): "--delimiter=characters: ASCII characters used to separate the fields when
specifying the -p or -P options. The default delimiter is a '|'." Users pick ``,`` for
spreadsheets; AllocTRES (``billing=1,cpu=1,...``) and node lists (``n[1,3-4]``) then hold the
delimiter too. Such a file was read as text of no known layout: a campaign with no records.
The rows below are REAL1's (tests/parsers/test_sacct.py), joined as sacct joins them
(src/sacct/print.c prints each field, then the delimiter).
"""

from __future__ import annotations

import pytest

from parsers import registry
from parsers.sacct import SacctTextParser
from tests.parsers.test_sacct import HEADER, ROWS_REAL1, recs
from tests.parsers.util import parse


def _joined(delim: str, rows: list[str]) -> str:
    return "\n".join(r.replace("|", delim) for r in [HEADER, *rows]) + "\n"


@pytest.mark.parametrize("delim", [",", ";", "\t"])
def test_other_delimiters_give_the_parsable2_records(delim: str) -> None:
    _, want, _ = parse(SacctTextParser, _joined("|", ROWS_REAL1), "a.psv")
    text = _joined(delim, ROWS_REAL1)
    assert registry.detect(text, "sacct.csv")[0] is SacctTextParser
    _, got, acct = parse(SacctTextParser, text, "sacct.csv")
    assert (acct.read, acct.events, acct.unparsed) == (6, 5, 0)
    assert recs(got) == recs(want)
    assert [r["gpus"] for r in got] == [1, 1, 2, 2, 2]


def test_node_list_with_commas_inside_and_outside_brackets() -> None:
    rows = [ROWS_REAL1[0].replace("|n4|", "|n[1,3-4]|"),  # inside [...]: split around it
            ROWS_REAL1[2].replace("|n2|", "|a[01-02],b05|")]  # and TRES: which is which?
    _, got, acct = parse(SacctTextParser, _joined(",", rows), "sacct.csv")
    assert [r["nodes"] for r in got] == [["n1", "n3", "n4"]]
    assert acct.unparsed == 1  # two columns with extra commas: counted, not guessed
