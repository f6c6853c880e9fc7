"""Node logs that spell a node's name otherwise than the scheduler does.

rsyslog writes the host name as the node gives it: ``node001.cluster.example.org`` when
``$PreserveFQDN`` is on, ``NODE001`` on some images; Slurm's node lists say ``node001``.
Kubernetes the other way round: a kubelet's node is ``ip-10-0-1-23.ec2.internal`` while the
node's own syslog says ``ip-10-0-1-23``. Every join of node evidence to an attempt's nodes is
by name, so such a node's Xid fell outside every attempt and its interruption was blamed on
the symptoms (five GPU faults read as NCCL timeouts on the demo with FQDN kernel logs).

``alias_hosts`` maps each event host that is not a node name to the one node whose name has
the same first label, case aside (``lower(split_part(name, '.', 1))``); a label shared by two
node names maps nowhere. When any host is mapped, the analysis connection's ``events`` is a
temporary view of the stored one with those hosts replaced (the stored events keep what the
logs say).
"""

from __future__ import annotations

import duckdb


def alias_hosts(con: duckdb.DuckDBPyConnection) -> int:
    """Create ``host_alias`` (host, node) and, if it has rows, the ``events`` view that uses
    it; returns how many hosts were mapped."""
    con.execute("""
        CREATE OR REPLACE TEMP TABLE host_alias AS
        WITH nodes AS (
            SELECT DISTINCT unnest(nodes) AS node FROM attempts WHERE nodes IS NOT NULL
            UNION
            SELECT DISTINCT host FROM events
            WHERE kind = 'k8s_event' AND code = 'Scheduled' AND host IS NOT NULL
        ),
        uniq AS (
            SELECT lower(split_part(node, '.', 1)) AS label, any_value(node) AS node
            FROM nodes GROUP BY label HAVING count(DISTINCT node) = 1
        ),
        hosts AS (
            SELECT DISTINCT host FROM events
            WHERE host IS NOT NULL AND host NOT IN (SELECT node FROM nodes)
        )
        SELECT h.host, u.node FROM hosts h
        JOIN uniq u ON u.label = lower(split_part(h.host, '.', 1))""")
    n = int(con.execute("SELECT count(*) FROM host_alias").fetchall()[0][0])
    if n:
        db = con.execute("SELECT current_database()").fetchall()[0][0]
        stored = '"' + str(db).replace('"', '""') + '".main.events'
        con.execute(f"CREATE OR REPLACE TEMP VIEW events AS SELECT e.* REPLACE "
                    f"(coalesce(a.node, e.host) AS host) FROM {stored} e "
                    f"LEFT JOIN host_alias a ON a.host = e.host")
    return n
