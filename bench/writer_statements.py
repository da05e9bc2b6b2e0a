"""What one writer commit runs: each DuckDB call of `TaskWriter.write`, counted and timed.

    python bench/writer_statements.py --tasks 2000 --group-spans 500,2000

The bench's 500-span requests (bench/ingest.py's agent tasks, whole tasks) are decoded,
normalized and joined into groups of `--group-spans` spans, as `serve`'s writer joins the
requests waiting for it; each group is one `TaskWriter.write` into a fresh store. A proxy in
front of the writer's connection records every call it makes (execute, sql, from_arrow and
its insert, register, unregister) with its CPU time (process time: DuckDB's threads too).
Printed per group size: each statement's calls and CPU ms per commit, the total of the calls,
and what the rest of `write` (Python) costs per commit; the first group is a warm-up.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from ingest import SPANS_PER_TASK, build_payloads, scratch_store  # noqa: E402

from agentsla.collector.processing.normalize import normalize_request  # noqa: E402
from agentsla.collector.receivers.decode import decode_body  # noqa: E402
from agentsla.collector.store.writer import TaskWriter  # noqa: E402
from agentsla.config import load_config  # noqa: E402


class _Recorded:
    """A relation returned by `from_arrow`: its `insert_into` recorded as a call."""

    def __init__(self, relation, record) -> None:
        self._relation, self._record = relation, record

    def insert_into(self, table: str) -> None:
        self._record(f"from_arrow().insert_into({table})", self._relation.insert_into, table)

    def __getattr__(self, name: str):
        return getattr(self._relation, name)


class RecordingConnection:
    """The writer's connection, each call counted and its CPU added under a statement label."""

    def __init__(self, con) -> None:
        self._con = con
        self.calls: dict[str, list[float]] = {}

    def _record(self, label: str, function, *args):
        started = time.process_time()
        try:
            return function(*args)
        finally:
            entry = self.calls.setdefault(label, [0, 0.0])
            entry[0] += 1
            entry[1] += time.process_time() - started

    def execute(self, sql: str, *args):
        return self._record(_label(sql), self._con.execute, sql, *args)

    def sql(self, sql: str, *args):
        return self._record(_label(sql), self._con.sql, sql, *args)

    def from_arrow(self, table):
        return _Recorded(self._record("from_arrow", self._con.from_arrow, table), self._record)

    def register(self, name: str, table):
        return self._record(f"register({name})", self._con.register, name, table)

    def unregister(self, name: str):
        return self._record(f"unregister({name})", self._con.unregister, name)

    def __getattr__(self, name: str):
        return getattr(self._con, name)


def _label(sql: str) -> str:
    """A statement's first words, literals and IN lists folded: one label per statement kind."""
    sql = re.sub(r"\s+", " ", sql).strip()
    sql = re.sub(r"\((\?, )*\?\)(, \((\?, )*\?\))*", "(?...)", sql)
    sql = re.sub(r"'[^']*'(, '[^']*')*", "'...'", sql)
    sql = re.sub(r"\b\d{6,}\b", "N", sql)
    return sql[:90]


def groups_of(payloads: list[bytes], group_spans: int,
              clock_ns: int | None = None) -> list[list[dict]]:
    """Normalized rows of the payloads, joined into groups of about group_spans spans
    (received at `clock_ns` plus the request's number in ns; default: now)."""
    limits = load_config().ingest
    groups: list[list[dict]] = [[]]
    for n, body in enumerate(payloads):
        received_ns = time.time_ns() if clock_ns is None else clock_ns + n
        rows = normalize_request(decode_body(body, "application/x-protobuf", None, limits),
                                 limits, received_ns).rows
        if groups[-1] and len(groups[-1]) + len(rows) > group_spans:
            groups.append([])
        groups[-1].extend(rows)
    return groups


def profile_commits(groups: list[list[dict]], rollups: bool = True) -> dict:
    """Each call's count and CPU ms per commit over groups[1:], and the Python rest."""
    with scratch_store("agentsla-stmts-") as con:
        writer = TaskWriter(con, load_config().tasks, rollups=rollups)
        writer.write(groups[0])
        recording = RecordingConnection(con)
        writer.con = writer.rollups.con = recording
        started = time.process_time()
        for rows in groups[1:]:
            writer.write(rows)
        total = time.process_time() - started
    commits = len(groups) - 1
    spans = sum(map(len, groups[1:]))
    statements = sum(cpu for _, cpu in recording.calls.values())
    table = sorted(recording.calls.items(), key=lambda item: -item[1][1])
    return {"commits": commits, "spans_per_commit": round(spans / commits),
            "cpu_ms_per_commit": round(1000 * total / commits, 2),
            "cpu_us_per_span": round(1e6 * total / spans, 1),
            "calls_per_commit": round(sum(n for n, _ in recording.calls.values()) / commits, 1),
            "calls_cpu_ms_per_commit": round(1000 * statements / commits, 2),
            "python_rest_ms_per_commit": round(1000 * (total - statements) / commits, 2),
            "calls": [{"call": label, "per_commit": round(n / commits, 2),
                       "cpu_ms_per_commit": round(1000 * cpu / commits, 3)}
                      for label, (n, cpu) in table]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--group-spans", default="500,2000",
                        help="comma-separated spans per commit")
    parser.add_argument("--rollups-off", action="store_true")
    args = parser.parse_args()
    payloads = build_payloads(args.tasks, 50)
    result = {"spans": args.tasks * SPANS_PER_TASK, "by_group": {}}
    for size in map(int, args.group_spans.split(",")):
        result["by_group"][size] = profile_commits(groups_of(payloads, size),
                                                   rollups=not args.rollups_off)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
