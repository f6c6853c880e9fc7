"""User-given text (parsers.textfile): UTF-8 with or without a BOM, UTF-16/32 with theirs;
anything else one message naming the file, the line and the byte."""

from __future__ import annotations

import pytest

from parsers.textfile import NotText, decode

TEXT = 'job_id,run\n1001,café\n'


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be",
                                      "utf-32"])
def test_the_encodings_editors_write_are_read(encoding: str) -> None:
    data = TEXT.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):  # with their byte-order mark, as editors write
        data = "\ufeff".encode(encoding) + data
    assert decode(data, "map.csv") == TEXT


def test_bytes_that_are_not_utf8_name_the_line_and_the_byte() -> None:
    with pytest.raises(NotText) as e:
        decode(TEXT.encode("latin-1"), "map.csv")
    assert str(e.value) == "map.csv line 2: not UTF-8 text (byte 0xe9); save the file as UTF-8"
    with pytest.raises(NotText, match=r"^sql line 1: .*; give it as UTF-8 text$"):
        decode(b"select '\xff'", "sql", "give it as UTF-8 text")


def test_a_byte_order_mark_on_bytes_of_another_encoding() -> None:
    with pytest.raises(NotText) as e:
        decode(b"\xff\xfe{\x00\"", "r.json")  # UTF-16-LE's mark, then an odd byte count
    assert str(e.value) == ("r.json: starts with the UTF-16 byte-order mark but is not UTF-16 "
                            "text; save the file as UTF-8")
