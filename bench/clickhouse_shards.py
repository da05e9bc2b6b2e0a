"""The materializer's cost per shard: one pass of shard 0/1 and of each shard of 2, over one
slice of a `bench/clickhouse.py` store, with this tree's materializer and (with `--before`) an
earlier one's, alternating in one process.

    python bench/clickhouse_shards.py --path /tmp/ch1m --spans 1000000 \
        --before /tmp/before/collector/store/clickhouse

The store at `--path` is generated first if it holds no spans (`bench/clickhouse.py`'s
`generate`: one trace per task, every trace declaring its task). `--before` names a copy of
`collector/store/clickhouse` of another commit (`git archive <commit>
collector/store/clickhouse | tar -x -C /tmp/before`): its `materializer.py` and `rollups.py`
run the "before" passes. Each pass sets its shard's watermark to the middle of the stored day
and judges `--slice-minutes` of span time (late window 0): the same spans every run, passes
being idempotent. Printed per pass: spans judged, tasks, wall and CPU seconds (this process,
chdb's threads included) and of its discovery (`_task_traces`); then per code and shard count
the median CPU and the spans judged per CPU second (for N = 2, both shards' spans over both
shards' CPU), and the load average.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

from agentsla.collector.store.clickhouse import materializer
from agentsla.collector.store.clickhouse.materializer import NS, Shard
from agentsla.collector.store.clickhouse.url import parse_store_url
from agentsla.config import load_config
from agentsla.queries.engines.clickhouse import open_runner
from cputime import recording_cpu

SHARD_COUNTS = {1: [Shard(0, 1)], 2: [Shard(0, 2), Shard(1, 2)]}


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _before(directory: Path) -> ModuleType:
    """Return the materializer of `directory`, wired to the rollups of the same directory."""
    old = _load(directory / "materializer.py", "before_materializer")
    old.rollups = _load(directory / "rollups.py", "before_rollups")
    return old


def _generate_if_empty(runner, spans: int) -> None:
    (row,) = runner.arrow("select count() as n from default.otel_traces", {}).to_pylist()
    if row["n"]:
        return
    generated = _load(Path(__file__).with_name("clickhouse.py"), "bench_clickhouse")
    cpu = time.process_time()
    generated.generate(runner, spans, time.time_ns() - generated.DAY_NS)
    runner.execute("optimize table default.otel_traces final")
    print(f"generated {spans:,} spans in {time.process_time() - cpu:.1f} s CPU", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", required=True, help="a chdb store (generated if empty)")
    parser.add_argument("--spans", type=int, default=1_000_000, help="spans to generate")
    parser.add_argument("--before", type=Path, help="an earlier collector/store/clickhouse")
    parser.add_argument("--runs", type=int, default=2, help="passes of each code and shard")
    parser.add_argument("--slice-minutes", type=float, default=10.0)
    args = parser.parse_args()
    runner = open_runner(parse_store_url(f"chdb://{args.path}"))
    _generate_if_empty(runner, args.spans)
    (row,) = runner.arrow("select toUnixTimestamp64Nano(min(Timestamp)) as lo, count() as n "
                          "from default.otel_traces", {}).to_pylist()
    mark = row["lo"] + 43200 * NS  # mid-day
    until = mark + int(args.slice_minutes * 60 * NS)
    config = dataclasses.replace(load_config(environ={}).tasks, late_window=0.0,
                                 root_grace=0.0, materialize_max_window=args.slice_minutes * 60)
    codes = {"after": materializer, **({"before": _before(args.before)} if args.before else {})}
    discovery: list[float] = []
    for module in codes.values():
        module._task_traces = recording_cpu(module._task_traces, discovery)
    # (code, shard count) -> per run: (spans, cpu) summed over the count's shards
    totals: dict[tuple[str, int], list[tuple[int, float]]] = {}
    print(f"{row['n']:,} stored spans; load average {os.getloadavg()}", flush=True)
    for run in range(args.runs):
        for code, module in codes.items():
            for count, shards in SHARD_COUNTS.items():
                spans = cpu_sum = 0
                for shard in shards:
                    runner.insert("default.agentsla_watermarks", [
                        {"shard": str(shard), "watermark_ns": mark, "version": time.time_ns()}])
                    cpu, wall = time.process_time(), time.perf_counter()
                    done = module.run_pass(runner, "default", "otel_traces", shard, config,
                                           until)
                    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                    spans, cpu_sum = spans + done.spans, cpu_sum + cpu
                    print(f"run {run} {code:6s} shard {shard}: {done.spans:,} spans, "
                          f"{done.tasks:,} tasks, {wall:.2f} s wall, {cpu:.2f} s CPU (discovery "
                          f"{discovery[-1]:.2f} s); load "
                          f"{os.getloadavg()[0]:.1f}", flush=True)
                totals.setdefault((code, count), []).append((spans, cpu_sum))
    for (code, count), rows in totals.items():
        cpu = statistics.median(r[1] for r in rows)
        print(f"median {code:6s} N={count}: {rows[0][0]:,} spans judged, {cpu:.2f} s CPU over "
              f"the {count} shard(s), {rows[0][0] / cpu:,.0f} spans per CPU second", flush=True)
    print(f"load average {os.getloadavg()}")
    runner.close()


if __name__ == "__main__":
    sys.exit(main())
