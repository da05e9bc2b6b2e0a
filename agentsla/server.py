"""`agentsla serve`: one process owning the DuckDB file, its receivers, writer and query API."""

from __future__ import annotations

import asyncio
import logging
import signal
import ssl
from pathlib import Path

import duckdb

from agentsla.alerts.lease import Lease, Unshared, holder_id
from agentsla.alerts.service import AlertService
from agentsla.collector.receivers.grpc import start_grpc_server
from agentsla.collector.receivers.http import create_otlp_http_app
from agentsla.collector.pipeline import IngestPipeline
from agentsla.collector.receivers.export import Exporter
from agentsla.collector.receivers.processes import ReceiverPool
from agentsla.collector.store.clickhouse.exporter_rows import from_span_row
from agentsla.collector.store.clickhouse.lease import ClickHouseLeases
from agentsla.collector.store.clickhouse.worker import MaterializerLoop
from agentsla.collector.store.database import open_store
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import Config, ServerConfig
from agentsla.listeners import HttpServer, grpc_credentials, http_server, uses_tls
from agentsla.errors import ConfigError, RetryableError
from agentsla.api.app import create_api_app
from agentsla.queries.engines.clickhouse import open_runner, store_factory, traces_variant
from agentsla.queries.engines.duckdb import cursor_stores
from agentsla.queries.findings.evidence import EvidenceWorker
from agentsla.queries.findings.thresholds import resolve_thresholds

log = logging.getLogger("agentsla.server")


def check_tls(server: ServerConfig) -> None:
    """Fail at start, naming the setting, when the TLS files do not make a usable server."""
    if bool(server.tls_cert_file) != bool(server.tls_key_file):
        raise ConfigError("tls_cert_file and tls_key_file must be set together")
    if server.tls_client_ca_file and not server.tls_cert_file:
        raise ConfigError("tls_client_ca_file needs tls_cert_file and tls_key_file")
    if not server.tls_cert_file:
        return
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(server.tls_cert_file, server.tls_key_file)
        if server.tls_client_ca_file:
            context.load_verify_locations(server.tls_client_ca_file)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"cannot use tls_cert_file {server.tls_cert_file!r}, tls_key_file "
                          f"{server.tls_key_file!r}, tls_client_ca_file "
                          f"{server.tls_client_ca_file!r}: {exc}") from None


async def serve(config: Config, stop: asyncio.Event | None = None) -> int:
    """Run until SIGTERM/SIGINT (or `stop`): then stop accepting, flush, checkpoint.

    Returns the exit code: 0, or 1 when the writer gave up (a supervisor should restart us).
    """
    resolve_thresholds(config.findings)  # a typo in `findings:` fails here, not per request
    check_tls(config.server)
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    backend = (_ClickHouseBackend(config) if config.server.store.is_clickhouse else
               _DuckDBBackend(config, lambda: loop.call_soon_threadsafe(stop.set)))
    exporter = Exporter(config.ingest, backend.submit)  # gRPC, and OTLP/HTTP in-process
    receivers = ReceiverPool(config, config.server.receivers) if config.server.receivers else None
    otlp_http = [] if receivers else [http_server(
        create_otlp_http_app(exporter, config.server.ingest_token, config.server.read_timeout),
        config, config.server.otlp_http_port, "otlp_http")]
    alerts = AlertService(config, backend.stores, Path(config.server.data_dir),
                          config.client.dashboard_url or None,
                          lease=backend.lease)
    api = http_server(create_api_app(backend.stores, config,
                                     lambda: _health(backend, exporter, receivers),
                                     extra_routes=alerts.routes()),
                      config, config.server.api_port, "api")
    if receivers:  # they serve OTLP/HTTP and OTLP/gRPC
        grpc_server, grpc_port = None, receivers.grpc_port
        await receivers.start(backend.submit)
    else:
        grpc_server, grpc_port = await start_grpc_server(
            exporter, config.server.host, config.server.otlp_grpc_port,
            config.server.ingest_token, config.ingest.max_body_bytes,
            grpc_credentials(config.server))
    servers = (*otlp_http, api)
    tasks = [asyncio.create_task(s.serve()) for s in servers]
    await _announce(config, grpc_port, servers, tasks)
    await alerts.start()
    # SIGHUP reloads the rule and routing files, as Prometheus and Alertmanager do
    loop.add_signal_handler(signal.SIGHUP, alerts.reload_soon)
    await stop.wait()
    log.warning("shutting down: no new requests, flushing queued spans")
    for server in servers:
        server.should_exit = True
    if receivers:
        await receivers.stop()  # they answer what they hold before the writer closes
    else:
        await grpc_server.stop(grace=5)
    await asyncio.gather(*tasks, return_exceptions=True)
    await alerts.stop()
    return await asyncio.to_thread(backend.close)


class _DuckDBBackend:
    """Spans into the DuckDB file through the pipeline's one writer; reads over its cursors."""

    def __init__(self, config: Config, on_death) -> None:
        self.con = open_store(config.server.db_path, config.server.memory_limit)
        self.pipeline = IngestPipeline(TaskWriter(self.con, config.tasks), config.ingest,
                                       config.tasks, on_death=on_death)
        self.pipeline.start()
        self.submit = self.pipeline.submit
        self.stores = cursor_stores(self.con)
        self.lease = Unshared()  # the file admits one process: no rival evaluator
        # stores the findings evidence of the minutes the writer changed (docs/findings.md),
        # and forgets it on the raw rows' clock (ClickHouse's expires by TTL)
        self.evidence = EvidenceWorker(self.stores, resolve_thresholds(config.findings),
                                       config.tasks.evidence_interval, config.tasks.retention,
                                       config.tasks.retention_interval)
        self.evidence.start()

    def health(self, rejected_spans: int) -> dict:
        """Body of /api/v1/health: the pipeline's counters and writer state."""
        health = self.pipeline.health()
        health["ingest"]["rejected_spans"] = rejected_spans
        return {**health, "evidence": self.evidence.health()}

    def close(self) -> int:
        """Flush and close; return the exit code (1 when the writer gave up)."""
        self.evidence.stop()
        if self.pipeline.close():
            _close_store(self.con)
        return 1 if self.pipeline.dead else 0


class _ClickHouseBackend:
    """Spans into the exporter's traces table; tasks by a materializer thread (shard 0/1)."""

    def __init__(self, config: Config) -> None:
        self.url = config.server.store
        self.runner = open_runner(self.url)  # a bad table or an unreachable server fails here
        self.variant = traces_variant(self.runner, self.url)  # rows in the table's layout
        self.materializer = MaterializerLoop(self.runner, self.url, config.tasks)
        self.stores = store_factory(self.runner)
        # the findings evidence of the minutes passes dirtied: one refresher per store, the
        # process running shard 0 (docs/scale-out.md, Stored findings evidence)
        self.evidence = EvidenceWorker(self.stores, resolve_thresholds(config.findings),
                                       config.tasks.evidence_interval)
        if config.tasks.materialize_interval > 0:  # else `agentsla materialize` workers do it
            self.materializer.start()
            self.evidence.start()
        # API replicas over one store: one evaluates alerts at a time (alerts/lease.py)
        self.lease = Lease(ClickHouseLeases(self.runner, self.url.database), holder_id(),
                           config.server.alert_lease_ttl)

    async def submit(self, rows: list[dict]) -> None:
        """Insert span rows in the exporter's format; a failed insert is retryable (503)."""
        table = f"{self.url.database}.{self.url.table}"
        try:
            await asyncio.to_thread(self.runner.insert, table, [from_span_row(r, self.variant) for r in rows])
        except Exception as exc:  # the store's own errors: the client should retry
            raise RetryableError(f"the store did not take the spans: {exc}") from exc

    def health(self, rejected_spans: int) -> dict:
        """Body of /api/v1/health: the store and the materializer's state."""
        return {"store": str(self.url), "materializer": self.materializer.health(),
                "evidence": self.evidence.health(), "ingest": {"rejected_spans": rejected_spans}}

    def close(self) -> int:
        """Stop the materializer and the evidence worker, and close the store."""
        self.evidence.stop()
        self.materializer.stop()
        self.runner.close()
        return 0


def _close_store(con) -> None:
    """Close the database; a query still running in a worker thread must not crash the exit."""
    try:
        con.close()
    except duckdb.Error as exc:  # everything acknowledged is committed; the WAL replays on open
        log.error("closing the database while a query still ran: %s", exc)
        return
    log.warning("stopped cleanly")


def _health(backend, exporter: Exporter, receivers: ReceiverPool | None) -> dict:
    """Body of /api/v1/health: the backend's, with the rejected spans of every receiver."""
    if receivers is None:
        return backend.health(exporter.rejected_spans)
    health = backend.health(exporter.rejected_spans + receivers.link_rejected_spans)
    health["receivers"] = receivers.health()
    return health


async def _announce(config: Config, grpc_port: int, servers: tuple[HttpServer, ...],
                    tasks: list[asyncio.Task]) -> None:
    """Wait until the HTTP listeners are bound, then say where everything is."""
    while not all(s.started for s in servers):
        if any(t.done() for t in tasks):  # uvicorn exits its task when it cannot bind
            raise OSError("an HTTP listener failed to start (is the port in use?)")
        await asyncio.sleep(0.02)
    host = config.server.host
    http, api = ("https" if uses_tls(config.server, name) else "http"
                 for name in ("otlp_http", "api"))
    receivers = (f" ({config.server.receivers} receiver processes)"
                 if config.server.receivers else "")
    grpc_tls = " (TLS)" if uses_tls(config.server, "otlp_grpc") else ""
    print(f"agentsla serving  OTLP/HTTP {http}://{host}:{config.server.otlp_http_port}/v1/traces"
          f"{receivers}  OTLP/gRPC {host}:{grpc_port}{grpc_tls}  API {api}://{host}:{config.server.api_port}"
          f"/api/v1  data {_data(config.server)}", flush=True)


def _data(server: ServerConfig) -> str:
    return str(server.store) if server.store.is_clickhouse else str(server.db_path)
