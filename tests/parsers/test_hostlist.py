import pytest

from parsers.hostlist import HostlistError, expand


@pytest.mark.parametrize(
    ("expr", "hosts"),
    [
        ("node[001-003,007]", ["node001", "node002", "node003", "node007"]),
        ("gpu05", ["gpu05"]),
        ("a[1-2],b3", ["a1", "a2", "b3"]),
        ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"]),
        ("None assigned", []),
        ("", []),
    ],
)
def test_expand(expr: str, hosts: list[str]) -> None:
    assert expand(expr) == hosts


def test_bad() -> None:
    with pytest.raises(HostlistError):
        expand("node[1-")
