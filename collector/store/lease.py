"""The alert lease's rows as a store keeps them: the row, and what a store engine provides.

alerts/lease.py states the protocol; an engine only keeps the rows
(collector/store/clickhouse/lease.py). A DuckDB file admits one read-write process, so a
DuckDB `serve` has no rival evaluator and holds no lease (alerts.lease.Unshared).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Claim:
    """One holder's claim on a term of a lease, valid until expires_ns."""

    term: int
    holder: str
    claimed_ns: int
    expires_ns: int


class LeaseTable(Protocol):
    """The store's lease rows: append-only claims, the newest version of (term, holder) counts."""

    def claims(self, name: str) -> list[Claim]:
        """Return the claims (newest version of each holder's) on the lease's highest term."""

    def write(self, name: str, claim: Claim, version: int) -> None:
        """Append a claim or a renewal."""
