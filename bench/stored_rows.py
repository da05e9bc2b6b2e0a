"""Digest of what one load stores: spans, tasks, trace mappings and every rollup tier.

    python bench/stored_rows.py --tasks 2000 [--children-first] [--group-spans 500] > a.json

Writes bench/ingest.py's agent spans (fixed seed) through `TaskWriter.write` into a fresh
store, each group at a fixed clock (so `updated_ns` and `received_ns` repeat), merges the
rollups' pending rows, and prints each table's row count and the SHA-256 of its rows in a
total order. Run it from two trees (before and after a writer change) and diff the outputs:
equal digests mean identical stored rows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from ingest import build_payloads, scratch_store  # noqa: E402
from writer_statements import groups_of  # noqa: E402

from agentsla.collector.store.rollups import ROLLUPS, STORED, merge_pending  # noqa: E402
from agentsla.collector.store.writer import TaskWriter  # noqa: E402
from agentsla.config import load_config  # noqa: E402

#: The clock of the first group; each next group is one millisecond later.
_CLOCK_NS = 1_800_000_000 * 10**9


def stored_digest(tasks: int, children_first: bool, group_spans: int) -> dict:
    """Row count and SHA-256 of each stored table after writing the load."""
    payloads = build_payloads(tasks, 50, children_first=children_first, now_ns=_CLOCK_NS)
    groups = groups_of(payloads, group_spans, _CLOCK_NS)
    with scratch_store("agentsla-rows-") as con:
        writer = TaskWriter(con, load_config().tasks)
        for n, rows in enumerate(groups):
            writer.write(rows, now_ns=_CLOCK_NS + n * 10**6)
        merge_pending(con)
        tables = ["span_store", "task_store", "trace_task"]
        tables += [tier + STORED for rollup in ROLLUPS for tier in rollup.tiers()]
        return {table: _digest(con, table) for table in tables}


def _digest(con, table: str) -> dict:
    rows = con.execute(f"select * from {table} order by all").fetchall()
    return {"rows": len(rows), "sha256": hashlib.sha256(repr(rows).encode()).hexdigest()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--children-first", action="store_true")
    parser.add_argument("--group-spans", type=int, default=500)
    args = parser.parse_args()
    print(json.dumps(stored_digest(args.tasks, args.children_first, args.group_spans), indent=2))


if __name__ == "__main__":
    main()
