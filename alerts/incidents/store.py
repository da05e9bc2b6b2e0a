"""IncidentStore: incidents, their alerts and timeline entries in `alerts.sqlite`.

The tables sit beside the alert state (same file, same connection and lock as alerts.store.Store),
so an incident and the alert transitions that made it survive a restart together. Each timeline
entry may carry a `dedup` key (e.g. the outbox id of a notification): inserting the same key twice
is a no-op, so the tracker can re-scan sources after a restart without duplicating entries.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from agentsla.alerts.state import Store
from agentsla.contract import FailingHop
from agentsla.errors import NotFound

_SCHEMA = """
create table if not exists incidents (
    id text primary key,
    title text not null,
    state text not null,                -- open, resolved
    severity text not null,             -- highest tier among its alerts (P0 before P1)
    labels text not null,               -- JSON: the scope labels shared by its alerts
    first_failing_hop text,             -- legacy display text (rows before ffh); read as a name
    ffh text,                           -- JSON FailingHop: the dominant first failing hop
    ffh_share real,                     -- its share of the incident's blamed tasks
    started_at real,                    -- first failing span of the impact
    detected_at real not null,          -- first alert fired
    acknowledged_at real,
    acknowledged_by text,
    mitigated_at real,
    resolved_at real,                   -- last alert resolved (the impact ended)
    closed_at real,                     -- the quiet period after that passed
    quiet_since real,                   -- every alert resolved since then (null while firing)
    last_snapshot_at real,
    data text not null,                 -- JSON: impact, pareto top, findings seen, series
    updated_at real not null
);
create index if not exists incidents_state on incidents (state, detected_at);
create table if not exists incident_alerts (
    incident_id text not null,
    fingerprint text not null,
    alertname text not null,
    severity text not null,
    labels text not null,               -- JSON
    first_failing_hop text,             -- legacy display text (rows before ffh)
    ffh text,                           -- JSON FailingHop of the alert's context
    fired_at real not null,
    resolved_at real,
    primary key (incident_id, fingerprint)
);
create table if not exists incident_entries (
    id integer primary key autoincrement,
    incident_id text not null,
    at real not null,
    kind text not null,
    severity text not null,             -- info, warning, critical
    source text not null,               -- evaluator, notifier, api, cli, tracker, ...
    title text not null,
    body text not null,
    labels text not null,               -- JSON object of strings
    links text not null,                -- JSON {"task_ids": [...], "trace_ids": [...]}
    data text not null,                 -- JSON numbers behind the entry (snapshots)
    dedup text unique
);
create index if not exists incident_entries_incident on incident_entries (incident_id, at);
"""

#: Columns added after the first release: (table, column, type). Old files get them on open.
_MIGRATIONS = (("incidents", "ffh", "text"), ("incidents", "ffh_share", "real"),
               ("incident_alerts", "ffh", "text"))

_INCIDENT_COLUMNS = ("id", "title", "state", "severity", "labels", "ffh", "ffh_share",
                     "started_at", "detected_at", "acknowledged_at", "acknowledged_by",
                     "mitigated_at", "resolved_at", "closed_at", "quiet_since",
                     "last_snapshot_at", "data", "updated_at")

#: Set once by people (API/CLI): a save by the tracker, which may hold an older copy of the
#: incident, never clears them.
_SET_ONCE = ("acknowledged_at", "acknowledged_by", "mitigated_at")
_UPSERT = (
    f"insert into incidents ({', '.join(_INCIDENT_COLUMNS)}) "
    f"values ({', '.join('?' for _ in _INCIDENT_COLUMNS)}) on conflict (id) do update set "
    + ", ".join(f"{c} = coalesce(incidents.{c}, excluded.{c})" if c in _SET_ONCE
                else f"{c} = excluded.{c}" for c in _INCIDENT_COLUMNS if c != "id"))


@dataclass
class Incident:
    """One incident: its lifecycle timestamps, scope and the data the tracker keeps."""

    id: str
    title: str
    state: str
    severity: str
    labels: dict[str, str]
    first_failing_hop: FailingHop | None  # the dominant one over the incident (its headline)
    started_at: float | None
    detected_at: float
    acknowledged_at: float | None = None
    acknowledged_by: str | None = None
    mitigated_at: float | None = None
    resolved_at: float | None = None
    closed_at: float | None = None
    quiet_since: float | None = None
    last_snapshot_at: float | None = None
    data: dict[str, Any] = field(default_factory=dict)
    updated_at: float = 0.0
    first_failing_hop_share: float | None = None  # of the blamed tasks in the incident's scope

    def durations(self) -> dict[str, float | None]:
        """Time to detect, acknowledge and resolve (seconds, from the start of the impact)."""
        start = self.started_at if self.started_at is not None else self.detected_at
        return {"time_to_detect_s": self.detected_at - start,
                "time_to_acknowledge_s": _since(self.acknowledged_at, self.detected_at),
                "time_to_mitigate_s": _since(self.mitigated_at, start),
                "time_to_resolve_s": _since(self.resolved_at, start)}

    def to_json(self) -> dict:
        """Describe for the API and exports (data is left out: the report shapes it)."""
        out = {k: v for k, v in asdict(self).items() if k != "data"}
        out.update(self.durations())
        return out


@dataclass
class IncidentAlert:
    """An alert instance that joined an incident."""

    fingerprint: str
    alertname: str
    severity: str
    labels: dict[str, str]
    first_failing_hop: FailingHop | None
    fired_at: float
    resolved_at: float | None = None


@dataclass
class Entry:
    """One timeline entry."""

    id: int
    time: float
    kind: str
    severity: str
    source: str
    title: str
    body: str
    labels: dict[str, str]
    links: dict[str, list[str]]
    data: dict[str, Any]

    def to_json(self) -> dict:
        """Describe for the API and exports."""
        return asdict(self)


def _since(at: float | None, origin: float) -> float | None:
    return None if at is None else max(0.0, at - origin)


class IncidentStore:
    """Incident tables over the alerts Store (shares its connection and lock)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        with store.lock:
            store.conn.executescript(_SCHEMA)
            _migrate(store.conn)

    # --- incidents -------------------------------------------------------------------------

    def save(self, incident: Incident) -> None:
        """Insert or replace an incident."""
        row = asdict(incident)
        row["labels"], row["data"] = json.dumps(row["labels"]), json.dumps(row["data"], default=str)
        row["ffh"], row["ffh_share"] = _hop_json(incident.first_failing_hop), \
            incident.first_failing_hop_share
        with self.store.transaction() as conn:
            conn.execute(_UPSERT, [row[c] for c in _INCIDENT_COLUMNS])

    def get(self, incident_id: str) -> Incident:
        """Return one incident, or raise NotFound."""
        rows = self.store.query("select * from incidents where id = ?", (incident_id,))
        if not rows:
            raise NotFound(f"no incident with id {incident_id!r}")
        return _incident(rows[0])

    def list(self, state: str | None = None, since: float | None = None,
             until: float | None = None, limit: int = 500) -> list[Incident]:
        """Incidents newest first; `since`/`until` keep those overlapping [since, until)."""
        sql = "select * from incidents where (? is null or state = ?) " \
              "and (? is null or coalesce(closed_at, resolved_at, 1e18) >= ?) " \
              "and (? is null or coalesce(started_at, detected_at) < ?) " \
              "order by detected_at desc, id limit ?"
        rows = self.store.query(sql, (state, state, since, since, until, until, limit))
        return [_incident(r) for r in rows]

    def open(self) -> list[Incident]:
        """Open incidents, oldest first."""
        return [_incident(r) for r in self.store.query(
            "select * from incidents where state = 'open' order by detected_at, id")]

    # --- alerts ----------------------------------------------------------------------------

    def put_alert(self, incident_id: str, alert: IncidentAlert) -> None:
        """Attach an alert to an incident (or update it)."""
        with self.store.transaction() as conn:
            conn.execute("insert or replace into incident_alerts (incident_id, fingerprint, "
                         "alertname, severity, labels, ffh, fired_at, resolved_at) "
                         "values (?, ?, ?, ?, ?, ?, ?, ?)",
                         (incident_id, alert.fingerprint, alert.alertname, alert.severity,
                          json.dumps(alert.labels), _hop_json(alert.first_failing_hop),
                          alert.fired_at, alert.resolved_at))

    def alerts(self, incident_id: str) -> list[IncidentAlert]:
        """The alerts of an incident, in the order they fired."""
        rows = self.store.query("select * from incident_alerts where incident_id = ? "
                                "order by fired_at, fingerprint", (incident_id,))
        return [IncidentAlert(r["fingerprint"], r["alertname"], r["severity"],
                              json.loads(r["labels"]), _hop(r), r["fired_at"],
                              r["resolved_at"]) for r in rows]

    # --- timeline --------------------------------------------------------------------------

    def add_entry(self, incident_id: str, at: float, kind: str, title: str, body: str = "", *,
                  severity: str = "info", source: str = "tracker",
                  labels: dict[str, str] | None = None, links: dict[str, list[str]] | None = None,
                  data: dict[str, Any] | None = None, dedup: str | None = None) -> int | None:
        """Append a timeline entry; return its id, or None when `dedup` was already recorded."""
        links = {"task_ids": list((links or {}).get("task_ids") or []),
                 "trace_ids": list((links or {}).get("trace_ids") or [])}
        with self.store.transaction() as conn:
            cur = conn.execute(
                "insert or ignore into incident_entries (incident_id, at, kind, severity, source, "
                "title, body, labels, links, data, dedup) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (incident_id, at, kind, severity, source, title, body,
                 json.dumps({str(k): str(v) for k, v in (labels or {}).items()}),
                 json.dumps(links), json.dumps(data or {}, default=str), dedup))
            return cur.lastrowid if cur.rowcount > 0 else None

    def entries(self, incident_id: str) -> list[Entry]:
        """The timeline, oldest first (ties in insertion order)."""
        rows = self.store.query("select * from incident_entries where incident_id = ? "
                                "order by at, id", (incident_id,))
        return [Entry(r["id"], r["at"], r["kind"], r["severity"], r["source"], r["title"],
                      r["body"], json.loads(r["labels"]), json.loads(r["links"]),
                      json.loads(r["data"])) for r in rows]


def _incident(row) -> Incident:
    values = {c: row[c] for c in _INCIDENT_COLUMNS if c not in ("ffh", "ffh_share")}
    values["labels"], values["data"] = json.loads(values["labels"]), json.loads(values["data"])
    return Incident(**values, first_failing_hop=_hop(row), first_failing_hop_share=row["ffh_share"])


def _migrate(conn) -> None:
    """Add the columns newer versions write to a file an older version created."""
    for table, column, kind in _MIGRATIONS:
        if column not in {r[1] for r in conn.execute(f"pragma table_info({table})")}:
            conn.execute(f"alter table {table} add column {column} {kind}")


def _hop_json(hop: FailingHop | None) -> str | None:
    return None if hop is None else json.dumps(hop.to_json())


def _hop(row) -> FailingHop | None:
    """Read a row's first failing hop: the JSON column, else an old row's display text as-is."""
    if row["ffh"] is not None:
        return FailingHop.from_json(json.loads(row["ffh"]))
    legacy = row["first_failing_hop"]
    # Old text such as "tool db (timeout)" cannot be split reliably (names hold spaces and
    # parentheses): it is kept whole as the name, so it still displays as it did.
    return FailingHop(None, legacy) if legacy and legacy != "unknown" else None
