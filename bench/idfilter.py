"""Id lookups of the writer at 10M stored spans: the index probes that replaced the Bloom filter.

    python bench/idfilter.py --spans 10000000

The writer asks, for every trace and task of a batch that its memory does not hold, whether the
database has it. It used to skip the question for ids a fixed-size Bloom filter (IdFilter) said
were new: loaded with every stored id at start, never rebuilt, saturating with retention (20 %
false positives at 10M ids) so that most lookups fell back to a scan. It now asks DuckDB with
literal IN lists, which probe the primary-key (ART) index of `trace_task` and `task_store`.
This script builds a store of `--spans` spans (10 per task) with SQL, then measures: opening a
TaskWriter (no id is loaded), ids looked up per second (new and stored ones, batches of 50 and
1,000) by the index probe and by the join the old fallback used, and writer throughput for
batches of new tasks. It prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import duckdb
import pyarrow as pa

from agentsla.collector.store.database import open_store
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config

SPANS_PER_TASK = 10


def build_store(path: Path, spans: int) -> None:
    """Fill a fresh store with `spans` spans, their tasks and traces (ids md5 of the number)."""
    con = open_store(path)
    tasks = spans // SPANS_PER_TASK
    now = time.time_ns()
    con.execute("""
        insert into span_store (trace_id, span_id, task_id, name, start_ns, end_ns, duration_ms,
                                status_code, span_kind, attributes, resource, events, links,
                                received_ns)
        select md5((i // $per)::varchar), lpad(printf('%x', i), 16, '0'),
               'task-' || (i // $per), 'span', $now - i * 1000, $now - i * 1000 + 5000000, 5.0,
               'unset', 'internal', '{}', '{}', '[]', '[]', $now
        from range($spans) t(i)
        """, {"per": SPANS_PER_TASK, "spans": spans, "now": now})
    con.execute("""
        insert into task_store (task_id, trace_id, start_ns, end_ns, outcome, finished,
                                span_count, first_seen_ns, updated_ns)
        select 'task-' || i, md5(i::varchar), $now, $now, 'success', true, $per, $now, $now
        from range($tasks) t(i)
        """, {"per": SPANS_PER_TASK, "tasks": tasks, "now": now})
    con.execute("insert into trace_task select md5(i::varchar), 'task-' || i "
                "from range($tasks) t(i)", {"tasks": tasks})
    con.execute("checkpoint")
    con.close()


def _rate(run, ids: list[str], repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        run(ids)
    return round(len(ids) * repeat / (time.perf_counter() - started))


def _join_lookup(con: duckdb.DuckDBPyConnection):
    def run(ids: list[str]) -> None:  # the fallback of the filter era: a join, so a scan
        con.register("lookup", pa.table({"id": pa.array(ids, pa.string())}))
        con.execute("select trace_id, task_id from trace_task "
                    "where trace_id in (select id from lookup)").fetchall()
        con.unregister("lookup")
    return run


def bench_lookups(writer: TaskWriter, tasks: int) -> dict:
    """Ids per second through the index probe (new and stored ids) and through the old join."""
    probe = lambda ids: list(writer._probe(ids, [])[0].items())  # noqa: E731
    out = {}
    for size in (50, 1000):
        stored = [row[0] for row in writer.con.execute(
            "select md5((hash(i) % $tasks)::varchar) from range($n) t(i)",
            {"tasks": tasks, "n": size}).fetchall()]
        new = [f"{i:032x}" for i in range(size)]
        assert len(probe(stored)) == len(set(stored)) and probe(new) == []
        out[f"batch_{size}"] = {
            "index_new_ids_per_s": _rate(probe, new, max(3, 20_000 // size)),
            "index_stored_ids_per_s": _rate(probe, stored, max(3, 20_000 // size)),
            "join_ids_per_s": _rate(_join_lookup(writer.con), new, 3)}
    return out


def bench_writes(writer: TaskWriter, batches: int, tasks_per_batch: int) -> float:
    """Spans per second the writer stores in batches of new tasks (rows built beforehand)."""
    from spanfactory import make_trace  # noqa: PLC0415 - the tests' row builder

    run = time.time_ns() % 2**40  # fresh ids on every run over a reused store
    rows = [make_trace({"span_id": f"{b:06x}{t:06x}01", "hop_kind": "gateway", "end_ms": 90},
                       {"span_id": f"{b:06x}{t:06x}02", "parent_span_id": f"{b:06x}{t:06x}01",
                        "hop_kind": "model", "model": "gpt-4o", "end_ms": 80},
                       trace_id=f"{run:010x}{b:011x}{t:011x}", task_id=None)
            for b in range(batches) for t in range(tasks_per_batch)]
    flat = [[span for trace in rows[b * tasks_per_batch:(b + 1) * tasks_per_batch]
             for span in trace] for b in range(batches)]
    started = time.perf_counter()
    for batch in flat:
        writer.write(batch)
    return round(sum(map(len, flat)) / (time.perf_counter() - started))


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def main() -> None:
    """Build (or reuse) the store, then print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=10_000_000)
    parser.add_argument("--path", default="/tmp/agentsla-bench-idfilter/agentsla.duckdb")
    args = parser.parse_args()
    path = Path(args.path)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        began = time.perf_counter()
        build_store(path, args.spans)
        print(f"built {args.spans:,} spans in {time.perf_counter() - began:.0f} s", flush=True)
    con = open_store(path)
    stored = con.execute("select count(*) from span_store").fetchall()[0][0]
    rss_before = _rss_mib()
    began = time.perf_counter()
    writer = TaskWriter(con, load_config().tasks)
    result = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                         f"Python {platform.python_version()}, DuckDB {duckdb.__version__}",
              "stored_spans": stored, "writer_open_s": round(time.perf_counter() - began, 3),
              "writer_open_rss_growth_mib": round(_rss_mib() - rss_before, 1),
              "lookups": bench_lookups(writer, stored // SPANS_PER_TASK),
              "writer_spans_per_s_new_tasks": bench_writes(writer, 20, 250)}
    con.close()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
    main()
