"""The alert lease's rows in ClickHouse (alerts/lease.py states the protocol and its guarantee).

ClickHouse has no conditional write: claims and renewals are inserts into a ReplacingMergeTree
keyed by (name, term, holder), read with FINAL (the newest version of each key) and
`select_sequential_consistency` (on a replicated table: only replicas holding every
quorum-written insert answer; ignored by a single node and chdb).
"""

from __future__ import annotations

from typing import Any

from agentsla.collector.store.clickhouse.url import identifier
from agentsla.collector.store.lease import Claim


class ClickHouseLeases:
    """A LeaseTable over `agentsla_leases` (collector/store/clickhouse/agentsla.sql)."""

    def __init__(self, runner: Any, database: str) -> None:
        self._runner = runner
        self._table = f"{identifier(database)}.agentsla_leases"

    def claims(self, name: str) -> list[Claim]:
        """Return the claims on the lease's highest term."""
        rows = self._runner.arrow(
            f"select term, holder, claimed_ns, expires_ns from {self._table} final "
            "where name = {name:String} and term = "
            f"(select max(term) from {self._table} where name = {{name:String}}) "
            "settings select_sequential_consistency = 1", {"name": name}).to_pylist()
        return [Claim(**row) for row in rows]

    def write(self, name: str, claim: Claim, version: int) -> None:
        """Append a claim or renewal row."""
        self._runner.insert(self._table, [{"name": name, "term": claim.term,
                                           "holder": claim.holder, "claimed_ns": claim.claimed_ns,
                                           "expires_ns": claim.expires_ns, "version": version}])
