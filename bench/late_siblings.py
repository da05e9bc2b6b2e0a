"""Cost of storing logical calls: numbering on the common path, and the late-sibling update.

    python bench/late_siblings.py --spans 1000000
    python bench/late_siblings.py --data-dir /tmp/q1m --reuse     # a bench/queries.py file

The store is bench/queries.py's synthetic traffic (its `generate`), written to a temp file (or a
copy of `--data-dir`'s file with `--reuse`). One TaskWriter on it then writes, timing each
`write()` (one transaction) and, inside it, the time spent comparing and setting the numbers
(`_set_calls`) and updating stored rows (`_update_calls`):

- fresh: batches of new tasks (gateway, agent, model calls with an unnumbered 429 retry): the
  common path; numbers are set on the rows before the insert, nothing is updated;
- late span: one more tool span for each of those tasks, which changes no stored number;
- late sibling: an earlier failed model attempt for each task, arriving late, so that the
  stored attempts of that call are renumbered: the rare path, one UPDATE per batch.

Then the UPDATE statement alone, with and without a start-time range (zone maps on start_ns).
Figures are wall times (medians) on whatever machine runs it; run it alone (no parallel tests).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from queries import generate, machine  # noqa: E402
from spanfactory import make_span  # noqa: E402

import agentsla.collector.store.writer as writer_module  # noqa: E402
from agentsla.collector.store.database import open_store  # noqa: E402
from agentsla.collector.store.writer import TaskWriter  # noqa: E402
from agentsla.config import load_config  # noqa: E402

RATE_LIMITED = {"error_type": "rate_limited", "http_status": 429, "status_code": "error"}


class Stopwatch:
    """Sums the wall time spent in wrapped callables, by name."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    def wrap(self, name: str, fn):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[name] = self.spent.get(name, 0.0) + time.perf_counter() - start
        return timed

    def take(self) -> dict[str, float]:
        spent, self.spent = self.spent, {}
        return spent


def _task(trace_id: str, at_ns: int) -> list[dict]:
    base = {"trace_id": trace_id}
    ms = 1_000_000
    root = make_span(**base, span_id=trace_id[:16], hop_kind="gateway", span_kind="server",
                     start_ns=at_ns, end_ns=at_ns + 5000 * ms, http_status=200)
    agent = make_span(**base, span_id=trace_id[16:], parent=root, hop_kind="agent",
                      start_ns=at_ns + 5 * ms, end_ns=at_ns + 4990 * ms)
    spans = [root, agent]
    for step in range(3):  # a 429 and its unnumbered retry (one call), then a second call
        t = at_ns + (1000 + step * 1200) * ms
        spans.append(make_span(**base, span_id=f"{trace_id[:14]}a{step}", parent=agent,
                               hop_kind="model", model="gpt-4o", start_ns=t, end_ns=t + 100 * ms,
                               **(RATE_LIMITED if step == 0 else {})))
    return spans


def _late_tool(task: list[dict]) -> dict:
    agent, root = task[1], task[0]
    return make_span(trace_id=root["trace_id"], span_id=root["trace_id"][:14] + "t0",
                     parent=agent, hop_kind="tool", tool="search",
                     start_ns=root["start_ns"] + 4600 * 1_000_000,
                     end_ns=root["start_ns"] + 4700 * 1_000_000)


def _late_first_attempt(task: list[dict]) -> dict:
    agent, root = task[1], task[0]
    return make_span(trace_id=root["trace_id"], span_id=root["trace_id"][:14] + "z0",
                     parent=agent, hop_kind="model", model="gpt-4o",
                     start_ns=root["start_ns"] + 100 * 1_000_000,
                     end_ns=root["start_ns"] + 200 * 1_000_000, **RATE_LIMITED)


def _timed_writes(w: TaskWriter, batches: list[list[dict]], watch: Stopwatch) -> dict:
    walls, numbering, updating = [], [], []
    for rows in batches:
        start = time.perf_counter()
        w.write(rows)
        walls.append(time.perf_counter() - start)
        spent = watch.take()
        numbering.append(spent.get("set_calls", 0.0))
        updating.append(spent.get("update_calls", 0.0))
    return {"batches": len(batches), "spans_per_batch": len(batches[0]),
            "write_ms_median": 1000 * statistics.median(walls),
            "set_calls_ms_median": 1000 * statistics.median(numbering),
            "update_calls_ms_median": 1000 * statistics.median(updating)}


def _raw_update(con, stored: list[dict], ranged: bool) -> float:
    """Time one UPDATE of stored spans (unchanged values, rolled back), start range or not."""
    con.register("u", pa.table({"trace_id": [s["trace_id"] for s in stored],
                                "span_id": [s["span_id"] for s in stored]}))
    where = "span_store.start_ns between $lo and $hi and " if ranged else ""
    params = {"lo": min(s["start_ns"] for s in stored),
              "hi": max(s["start_ns"] for s in stored)} if ranged else {}
    con.execute("begin transaction")
    start = time.perf_counter()
    con.execute(f"update span_store set attempt = attempt from u where {where}"
                "span_store.trace_id = u.trace_id and span_store.span_id = u.span_id", params)
    took = time.perf_counter() - start
    con.execute("rollback")
    con.unregister("u")
    return took


def run(db_path: Path, tasks_per_batch: int, batches: int) -> dict:
    con = open_store(db_path)
    stored_spans = con.execute("select count(*) from span_store").fetchone()[0]
    watch = Stopwatch()
    writer_module._set_calls = watch.wrap("set_calls", writer_module._set_calls)
    TaskWriter._update_calls = watch.wrap("update_calls", TaskWriter._update_calls)
    w = TaskWriter(con, load_config(environ={}).tasks)
    now = time.time_ns()
    rng = random.Random(7)  # random trace ids, as real ones: no key range to prune by
    tasks = [[_task(f"{rng.getrandbits(128):032x}", now + (b * tasks_per_batch + i) * 10**6)
              for i in range(tasks_per_batch)] for b in range(batches)]
    result = {"stored_spans": stored_spans,
              "fresh": _timed_writes(w, [[s for t in b for s in t] for b in tasks], watch),
              "late_span": _timed_writes(w, [[_late_tool(t) for t in b] for b in tasks], watch),
              "late_sibling": _timed_writes(
                  w, [[_late_first_attempt(t) for t in b] for b in tasks], watch)}
    stored = [t[2] for t in tasks[0]]  # one model span of each task of a batch
    result["raw_update_ms"] = {
        name: 1000 * statistics.median(_raw_update(con, stored, ranged) for _ in range(5))
        for name, ranged in (("with_start_range", True), ("without_range", False))}
    con.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=1_000_000)
    parser.add_argument("--data-dir", type=Path, help="a bench/queries.py data dir to copy")
    parser.add_argument("--reuse", action="store_true", help="copy --data-dir's file")
    parser.add_argument("--tasks-per-batch", type=int, default=100)
    parser.add_argument("--batches", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "agentsla.duckdb"
        if args.reuse:
            shutil.copy(args.data_dir / "agentsla.duckdb", db_path)
        else:
            generate(db_path, args.spans, time.time_ns(), log=lambda *a: None)
        result = run(db_path, args.tasks_per_batch, args.batches)
    print(machine())
    for name, figures in result.items():
        print(f"{name}: {figures}")


if __name__ == "__main__":
    main()
