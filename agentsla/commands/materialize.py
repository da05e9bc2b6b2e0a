"""`agentsla materialize --store URL --shard K/N`: turn new spans in ClickHouse into tasks.

N workers run side by side, each owning the traces whose id hashes to its K; each pass
re-reads from its watermark minus the late window, so a worker that crashed restarts where
its shard stopped, and a replayed pass writes the same rows again (idempotent). The worker of
shard 0 also keeps the stored findings evidence of the minutes passes dirtied (one refresher
per store: docs/scale-out.md, Stored findings evidence) and sets the store's retention from
its settings at start (docs/scale-out.md, Retention).
"""

from __future__ import annotations

import argparse
import sys
import time

from agentsla.collector.store.clickhouse.materializer import parse_shard
from agentsla.collector.store.clickhouse.worker import MaterializerLoop, start_shard
from agentsla.commands._flags import add_setting_flags, config_from_args
from agentsla.errors import PermanentError, RetryableError
from agentsla.queries.engines.clickhouse import open_runner, store_factory
from agentsla.queries.findings import evidence, resolve_thresholds


def add_parser(subparsers) -> None:
    """Add `agentsla materialize` to the CLI."""
    parser = subparsers.add_parser(
        "materialize", help="Turn new spans of a ClickHouse store into tasks (one shard).",
        description="Read the spans the OpenTelemetry Collector's clickhouseexporter wrote "
                    "since this shard's watermark, materialize their tasks and write them into "
                    "agentsla's tables. Run N of them with --shard 0/N ... N-1/N. "
                    "See docs/scale-out.md.")
    parser.add_argument("--shard", default="0/1", type=_shard,
                        help="K/N: this worker's share of the trace ids (default 0/1: all).")
    parser.add_argument("--once", action="store_true", help="Run one pass and exit.")
    add_setting_flags(parser, ["store", "late_window", "longest_span", "materialize_interval",
                               "default_budget", "lost_grace", "root_grace",
                               "evidence_interval", "retention", "rollup_retention"])
    parser.set_defaults(run=run)


def _shard(text: str):
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace, environ) -> int:
    """Run passes until interrupted (or one with --once)."""
    config = config_from_args(args, environ)
    url = config.server.store
    if not url.is_clickhouse:
        raise PermanentError("materialize needs a ClickHouse store: --store clickhouse://... "
                             "or chdb:///path (DuckDB materializes as it writes)")
    runner = open_runner(url)
    loop = MaterializerLoop(runner, url, config.tasks, args.shard)
    stores, thresholds = store_factory(runner), resolve_thresholds(config.findings)
    refresher = args.shard.index == 0 and not args.once
    worker = evidence.EvidenceWorker(stores, thresholds,
                                     config.tasks.evidence_interval if refresher else 0)
    try:
        start_shard(runner, url, config.tasks, args.shard)  # N changed: rebuild first
        worker.start()
        while True:
            behind = loop.run_once()  # a failed pass is logged; its watermark stays
            if loop.last is not None and loop.last_error is None:
                print(f"shard {args.shard}: {loop.last.tasks} tasks from {loop.last.spans} "
                      f"spans", file=sys.stderr)
            if args.once:
                if loop.last_error:
                    raise RetryableError(f"shard {args.shard}: pass failed: {loop.last_error}")
                if args.shard.index == 0:  # the evidence of every minute the pass dirtied
                    _refresh_all(stores(), thresholds)
                return 0
            if not behind:
                time.sleep(config.tasks.materialize_interval or 1.0)  # 0 only turns serve's off
    finally:
        worker.stop()
        runner.close()


def _refresh_all(store, thresholds) -> None:
    """Store the evidence of every dirty minute (rounds until none is left), then close."""
    try:
        while evidence.refresh(store, thresholds)[1]:
            pass
    finally:
        store.close()
