"""Retention on ClickHouse: agentsla's tables expire by TTL on DuckDB's two clocks.

DuckDB's writer deletes old rows itself (docs/rollups.md, Retention: two clocks); on ClickHouse
the server does, by a TTL on each table that merges apply. The process running shard 0 sets
them at start from its `retention` and `rollup_retention` (`keep`): a metadata change
(`materialize_ttl_after_modify = 0`), so a large store is not rewritten at start-up; parts
written before expire as merges reach them (docs/scale-out.md, Retention).

Each row expires by the time it is about, so the rows that delete one another (a newer
version, an `is_deleted` row) expire with the rows they replace, never before them:
- per span, per minute and per mark: their span end, minute or minute range; a provisional
  task's key: the start of the consumer's entry that made it;
- a task row: the minute it counts in (its end once finished, else its start); a task row
  deleting a trace's own task (written with the task id and version alone): its version, the
  pass's time, later than anything about the row it deletes;
- span facts and task traces, which hold no time of their own: when they were written.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from agentsla.collector.store.clickhouse import rollups
from agentsla.collector.store.clickhouse.url import StoreURL

log = logging.getLogger("agentsla.retention")

RAW, ROLLUP = "retention", "rollup_retention"


def _at(ns: str) -> str:
    """A DateTime from unix ns (TTL expressions take Date or DateTime)."""
    return f"toDateTime(intDiv({ns}, 1000000000))"


@dataclass(frozen=True)
class Expiry:
    """When the rows of one table expire: `clock` seconds (plus `slack_s`) after `at`."""

    table: str
    clock: str  # RAW or ROLLUP
    at: str  # SQL over a row: a DateTime
    slack_s: int = 0
    #: partitioned by day of `at`: drop whole parts instead of rewriting them
    drop_parts: bool = False

    def ttl(self, seconds: float) -> str:
        return f"{self.at} + toIntervalSecond({int(seconds) + self.slack_s})"


_WRITTEN = "written"  # span facts' and task traces' DateTime DEFAULT now() (agentsla.sql)


def expiries(url: StoreURL) -> list[Expiry]:
    """Return every table of the store that expires, with its clock. A chdb store's traces
    table and trace-id lookup are agentsla's own (nobody else writes them), so they expire
    with the raw clock; a server's belong to the exporter and its `ttl` setting."""
    task_time = _at(f"if(is_deleted = 1, toInt64(version), {rollups.TASK_MINUTE})")
    found = [
        Expiry("agentsla_tasks", RAW, task_time),
        Expiry("agentsla_minute_tasks", RAW, _at("minute_ns")),
        Expiry("agentsla_span_facts", RAW, _WRITTEN),
        Expiry("agentsla_task_traces", RAW, _WRITTEN),
        Expiry("agentsla_hop_spans", RAW, _at("end_ns"), drop_parts=True),
        Expiry("agentsla_finding_spans", RAW, _at("end_ns"), drop_parts=True),
        Expiry("agentsla_finding_evidence", RAW, _at("minute_ns")),
        Expiry("agentsla_evidence_dirty", RAW, _at("hi_ns")),
        Expiry("agentsla_provisional_tasks", RAW, _at("start_ns")),
    ]
    for rollup in rollups.ROLLUPS:  # an hour is kept while any of its minutes is
        minutes, hours = rollup.tiers()
        found += [Expiry(minutes, ROLLUP, _at("minute_ns")),
                  Expiry(hours, ROLLUP, _at("minute_ns"), slack_s=3600)]
    if url.scheme == "chdb":
        found += [Expiry(url.table, RAW, "toDateTime(Timestamp)", drop_parts=True),
                  Expiry(f"{url.table}_trace_id_ts", RAW, "Start", drop_parts=True)]
    return found


def keep(runner: Any, url: StoreURL, retention_s: float, rollup_retention_s: float) -> list[str]:
    """Give every expiring table its TTL where it has another (or none); return the tables
    changed. A table that is not there (an exporter's lookup never created) is skipped."""
    seconds = {RAW: retention_s, ROLLUP: rollup_retention_s}
    engines = {r["name"]: r["engine_full"] for r in runner.arrow(
        "select name, engine_full from system.tables where database = {db:String}",
        {"db": url.database}).to_pylist()}
    changed = []
    for expiry in expiries(url):
        ttl = expiry.ttl(seconds[expiry.clock])
        if expiry.table not in engines or f" TTL {ttl}" in engines[expiry.table]:
            continue
        table = f"{url.database}.{expiry.table}"
        if expiry.drop_parts:
            runner.execute(f"alter table {table} modify setting ttl_only_drop_parts = 1")
        runner.execute(f"alter table {table} modify ttl {ttl} "
                       f"settings materialize_ttl_after_modify = 0")
        changed.append(expiry.table)
    if url.scheme != "chdb" and " TTL " not in engines.get(url.table, " TTL "):
        log.warning("retention: %s.%s (the exporter's) has no TTL and keeps every span for "
                    "ever: set the clickhouseexporter's `ttl` to %s s or less "
                    "(docs/scale-out.md, Retention)", url.database, url.table, int(retention_s))
    if changed:
        log.warning("retention: %d table(s) now expire after %s s (raw) / %s s (rollups): %s",
                    len(changed), int(retention_s), int(rollup_retention_s), ", ".join(changed))
    return changed
