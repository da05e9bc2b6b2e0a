"""`agentsla serve`: receive OTLP, store it, materialize tasks, answer the query API."""

from __future__ import annotations

import argparse
import asyncio
import logging
from typing import Mapping

from agentsla.commands._flags import add_setting_flags, config_from_args
from agentsla.config import SETTINGS

SERVE_SETTINGS = [s.name for s in SETTINGS if s.section != "client"] + ["dashboard_url"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add `serve` with one flag per server, ingest and task setting."""
    parser = sub.add_parser(
        "serve", help="run the OTLP receivers, the store and the query API",
        description="Receive OTLP traces (HTTP 4318, gRPC 4317), store them in DuckDB, keep "
                    "per-task outcomes current and serve the query API (8710). Every flag can "
                    "also be set in the config file or as AGENTSLA_<NAME>. SIGTERM or Ctrl-C "
                    "stops accepting, commits what is queued and exits 0; a writer that fails "
                    "more than --writer-max-restarts times in a row makes it exit 1.")
    add_setting_flags(parser, SERVE_SETTINGS)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Load the config and serve until stopped."""
    from agentsla.server import serve

    config = config_from_args(args, environ)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    return asyncio.run(serve(config))
