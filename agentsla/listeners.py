"""The listeners of `agentsla serve` (OTLP/HTTP, OTLP/gRPC, API), built alike in every process."""

from __future__ import annotations

import contextlib
import ssl
from pathlib import Path

import grpc
import uvicorn

from agentsla.config import Config, ServerConfig
from agentsla.connguard import guarded_protocol


class HttpServer(uvicorn.Server):
    """A uvicorn server that leaves signal handling to agentsla (one handler stops everything)."""

    def capture_signals(self):  # type: ignore[override]
        return contextlib.nullcontext()


def http_server(app, config: Config, port: int, listener: str,
                max_connections: int | None = None) -> HttpServer:
    """Build a listener for `app`: connection cap, header deadline, keep-alive, TLS per config."""
    # The guarded protocol caps connections (503 + Retry-After) and closes slow or silent ones.
    protocol = guarded_protocol(config.server.read_timeout,
                                max_connections or config.server.max_connections,
                                config.ingest.retry_after)
    return HttpServer(uvicorn.Config(
        app, host=config.server.host, port=port, log_level="warning", access_log=False,
        lifespan="off", http=protocol,
        timeout_keep_alive=max(1, int(config.server.keepalive_timeout)),
        **_uvicorn_tls(config.server, listener)))


def uses_tls(server: ServerConfig, listener: str) -> bool:
    """Whether the named listener (otlp_http, otlp_grpc, api) serves TLS."""
    return bool(server.tls_cert_file) and listener in server.tls_listeners


def _uvicorn_tls(server: ServerConfig, listener: str) -> dict:
    if not uses_tls(server, listener):
        return {}
    client_auth = ({"ssl_ca_certs": server.tls_client_ca_file, "ssl_cert_reqs": ssl.CERT_REQUIRED}
                   if server.tls_client_ca_file else {})
    return {"ssl_certfile": server.tls_cert_file, "ssl_keyfile": server.tls_key_file,
            **client_auth}


def grpc_credentials(server: ServerConfig) -> grpc.ServerCredentials | None:
    """TLS credentials of the OTLP/gRPC listener, or None when it is plain."""
    if not uses_tls(server, "otlp_grpc"):
        return None
    ca = Path(server.tls_client_ca_file).read_bytes() if server.tls_client_ca_file else None
    key_pair = (Path(server.tls_key_file).read_bytes(), Path(server.tls_cert_file).read_bytes())
    return grpc.ssl_server_credentials([key_pair], root_certificates=ca,
                                       require_client_auth=ca is not None)
