"""`agentsla rollups check | rebuild`: compare rollup answers with raw answers; rebuild rollups.

On DuckDB both open the file of --data-dir directly, so the server must be stopped (DuckDB
allows one process per file) or the command pointed at a copy of the file. With `--store
clickhouse://...|chdb:///...` they run on that store; `rebuild --shards M` rebuilds the
ClickHouse rollups for M materializer shards (stop the workers first; docs/scale-out.md).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any, Callable

from agentsla.collector.store import rollups
from agentsla.collector.store.clickhouse import rollups as ch_rollups
from agentsla.collector.store.database import open_store
from agentsla.commands._flags import add_setting_flags, config_from_args
from agentsla.config import Config, parse_duration
from agentsla.errors import PermanentError
from agentsla.queries._sql import DIMENSIONS
from agentsla.queries.budget import budget_waterfall
from agentsla.queries.engines.clickhouse import ClickHouseStore, open_runner
from agentsla.queries.engines.duckdb import DuckDBStore
from agentsla.queries.hops import hop_series, hop_stats
from agentsla.queries.rollup import MINUTE_NS
from agentsla.queries.root_causes import root_cause_series, root_causes
from agentsla.queries.sla import sla_by, sla_series, sla_totals
from agentsla.queries.slo import slo_window
from agentsla.queries.store import ReadStore

NS = 1_000_000_000
#: Series step of the check: whole minutes, so the rollups answer it.
_STEP_NS = 5 * MINUTE_NS


def add_parser(subparsers) -> None:
    """Add `agentsla rollups` to the CLI."""
    parser = subparsers.add_parser(
        "rollups", help="Check the per-minute rollups against raw spans, or rebuild them.",
        description="check: ask every aggregate question of a window from the rollups and from "
                    "raw tasks and spans, and list the differences (exit 1 if any). rebuild: "
                    "recompute every rollup from the stored tasks and spans (the rollups then "
                    "reach back only as far as raw retention: older minutes are lost). Stop "
                    "the server first (DuckDB allows one process per file). On a ClickHouse store "
                    "(--store), rebuild --shards M rebuilds them for M materializer shards: "
                    "stop every `agentsla materialize` worker first. See docs/rollups.md and "
                    "docs/scale-out.md.")
    parser.add_argument("action", choices=("check", "rebuild"))
    parser.add_argument("--shards", type=int, default=None, metavar="M",
                        help="rebuild, ClickHouse store: the number of materializer shards "
                             "the rollups are kept for from now on (workers 0/M ... M-1/M).")
    parser.add_argument("--window", default="1h",
                        help="check: the window ending now (or at --to), e.g. 1h, 1d. Default 1h.")
    parser.add_argument("--to", metavar="UNIX_SECONDS", type=float, default=None,
                        help="check: the window's end (default now).")
    add_setting_flags(parser, ["data_dir", "store"])
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, environ) -> int:
    """Run the command."""
    config = config_from_args(args, environ)
    if config.server.store.is_clickhouse:
        return _run_clickhouse(args, config)
    if args.shards is not None:
        raise PermanentError("--shards is for a ClickHouse store (--store clickhouse://... or "
                             "chdb:///path): DuckDB's rollups have no shards")
    con = open_store(config.server.db_path)
    try:
        if args.action == "rebuild":
            rollups.rebuild(con, progress=_progress)
            print("rollups rebuilt", file=sys.stderr)
            return 0
        end_ns, start_ns = _window(args)
        differences = compare(DuckDBStore(con), config, start_ns, end_ns)
    finally:
        con.close()
    return _report(differences)


def _run_clickhouse(args: argparse.Namespace, config: Config) -> int:
    url = config.server.store
    if args.action == "rebuild" and (args.shards is None or args.shards < 1):
        raise PermanentError("rebuild on a ClickHouse store needs --shards M (M >= 1): the "
                             "number of `agentsla materialize` workers, 0/M ... M-1/M")
    runner = open_runner(url)
    try:
        if args.action == "rebuild":
            ch_rollups.reshard(runner, url.database, args.shards,
                               lambda line: print(line, file=sys.stderr))
            print(f"rollups rebuilt for {args.shards} shard(s)", file=sys.stderr)
            return 0
        end_ns, start_ns = _window(args)
        differences = compare(ClickHouseStore(runner), config, start_ns, end_ns)
    finally:
        runner.close()
    return _report(differences)


def _window(args: argparse.Namespace) -> tuple[int, int]:
    end_ns = int((args.to if args.to is not None else time.time()) * NS)
    try:
        return end_ns, end_ns - int(parse_duration(args.window) * NS)
    except ValueError as exc:
        raise PermanentError(f"bad --window {args.window!r}: {exc}") from None


def _report(differences: list[str]) -> int:
    for line in differences:
        print(line)
    print(f"{len(differences)} difference(s)", file=sys.stderr)
    return 1 if differences else 0


def _progress(table: str, done: int, total: int) -> None:
    print(f"\r{table}: day {done}/{total}", end="\n" if done == total else "", file=sys.stderr)


def questions(config: Config, start_ns: int, end_ns: int) -> dict[str, Callable[..., Any]]:
    """Return the aggregate questions of a window, each taking (store, raw)."""
    series_start = -(-start_ns // MINUTE_NS) * MINUTE_NS
    asked: dict[str, Callable[..., Any]] = {
        "sla_totals": lambda s, raw: sla_totals(s, start_ns, end_ns, raw=raw),
        "sla_series": lambda s, raw: sla_series(s, series_start, end_ns, _STEP_NS, raw=raw),
        "root_causes": lambda s, raw: root_causes(s, start_ns, end_ns, limit=10_000, raw=raw),
        "root_cause_series": lambda s, raw: root_cause_series(s, series_start, end_ns, _STEP_NS,
                                                              raw=raw),
        "hop_stats": lambda s, raw: hop_stats(s, start_ns, end_ns, limit=100_000, raw=raw),
        "hop_series": lambda s, raw: hop_series(s, series_start, end_ns, _STEP_NS, limit=100,
                                                raw=raw),
        "slo_window": lambda s, raw: slo_window(s, config, start_ns, end_ns, raw=raw),
        "budget_waterfall": lambda s, raw: budget_waterfall(s, start_ns, end_ns, raw=raw),
    }
    for dim in DIMENSIONS:
        asked[f"sla_by/{dim}"] = lambda s, raw, dim=dim: sla_by(s, start_ns, end_ns, dim, raw=raw)
    return asked


def compare(store: ReadStore, config: Config, start_ns: int, end_ns: int) -> list[str]:
    """Answer every aggregate question from rollups and from raw rows; list where they differ."""
    out: list[str] = []
    for name, ask in questions(config, start_ns, end_ns).items():
        out += [f"{name}{where}: {detail}" for where, detail in
                _differences(ask(store, False), ask(store, True), "")]
    return out


def _differences(rolled: Any, raw: Any, where: str) -> list[tuple[str, str]]:
    if isinstance(rolled, dict) and isinstance(raw, dict):
        keys = sorted(set(rolled) | set(raw))
        return [d for k in keys for d in _differences(rolled.get(k), raw.get(k), f"{where}.{k}")]
    if isinstance(rolled, list) and isinstance(raw, list):
        if len(rolled) != len(raw):
            return [(where, f"{len(rolled)} rows from rollups, {len(raw)} from raw")]
        return [d for i, (a, b) in enumerate(zip(rolled, raw))
                for d in _differences(a, b, f"{where}[{i}]")]
    if _same(rolled, raw):
        return []
    return [(where, f"rollups {rolled!r} != raw {raw!r}")]


def _same(a: Any, b: Any) -> bool:
    # counts are exact; sums of floats (rates, seconds, interpolated quantiles) may differ in
    # their last bits with the order of addition
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b
