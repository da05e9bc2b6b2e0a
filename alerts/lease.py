"""One alert evaluator at a time among the `serve` processes over one store: a lease in the store.

Any number of `serve` replicas may answer the API over one ClickHouse store, but only one may
evaluate rules and send notifications. They agree through rows of a small table in the store
(collector/store/lease.py on DuckDB, collector/store/clickhouse/lease.py on ClickHouse), with
no compare-and-set, because ClickHouse has none:

- a **claim** is a row (term, holder, claimed_ns, expires_ns); a lease's current term is the
  highest term with a row, and its **winner** is the claim of that term made first (smallest
  claimed_ns, then holder id). Rows are appended; the newest version of (term, holder) counts.
- the winner **renews** by writing its claim again with a later expiry; it evaluates only once
  its claim is `settle` old (every rival's claim of the same term is visible by then) and
  while its expiry, less `settle`, is ahead of it.
- the others are followers while the winner's expiry lies ahead; once it passed (the holder
  died or lost the store), a follower claims the next term, and waits `settle` like anyone.

The guarantee, stated honestly (docs/scale-out.md, The alert lease): at most one evaluator at
a time **provided** a written row is visible to every reader within `settle` of the clock
reading it carries, and the holders' clocks differ by less than `settle`. On DuckDB (one
process per file) and on a single ClickHouse server both hold with a wide margin; on a
replicated cluster reads must see the latest insert (`select_sequential_consistency`,
`insert_quorum`), else a lagging replica can stretch the overlap. A takeover resumes from the
new holder's own alert state, so a firing alert may be notified once more (at least once).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
from dataclasses import replace

from agentsla.collector.store.lease import Claim, LeaseTable

log = logging.getLogger("agentsla.alerts.lease")
NS = 1_000_000_000
#: The lease the alert evaluator holds.
ALERTS = "alerts"


def holder_id() -> str:
    """Name this process among the holders: host, pid and a random tag (pids repeat)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class Lease:
    """One holder's view of a lease: `holds(now)` claims, renews and says whether it leads."""

    def __init__(self, table: LeaseTable, holder: str, ttl_s: float,
                 name: str = ALERTS) -> None:
        self.table, self.holder, self.name = table, holder, name
        self.ttl_ns = int(ttl_s * NS)
        self.settle_ns = self.ttl_ns // 6  # visibility and clock-skew allowance
        self.leading = False
        self._renew_at_ns = 0  # a leader trusts its last renewal until then, without reading

    def holds(self, now: float) -> bool:
        """Tell whether this holder may evaluate at `now` (renewing or claiming as needed)."""
        now_ns = int(now * NS)
        if self.leading and now_ns < self._renew_at_ns:
            return True  # renewed less than a third of the ttl ago
        leading = self._step(now_ns)
        if leading != self.leading:
            log.warning("%s the %s lease as %s", "took" if leading else "lost", self.name,
                        self.holder)
        self.leading = leading
        return leading

    def _step(self, now_ns: int) -> bool:
        claims = self.table.claims(self.name)
        winner = min(claims, key=lambda c: (c.claimed_ns, c.holder), default=None)
        if winner is not None and winner.expires_ns > now_ns:
            if winner.holder != self.holder:
                return False  # a live lease of another holder
            renewed = replace(winner, expires_ns=now_ns + self.ttl_ns)
            self.table.write(self.name, renewed, now_ns)
            self._renew_at_ns = now_ns + self.ttl_ns // 3
            return now_ns >= winner.claimed_ns + self.settle_ns
        term = winner.term + 1 if winner is not None else 1
        self.table.write(self.name, Claim(term, self.holder, now_ns, now_ns + self.ttl_ns),
                         now_ns)
        return False  # a claim counts once it has settled (the next call)

    def release(self, now: float) -> None:
        """End a held lease at `now` (a clean stop), so a follower need not wait out the ttl."""
        if not self.leading:
            return
        now_ns = int(now * NS)
        mine = [c for c in self.table.claims(self.name) if c.holder == self.holder]
        for claim in mine:
            self.table.write(self.name, replace(claim, expires_ns=now_ns), now_ns)
        self.leading = False


class Unshared:
    """The lease of a process that shares its store with no other evaluator: always held."""

    leading = True

    def holds(self, now: float) -> bool:
        """Tell that this process may evaluate (always)."""
        return True

    def release(self, now: float) -> None:
        """Nothing to release."""
