"""Time `/findings` in-process by part, a git revision's SQL against the work tree's, alternated.

    python bench/findings_parts.py --old main OLD.duckdb NEW.duckdb --repeat 3
    python bench/findings_parts.py --old main OLD.duckdb NEW.duckdb --backfill   # store evidence

Each file is opened with the server's memory limit (1 GB); the windows (1 h, 24 h) end at the
file's newest span end, as bench/queries.py sends them. `--old REV` answers from the first file
with the DuckDB SQL of REV (the files under queries/sql/duckdb/ that differ from the work tree,
read with `git show`; Python stays the work tree's) and from the second with the work tree's,
one after the other in one process, warm (one untimed call each first); `--whole-minutes`
widens the new file's windows to whole minutes, as `find_findings` now does. Each call of `_detect`
is split by what its statements do: `edges` (evidence of the ragged edges and stale minutes from
raw rows), `stored` (the stored minutes copied for the verdicts), `verdicts` (the verdicts, and
the questions still on the raw path), `plan` (the rest); wall and CPU seconds (process time: all
of DuckDB's threads), medians over the repeats. `--backfill` stores every dirty minute's
evidence of each file with its own SQL, in rounds of `--round` minutes, and says how long.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Mapping

import duckdb

from agentsla.queries import store as query_store
from agentsla.queries.engines.duckdb import DuckDBStore
from agentsla.queries.findings import _detect, resolve_thresholds
from agentsla.queries.findings.evidence import refresh, whole_minutes

NS = 1_000_000_000
_SQL_DIR = "queries/sql/duckdb"
_work_read = query_store._read
_old: dict[str, str] = {}  # name -> the old revision's text
_use_old = False


def _use(old: bool) -> None:
    """Answer with the old revision's SQL or the work tree's (filled statements are cached by
    their template, so the cache is cleared on each switch)."""
    global _use_old
    _use_old = old
    query_store._fill.cache_clear()


def _read(dialect: str, name: str) -> str:
    if _use_old and dialect == "duckdb" and name in _old:
        return _old[name]
    return _work_read(dialect, name)


def _load_old(rev: str) -> None:
    root = Path(__file__).parents[1]
    changed = subprocess.run(["git", "diff", "--name-only", rev, "--", _SQL_DIR], cwd=root,
                             check=True, capture_output=True, text=True).stdout.split()
    for path in changed:
        name = path[len(_SQL_DIR) + 1:-len(".sql")]
        shown = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=root, capture_output=True,
                               text=True)
        if shown.returncode == 0:
            _old[name] = shown.stdout
    print(f"old SQL of {rev}: {sorted(_old)}")


class TimedStore:
    """A DuckDBStore that adds each statement's wall and CPU time to its part."""

    dialect = "duckdb"

    def __init__(self, inner: DuckDBStore) -> None:
        self._inner = inner
        self.parts: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        self.questions: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])

    def rows(self, question: str, params: Mapping[str, Any] | None = None,
             **fragments: str) -> list[dict]:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return self._inner.rows(question, params, **fragments)
        finally:
            spent = (time.perf_counter() - wall, time.process_time() - cpu)
            part = _part(question)
            for table, key in ((self.parts, part),
                               (self.questions, f"{part} {fragments.get('evidence', question)}")):
                table[key][0] += spent[0]
                table[key][1] += spent[1]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _part(question: str) -> str:
    if question == "findings/evidence_raw":
        return "edges"
    if question == "findings/evidence_stored":
        return "stored"
    if question.startswith(("findings/evidence_", "findings/scope_")):
        return "plan"
    return "verdicts"


def _open(path: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(path), config={"memory_limit": "1GB"})


def _backfill(con: duckdb.DuckDBPyConnection, thresholds: Mapping[str, Any],
              minutes: int) -> None:
    store = DuckDBStore(con.cursor())
    began = time.perf_counter()
    done, hours, left = 0, 0, None
    while left != 0:
        did = refresh(store, thresholds, minutes)
        done, hours = done + did.minutes, hours + did.hours
        left = did.pending + did.hours_pending
        print(f"  {done} minutes stored, {hours} hours built, {did.pending} minutes and "
              f"{did.hours_pending} hours left, {time.perf_counter() - began:.0f} s", flush=True)


def _time(con, thresholds, window_ns: int, mode: str, results, minutes: bool) -> list[dict]:
    (end,) = con.execute("select max(end_ns) + 1 from spans").fetchone()
    window = whole_minutes(end - window_ns, end) if minutes else (end - window_ns, end)
    timed = TimedStore(DuckDBStore(con.cursor()))
    wall, cpu = time.perf_counter(), time.process_time()
    found = _detect(timed, *window, None, thresholds)
    total = (time.perf_counter() - wall, time.process_time() - cpu)
    label = f"{window_ns // (3600 * NS)}h {mode}"
    results[label]["total"].append(total)
    for part, spent in timed.parts.items():
        results[label][part].append(tuple(spent))
    for key, spent in timed.questions.items():
        results[label]["q " + key].append(tuple(spent))
    results[label]["findings"].append((len(found), 0.0))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old_file", type=Path)
    parser.add_argument("new_file", type=Path)
    parser.add_argument("--old", required=True, help="the git revision whose SQL the old file "
                                                     "is answered with")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--windows", default="1,24", help="hours, comma-separated")
    parser.add_argument("--backfill", action="store_true")
    parser.add_argument("--round", type=int, default=240, help="minutes a backfill round")
    parser.add_argument("--whole-minutes", action="store_true",
                        help="answer the new file over the windows widened to whole minutes, "
                             "as find_findings does (the old one over the ragged windows)")
    parser.add_argument("--questions", action="store_true", help="print each question's time")
    args = parser.parse_args()
    _load_old(args.old)
    query_store._read = _read
    thresholds = resolve_thresholds({})
    cons = {"old": _open(args.old_file), "new": _open(args.new_file)}
    if args.backfill:
        for mode, con in cons.items():
            _use(mode == "old")
            print(f"backfill {mode}:", flush=True)
            _backfill(con, thresholds, args.round)
        return
    print(f"load average {os.getloadavg()}", flush=True)
    windows = [int(h) * 3600 * NS for h in args.windows.split(",")]
    results: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    answers: dict[str, list] = {}
    for rep in range(args.repeat + 1):
        for window_ns in windows:
            for mode, con in cons.items():
                _use(mode == "old")
                sink = results if rep else defaultdict(lambda: defaultdict(list))
                answers[f"{window_ns} {mode}"] = _time(con, thresholds, window_ns, mode, sink,
                                                       args.whole_minutes and mode == "new")
        print(f"round {rep} done, load average {os.getloadavg()}", flush=True)
    _use(False)
    for window_ns in windows:
        old, new = answers[f"{window_ns} old"], answers[f"{window_ns} new"]
        print(f"{window_ns // (3600 * NS)}h: {len(old)} old, {len(new)} new findings")
        for finding in [f for f in old if f not in new] + [f for f in new if f not in old]:
            print("  differs:", finding["type"], finding["rule"], finding["hop"],
                  finding["evidence"], [e["task_id"] for e in finding["examples"]])
    for label, parts in sorted(results.items()):
        print(label)
        for part, spent in sorted(parts.items()):
            if part.startswith("q ") and not args.questions:
                continue
            walls = [s[0] for s in spent]
            cpus = [s[1] for s in spent]
            print(f"  {part:60s} wall {statistics.median(walls):7.3f} s "
                  f"({min(walls):.3f}-{max(walls):.3f})  cpu {statistics.median(cpus):7.3f} s")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
