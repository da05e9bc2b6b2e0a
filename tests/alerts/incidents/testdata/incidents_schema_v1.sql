-- The incident tables as agentsla 0.1 created them (before the first failing hop was JSON).
create table if not exists incidents (
    id text primary key,
    title text not null,
    state text not null,                -- open, resolved
    severity text not null,             -- highest tier among its alerts (P0 before P1)
    labels text not null,               -- JSON: the scope labels shared by its alerts
    first_failing_hop text,
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
    first_failing_hop text,
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
