"""Per-minute findings evidence: its tables, and the writer's note of which minutes changed.

The findings worker (queries/findings/evidence.py) stores each finding question's evidence per
minute in a table of the question's own, `finding_evidence__<question>` (`minute_table`), and
each settled hour's in `finding_evidence_hourly__<question>` (`hour_table`). Evidence of a
minute depends only on the rows of the tasks whose time reaches it (a logical call, a parent's
children, a task's spans are all one task's), so the writer records, in the transaction that
changes them, the minutes from the first start to the last end of every task it re-materializes
(`evidence_dirty`, inclusive minute bounds, with when it marked them), and the end minute of
each finished task row it replaces or deletes (a lost task found again, or moved to its
declared task, ended elsewhere).
The writer only ever inserts into that table and the worker only deletes rows it has seen, so
the two never conflict. A minute no dirty range covers has its evidence stored (none, when it
holds no spans). See docs/findings.md.
"""

from __future__ import annotations

import re
import time
from typing import Iterable, Mapping


MINUTE_NS = 60 * 10**9
HOUR_NS = 60 * MINUTE_NS

DDL = (
    # question: the finding question; key: hop_kind/hop_name or task_type; n: additive numbers
    # (each question's verdict knows which it sums and which it takes the max of); label: a
    # text of the minute's headline unit; task_ids: distinct tasks (when the verdict counts
    # them); vals: values a verdict takes a median of; examples: the minute's best five, with
    # the rank the verdict merges them by.
    "create table if not exists finding_evidence (question VARCHAR, minute_ns BIGINT, "
    "hop_kind VARCHAR, hop_name VARCHAR, task_type VARCHAR, n MAP(VARCHAR, DOUBLE), "
    "label VARCHAR, "
    "task_ids VARCHAR[], vals MAP(VARCHAR, DOUBLE[]), "
    "examples STRUCT(task_id VARCHAR, span_id VARCHAR, rank DOUBLE)[], "
    "first_ns BIGINT, last_ns BIGINT)",
    "create table if not exists evidence_dirty (lo_ns BIGINT, hi_ns BIGINT)",
    # the questions (with the thresholds their evidence depends on) finding_evidence holds
    "create table if not exists evidence_questions (question VARCHAR)",
)

#: The hour tier (migration 11): each settled hour's evidence of the questions whose verdict
#: reads no minute of its own, the same columns (minute_ns: the hour's start), and the hours
#: whose hour-tier evidence is missing or older than their minutes'. The worker marks an hour
#: when it stores any of its minutes, and builds it once settled (queries/findings/evidence.py).
#: The hours of the minutes already stored are the hours to build.
_HOUR_DDL = (
    "create table if not exists finding_evidence_hourly as "
    "select * from finding_evidence limit 0",
    "create table if not exists evidence_hours_stale (hour_ns BIGINT)",
    "insert into evidence_hours_stale select distinct minute_ns // 3600000000000 * 3600000000000 "
    "from finding_evidence",
)


def add_hour_tier(con) -> None:
    """Migration 11 (see _HOUR_DDL); nothing on a store that migration 12 already split (an
    earlier migration run again)."""
    if _has_table(con, "finding_evidence"):
        for statement in _HOUR_DDL:
            con.execute(statement)


def _has_table(con, name: str) -> bool:
    return bool(con.execute("select count(*) from information_schema.tables "
                            "where table_schema = 'main' and table_name = ?", [name]).fetchone()[0])


#: The evidence tables of each question (migration 12): a request copies one question's rows at
#: a time, and DuckDB decodes the lists of every row of a vector it reads, so the rows of one
#: question sit apart from the others' (in one table, each copy decoded everyone's task ids).
MINUTE_TABLES = "finding_evidence__"
HOUR_TABLES = "finding_evidence_hourly__"
_QUESTION = re.compile(r"[a-z][a-z0-9_]*")


def minute_table(question: str) -> str:
    """The table of a question's per-minute evidence."""
    return MINUTE_TABLES + _checked(question)


def hour_table(question: str) -> str:
    """The table of a question's hour-tier evidence."""
    return HOUR_TABLES + _checked(question)


def _checked(question: str) -> str:
    if not _QUESTION.fullmatch(question):
        raise ValueError(f"not a finding question's name: {question!r}")
    return question


def evidence_tables(con, prefix: str) -> list[str]:
    """The evidence tables of a tier (MINUTE_TABLES or HOUR_TABLES) the store holds."""
    return [name for (name,) in con.execute(
        "select table_name from information_schema.tables where table_schema = 'main' "
        "and table_type = 'BASE TABLE' and starts_with(table_name, ?) order by 1",
        [prefix]).fetchall()]


def split_by_question(con) -> None:
    """Migration 12: give each registered question (`name@digest`, `.../hour` for the hour
    tier) its tables, holding its rows of `finding_evidence` or `finding_evidence_hourly` in
    minute order, and drop the two (rows of questions no longer registered go with them);
    nothing when they are gone already (the migration run again)."""
    if not _has_table(con, "finding_evidence"):
        return
    for (stored_as,) in con.execute("select question from evidence_questions").fetchall():
        name, hourly = stored_as.split("@")[0], stored_as.endswith("/hour")
        old = "finding_evidence_hourly" if hourly else "finding_evidence"
        con.execute(f"create table {(hour_table if hourly else minute_table)(name)} as "
                    f"select * from {old} where question = ? order by minute_ns", [stored_as])
    con.execute("drop table finding_evidence")
    con.execute("drop table finding_evidence_hourly")


def stored_hours_marks(con) -> list[str]:
    """The statements that mark the hours of every stored minute for the hour tier to build
    again (one mark an hour), after something moved the stored minutes."""
    return [f"insert into evidence_hours_stale select distinct minute_ns // {HOUR_NS} * {HOUR_NS} "
            f"from {table} except select hour_ns from evidence_hours_stale"
            for table in evidence_tables(con, MINUTE_TABLES)]


#: Everything stored so far has no evidence yet: one dirty range over all of it.
BACKFILL = (
    "insert into evidence_dirty select min(start_ns) // 60000000000 * 60000000000, "
    "max(end_ns) // 60000000000 * 60000000000 from span_store having count(*) > 0",
)


#: Migration 13: when each mark was made (unix ns; null for marks made before), so that the
#: worker leaves a minute that is still changing for a later round (queries/findings/evidence.py,
#: `refresh`).
MARKED_AT = ("alter table evidence_dirty add column if not exists marked_ns BIGINT",)


def changed_minutes(tasks: Iterable[tuple[Iterable[Mapping], Mapping]],
                    replaced_ends: Iterable[int] = ()) -> list[tuple[int, int]]:
    """Merge each task's minutes (its spans and its row: start to end) into disjoint runs.

    `tasks` yields (span rows, task row) of the tasks a batch re-materialized;
    `replaced_ends` are the ends of the stored rows it replaced (their minutes count too).
    Returns inclusive (first minute, last minute) pairs in unix ns, adjacent runs joined.
    """
    ranges = [(end // MINUTE_NS, end // MINUTE_NS) for end in replaced_ends]
    for spans, row in tasks:
        times = [t for s in spans for t in (s.get("start_ns"), s.get("end_ns")) if t is not None]
        times += [t for t in (row.get("start_ns"), row.get("end_ns")) if t is not None]
        if times:
            ranges.append((min(times) // MINUTE_NS, max(times) // MINUTE_NS))
    runs: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if runs and lo <= runs[-1][1] + 1:
            runs[-1][1] = max(runs[-1][1], hi)
        else:
            runs.append([lo, hi])
    return [(lo * MINUTE_NS, hi * MINUTE_NS) for lo, hi in runs]


def mark_changed(con, tasks: Iterable[tuple[Iterable[Mapping], Mapping]],
                 replaced_ends: Iterable[int] = ()) -> None:
    """Record, in the caller's transaction, the minutes whose evidence these tasks changed
    (and those of the replaced rows' ends: evidence counted at a task's end moves with it),
    and when."""
    runs = changed_minutes(tasks, replaced_ends)
    if runs:  # one statement: an executemany runs row by row, and registering an Arrow table
        # costs two catalog changes; the runs are few (adjacent minutes are joined)
        now = time.time_ns()
        con.execute("insert into evidence_dirty (lo_ns, hi_ns, marked_ns) values "
                    + ", ".join(["(?, ?, ?)"] * len(runs)),
                    [value for lo, hi in runs for value in (lo, hi, now)])
