"""Cost of the writer's sweep (lost deadlines and the root grace) over a store of N spans.

    python bench/root_sweep.py --spans 1000000

The store is synthetic and in memory: tasks of 10 spans whose first span is a SERVER span with
a parent that never arrives and no OTLP is_remote flags (the older SDKs' case), received evenly
over the last two hours; 1 % of the tasks are unfinished. The first sweep roots those whose
SERVER span waited out `root_grace` inside the sweep's lookback (reading their spans back and
re-materializing them); the second finds nothing due: the query alone, which runs every 10 s.
Figures are wall times on whatever machine runs it; run it alone (no parallel tests).
"""

from __future__ import annotations

import argparse
import time

import duckdb

from agentsla.collector.store.schema import SPAN_COLUMN_NAMES, migrate
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config

_HOURS = 2


def _span_values(n: int, now_ns: int) -> dict[str, str]:
    """SQL expressions over `i` (0..n-1) for the span columns that matter; the rest null."""
    span = "printf('%016x', i + 1)"
    return {
        "trace_id": "printf('%032x', i // 10)", "task_id": "printf('%032x', i // 10)",
        "span_id": span, "name": "'step'", "status_code": "'unset'",
        # the first span of a task names an upstream parent; the others hang below it
        "parent_span_id": "case when i % 10 = 0 then printf('%016x', 4294967296 + i) "
                          "else printf('%016x', i - i % 10 + 1) end",
        "span_kind": "case when i % 10 = 0 then 'server' else 'internal' end",
        "received_ns": f"{now_ns} - ({_HOURS} * 3600e9 * (1 - i / {n}))::bigint",
        "start_ns": f"{now_ns} - {_HOURS * 3600 * 10**9}",
        "end_ns": f"{now_ns} - {_HOURS * 3600 * 10**9 - 10**9}",
    }


def build(n: int, now_ns: int) -> duckdb.DuckDBPyConnection:
    """Return an in-memory store holding n spans and their n / 10 tasks (1 % unfinished)."""
    con = duckdb.connect()
    migrate(con)
    values = _span_values(n, now_ns)
    con.execute(f"insert into span_store ({', '.join(SPAN_COLUMN_NAMES)}) select "
                f"{', '.join(values.get(c, 'null') for c in SPAN_COLUMN_NAMES)} from range({n}) t(i)")
    con.execute(f"insert into task_store (task_id, first_seen_ns, finished, outcome) "
                f"select printf('%032x', i), {now_ns} - 60e9::bigint, i % 100 <> 0, 'in_progress' "
                f"from range({n // 10}) t(i)")
    return con


def main() -> None:
    """Build the store, sweep twice, print both wall times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=1_000_000)
    args = parser.parse_args()
    now_ns = time.time_ns()
    con = build(args.spans, now_ns)
    writer = TaskWriter(con, load_config(environ={}).tasks)
    for label in ("first sweep (roots the due tasks)", "second sweep (nothing due: the query)"):
        started = time.perf_counter()
        writer.sweep_lost(now_ns=now_ns)
        print(f"{args.spans} spans, {label}: {time.perf_counter() - started:.3f} s")


if __name__ == "__main__":
    main()
