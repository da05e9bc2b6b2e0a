"""One materializer pass over a kept `bench/clickhouse.py --keep` store, with and without the
time bound of its traces' read (the exporter's `otel_traces_trace_id_ts` lookup), alternating.

    python bench/clickhouse_pass.py --path /tmp/ch2m --runs 3

Each run sets shard 0/1's watermark to the middle of the stored day and runs one pass over
`--slice-minutes` of span time (late window 0): the same spans and tasks every time (passes
are idempotent). The bound is switched off by making `_trace_bounds` answer None, as for a
store without the lookup. Printed per run: the pass's wall and CPU time (this process, chdb's
threads included) and the CPU of the read of its traces' spans (`_spans`); then the medians.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time

from agentsla.collector.store.clickhouse import materializer
from agentsla.collector.store.clickhouse.materializer import NS, Shard, run_pass
from agentsla.collector.store.clickhouse.url import parse_store_url
from agentsla.config import load_config
from agentsla.queries.engines.clickhouse import open_runner
from cputime import recording_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", required=True, help="a kept bench/clickhouse.py store")
    parser.add_argument("--runs", type=int, default=3, help="passes of each kind")
    parser.add_argument("--slice-minutes", type=float, default=10.0)
    args = parser.parse_args()
    runner = open_runner(parse_store_url(f"chdb://{args.path}"))
    (row,) = runner.arrow("select toUnixTimestamp64Nano(min(Timestamp)) as lo, count() as n "
                          "from default.otel_traces", {}).to_pylist()
    mark = row["lo"] + 43200 * NS
    config = dataclasses.replace(load_config(environ={}).tasks, late_window=0.0, root_grace=0.0,
                                 materialize_max_window=args.slice_minutes * 60)
    bounded, spans_read = materializer._trace_bounds, materializer._spans
    read_cpu: list[float] = []
    materializer._spans = recording_cpu(spans_read, read_cpu)
    results: dict[str, list[tuple[float, float, float]]] = {"unbounded": [], "bounded": []}
    print(f"{row['n']:,} stored spans; load average {os.getloadavg()}", flush=True)
    for run in range(args.runs):
        for kind in ("unbounded", "bounded"):
            materializer._trace_bounds = bounded if kind == "bounded" else lambda *a: None
            runner.insert("default.agentsla_watermarks",
                          [{"shard": "0/1", "watermark_ns": mark, "version": time.time_ns()}])
            cpu, wall = time.process_time(), time.perf_counter()
            done = run_pass(runner, "default", "otel_traces", Shard(0, 1), config,
                            mark + int(args.slice_minutes * 60 * NS))
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            results[kind].append((wall, cpu, read_cpu[-1]))
            print(f"run {run} {kind:9s}: {done.spans:,} spans, {done.tasks:,} tasks, "
                  f"{wall:.2f} s wall, {cpu:.2f} s CPU (spans read {read_cpu[-1]:.2f} s CPU)",
                  flush=True)
    for kind, rows in results.items():
        wall, cpu, read = (statistics.median(r[i] for r in rows) for i in range(3))
        print(f"median {kind:9s}: {wall:.2f} s wall, {cpu:.2f} s CPU, spans read {read:.2f} s "
              f"CPU", flush=True)
    print(f"load average {os.getloadavg()}")
    runner.close()


if __name__ == "__main__":
    main()
