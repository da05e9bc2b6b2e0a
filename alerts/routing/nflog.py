"""The notification log and outbox, as in Alertmanager's nflog/nflog.go, persisted in SQLite.

The log remembers, per integration and alert group, which alerts were last notified as firing
and resolved (the dedup stage consults it). The outbox holds every notification decided on
until it is delivered: entry and outbox row are written in one transaction, so after a restart
a decided notification is neither forgotten nor decided again, and its id (the webhook-id)
stays the same across retries.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from agentsla.alerts.state import Store


@dataclass(frozen=True)
class Entry:
    """What an integration was last told about an alert group."""

    firing: frozenset[str]
    resolved: frozenset[str]
    at: float


@dataclass(frozen=True)
class Pending:
    """An undelivered notification in the outbox."""

    seq: int
    id: str
    integration: str
    group_key: str
    notification: dict
    created_at: float
    attempts: int
    next_attempt_at: float


class NotificationLog:
    """The nflog and outbox over the alerts store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def entry(self, integration: str, group_key: str) -> Entry | None:
        """The last notification decided for an integration and group, or None."""
        rows = self.store.query("select * from nflog where integration = ? and group_key = ?",
                                (integration, group_key))
        if not rows:
            return None
        row = rows[0]
        return Entry(frozenset(json.loads(row["firing"])), frozenset(json.loads(row["resolved"])),
                     row["at"])

    def log(self, integration: str, group_key: str, firing: set[str], resolved: set[str],
            now: float, notification: dict) -> str:
        """Record a notification as decided and put it in the outbox; return its id."""
        notification_id = notification.get("id") or uuid.uuid4().hex
        notification = {**notification, "id": notification_id}
        with self.store.transaction() as conn:
            conn.execute("insert or replace into nflog values (?, ?, ?, ?, ?)",
                         (integration, group_key, json.dumps(sorted(firing)),
                          json.dumps(sorted(resolved)), now))
            conn.execute("insert into outbox (id, integration, group_key, notification, "
                         "created_at, next_attempt_at) values (?, ?, ?, ?, ?, ?)",
                         (notification_id, integration, group_key, json.dumps(notification),
                          now, now))
        return notification_id

    def forget_firing(self, integration: str, group_key: str, fingerprints: set[str]) -> None:
        """Drop muted alerts from the logged firing set, so they are notified when unmuted."""
        entry = self.entry(integration, group_key)
        if entry is None or not entry.firing & fingerprints:
            return
        with self.store.transaction() as conn:
            conn.execute("update nflog set firing = ? where integration = ? and group_key = ?",
                         (json.dumps(sorted(entry.firing - fingerprints)), integration, group_key))

    def heads(self, now: float) -> list[Pending]:
        """The oldest undelivered notification of each integration, if it is due.

        Only the head is tried, so an integration receives its notifications in order.
        """
        rows = self.store.query(
            "select o.* from outbox o join (select integration, min(seq) as seq from outbox "
            "where status = 'pending' group by integration) h on h.seq = o.seq "
            "where o.next_attempt_at <= ? order by o.seq", (now,))
        return [Pending(r["seq"], r["id"], r["integration"], r["group_key"],
                        json.loads(r["notification"]), r["created_at"], r["attempts"],
                        r["next_attempt_at"]) for r in rows]

    def head(self, integration: str, now: float) -> Pending | None:
        """The oldest undelivered notification of one integration, if it is due."""
        return next((p for p in self.heads(now) if p.integration == integration), None)

    def mark_sent(self, seq: int, now: float) -> None:
        """Record a delivery."""
        self._update(seq, "status = 'sent', sent_at = ?, attempts = attempts + 1", (now,))

    def mark_retry(self, seq: int, next_attempt_at: float, error: str) -> None:
        """Record a retryable failure and when to try again."""
        self._update(seq, "attempts = attempts + 1, next_attempt_at = ?, last_error = ?",
                     (next_attempt_at, error))

    def mark_failed(self, seq: int, status: str, error: str) -> None:
        """Give up on a notification (`failed`: permanent error; `expired`: too old)."""
        self._update(seq, "status = ?, attempts = attempts + 1, last_error = ?", (status, error))

    def _update(self, seq: int, assignments: str, params: tuple) -> None:
        with self.store.transaction() as conn:
            conn.execute(f"update outbox set {assignments} where seq = ?", (*params, seq))

    def prune(self, now: float, keep_s: float) -> None:
        """Delete delivered or abandoned outbox rows and log entries older than `keep_s`."""
        with self.store.transaction() as conn:
            conn.execute("delete from outbox where status <> 'pending' and created_at < ?",
                         (now - keep_s,))
            conn.execute("delete from nflog where at < ?", (now - keep_s,))

    def outbox(self, status: str | None = None) -> list[dict]:
        """Outbox rows (for the API and tests), oldest first."""
        sql = "select seq, id, integration, group_key, created_at, attempts, status, sent_at, " \
              "last_error from outbox"
        rows = self.store.query(sql + (" where status = ?" if status else "") + " order by seq",
                                (status,) if status else ())
        return [dict(r) for r in rows]
