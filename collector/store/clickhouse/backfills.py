"""Start-up backfill of agentsla_finding_spans for a store materialized before it existed.

Such a store holds judged spans (span facts) but no finding rows, and its findings would be
empty. The backfill copies them from the typed spans joined with their facts (what `spans`
reads), one day of span starts at a time: each statement reads one partition of the exporter's table
and that day's traces' facts, so it is bounded by a day's spans whatever the store's size. The
days are planned once, in agentsla_backfills, and each is marked done after its copy, so a
restarted backfill resumes at the first pending day (a day copied twice writes the same rows).
Rows are written at version 0, so what any pass writes for the same span wins.
"""

from __future__ import annotations

import logging
import time
from datetime import date, timedelta
from typing import Any

from agentsla.collector.store.clickhouse import schema

log = logging.getLogger("agentsla.store")

NAME = "finding_spans"
DAY_NS = 86_400 * 1_000_000_000


def backfill_finding_spans(runner: Any, database: str, now_ns: int) -> None:
    """Plan the backfill if the store has judged spans and no finding rows (an upgrade), then
    copy every pending day, logging each; a no-op once every planned day is done."""
    if _needs_plan(runner, database):
        _plan(runner, database, now_ns)
    pending = [r["day"] for r in runner.arrow(
        f"select day from {database}.agentsla_backfills final where name = {{name:String}} "
        f"and not done order by day", {"name": NAME}).to_pylist()]
    for n, day in enumerate(pending, 1):
        started = time.monotonic()
        lo = _day_ns(day)
        runner.execute(schema.finding_spans_backfill_sql(database),
                       {"lo": lo, "hi": lo + DAY_NS})
        _mark(runner, database, [day], done=1, version=time.time_ns())
        log.info("finding spans of %s: day %s backfilled (%d/%d, %.1f s)", database, day, n,
                 len(pending), time.monotonic() - started)


def _needs_plan(runner: Any, database: str) -> bool:
    """Whether the store holds span facts but no finding rows and no plan: a pass writes its
    finding rows before its facts, so only a store of an earlier version has facts alone."""
    def empty(table: str, where: str = "") -> bool:
        return not runner.arrow(f"select 1 from {database}.{table} {where} limit 1",
                                {"name": NAME}).num_rows

    return (not empty("agentsla_span_facts") and empty("agentsla_finding_spans")
            and empty("agentsla_backfills", "where name = {name:String}"))


def _plan(runner: Any, database: str, now_ns: int) -> None:
    """Record every day (UTC) from the first to the last span start of the traces table as
    pending."""
    (row,) = runner.arrow(f"select toDate(min(Timestamp), 'UTC') as first, "  # days as _day_ns
                          f"toDate(max(Timestamp), 'UTC') as last from "
                          f"{database}.agentsla_traces", {}).to_pylist()
    days = [row["first"] + timedelta(days=i) for i in range((row["last"] - row["first"]).days + 1)]
    _mark(runner, database, days, done=0, version=now_ns)
    log.info("finding spans of %s: the store holds judged spans but no finding rows (a store of "
             "an earlier version); backfilling %d day(s) from %s, one day per statement; "
             "findings miss the spans of the days not yet done", database, len(days),
             row["first"])


def _mark(runner: Any, database: str, days: list[date], done: int, version: int) -> None:
    runner.insert(f"{database}.agentsla_backfills",
                  [{"name": NAME, "day": d.isoformat(), "done": done, "version": version}
                   for d in days])


def _day_ns(day: date) -> int:
    """The start of that UTC day, in unix ns."""
    return (day - date(1970, 1, 1)).days * DAY_NS
