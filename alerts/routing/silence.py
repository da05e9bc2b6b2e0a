"""Silences, as in Alertmanager's silence/silence.go: matchers, a time range, author, comment.

A silence is pending before `starts_at`, active until `ends_at`, expired after. Expiring sets
`ends_at` to now; expired silences are kept (for the API) for `retention_s`.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from agentsla.alerts.rules.expr import Matcher
from agentsla.alerts.routing.matchers import matches_all, parse_matcher
from agentsla.alerts.state import Store
from agentsla.errors import NotFound, PermanentError


@dataclass(frozen=True)
class Silence:
    """One silence."""

    id: str
    matchers: tuple[Matcher, ...]
    starts_at: float
    ends_at: float
    created_by: str
    comment: str
    updated_at: float

    def state(self, now: float) -> str:
        """Return pending, active or expired."""
        if now < self.starts_at:
            return "pending"
        return "active" if now < self.ends_at else "expired"

    def to_json(self, now: float) -> dict:
        """Describe for the API (Alertmanager's field names)."""
        return {"id": self.id, "matchers": [str(m) for m in self.matchers],
                "startsAt": self.starts_at, "endsAt": self.ends_at, "createdBy": self.created_by,
                "comment": self.comment, "updatedAt": self.updated_at,
                "status": {"state": self.state(now)}}


class Silences:
    """The silence store and a Muter over it."""

    def __init__(self, store: Store, retention_s: float = 5 * 86400.0) -> None:
        self.store = store
        self.retention_s = retention_s

    def add(self, matchers: list[str], starts_at: float, ends_at: float, created_by: str,
            comment: str, now: float) -> Silence:
        """Create a silence, validating its matchers, author, comment and range."""
        if not matchers:
            raise PermanentError("a silence needs at least one matcher")
        try:
            parsed = tuple(parse_matcher(m) for m in matchers)
        except ValueError as exc:
            raise PermanentError(str(exc)) from None
        if all(m.matches({}) for m in parsed):
            raise PermanentError("the matchers would match every alert; name a label value")
        if not created_by.strip() or not comment.strip():
            raise PermanentError("a silence needs an author (createdBy) and a comment")
        if ends_at <= starts_at or ends_at <= now:
            raise PermanentError("a silence must end after it starts and in the future")
        silence = Silence(uuid.uuid4().hex, parsed, starts_at, ends_at, created_by, comment, now)
        with self.store.transaction() as conn:
            conn.execute("insert into silences values (?, ?, ?, ?, ?, ?, ?)",
                         (silence.id, json.dumps([str(m) for m in parsed]), starts_at, ends_at,
                          created_by, comment, now))
        return silence

    def expire(self, silence_id: str, now: float) -> Silence:
        """End a silence now (an expired one stays as it is)."""
        silence = self.get(silence_id)
        if silence.state(now) == "expired":
            return silence
        with self.store.transaction() as conn:
            conn.execute("update silences set ends_at = ?, starts_at = min(starts_at, ?), "
                         "updated_at = ? where id = ?", (now, now, now, silence_id))
        return self.get(silence_id)

    def get(self, silence_id: str) -> Silence:
        """Return one silence, or raise NotFound."""
        rows = self.store.query("select * from silences where id = ?", (silence_id,))
        if not rows:
            raise NotFound(f"no silence with id {silence_id!r}")
        return _silence(rows[0])

    def list(self, now: float) -> list[Silence]:
        """Every silence not past its retention, newest first."""
        with self.store.transaction() as conn:
            conn.execute("delete from silences where ends_at < ?", (now - self.retention_s,))
        return [_silence(r) for r in self.store.query("select * from silences order by updated_at desc")]

    def mutes(self, labels: dict[str, str], now: float) -> bool:
        """Tell whether an active silence matches the labels."""
        rows = self.store.query("select * from silences where starts_at <= ? and ends_at > ?",
                                (now, now))
        return any(matches_all(_silence(r).matchers, labels) for r in rows)


def _silence(row) -> Silence:
    return Silence(row["id"], tuple(parse_matcher(m) for m in json.loads(row["matchers"])),
                   row["starts_at"], row["ends_at"], row["created_by"], row["comment"],
                   row["updated_at"])
