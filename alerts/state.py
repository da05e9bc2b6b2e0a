"""The alerts' own SQLite file (`alerts.sqlite` in the data dir): state, history, nflog, silences.

The DuckDB file belongs to the span writer (one read-write process), so alert state lives
beside it. Writes are small and committed one transaction at a time (WAL mode), so a crash
loses at most the transaction in flight.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

FILENAME = "alerts.sqlite"

_SCHEMA = """
create table if not exists alert_state (
    rule_key text primary key,
    alerts text not null,              -- JSON list of Alert.to_json()
    updated_at real not null
);
create table if not exists alert_history (
    id integer primary key autoincrement,
    at real not null,
    fingerprint text not null,
    alertname text not null,
    severity text,
    from_state text not null,
    to_state text not null,
    value real,
    labels text not null,              -- JSON
    annotations text not null          -- JSON
);
create index if not exists alert_history_at on alert_history (at);
create table if not exists nflog (
    integration text not null,         -- receiver/integration[index]
    group_key text not null,
    firing text not null,              -- JSON list of fingerprints notified as firing
    resolved text not null,            -- JSON list of fingerprints notified as resolved
    at real not null,
    primary key (integration, group_key)
);
create table if not exists outbox (
    seq integer primary key autoincrement,
    id text unique not null,           -- stable across retries and restarts (webhook-id)
    integration text not null,
    group_key text not null,
    notification text not null,        -- JSON of the Notification
    created_at real not null,
    attempts integer not null default 0,
    next_attempt_at real not null,
    status text not null default 'pending',   -- pending, sent, failed, expired
    sent_at real,
    last_error text
);
create index if not exists outbox_pending on outbox (status, integration, seq);
create table if not exists silences (
    id text primary key,
    matchers text not null,            -- JSON list of matcher strings
    starts_at real not null,
    ends_at real not null,
    created_by text not null,
    comment text not null,
    updated_at real not null
);
create table if not exists digest_marks (
    name text primary key,
    at real not null
);
"""


class Store:
    """One SQLite connection shared by the alert components, guarded by a lock."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        self.lock = threading.RLock()
        with self.lock:
            self.conn.execute("pragma journal_mode=wal")
            self.conn.execute("pragma synchronous=normal")
            self.conn.executescript(_SCHEMA)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run statements in one transaction (committed on success, rolled back on error)."""
        with self.lock:
            self.conn.execute("begin immediate")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("rollback")
                raise
            self.conn.execute("commit")

    def query(self, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        """Run a read and fetch every row."""
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    def close(self) -> None:
        """Close the connection."""
        with self.lock:
            self.conn.close()

    def save_alert_state(self, snapshot: dict[str, list[dict]], now: float) -> None:
        """Replace the persisted alert instances with a snapshot."""
        with self.transaction() as conn:
            conn.execute("delete from alert_state")
            conn.executemany("insert into alert_state values (?, ?, ?)",
                             [(k, json.dumps(v), now) for k, v in snapshot.items() if v])

    def load_alert_state(self) -> dict[str, list[dict]]:
        """Read the persisted alert instances."""
        return {r["rule_key"]: json.loads(r["alerts"])
                for r in self.query("select rule_key, alerts from alert_state")}

    def add_history(self, rows: list[tuple], keep_s: float, now: float) -> None:
        """Append state transitions and drop those older than `keep_s`."""
        with self.transaction() as conn:
            conn.executemany(
                "insert into alert_history (at, fingerprint, alertname, severity, from_state, "
                "to_state, value, labels, annotations) values (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            conn.execute("delete from alert_history where at < ?", (now - keep_s,))

    def history(self, since: float, limit: int = 1000) -> list[dict]:
        """State transitions since a time, newest first."""
        rows = self.query("select * from alert_history where at >= ? order by id desc limit ?",
                          (since, limit))
        out = []
        for r in rows:
            row = dict(r)
            row["labels"], row["annotations"] = json.loads(row["labels"]), json.loads(row["annotations"])
            out.append(row)
        return out
