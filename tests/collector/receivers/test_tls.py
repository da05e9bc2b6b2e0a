"""TLS on OTLP/HTTP, OTLP/gRPC and the API, against the real server and the real exporters.

The certificates are made in the test by trustme (a throwaway CA, a server certificate for
127.0.0.1, a client certificate). The server's start-up poll of /api/v1/health trusts that CA
through SSL_CERT_FILE, which httpx honours; REQUESTS_CA_BUNDLE is removed, since requests would
let it override the OTLP/HTTP exporter's own certificate_file.
"""

from __future__ import annotations

import functools
import json
import ssl
from pathlib import Path

import grpc
import httpx
import pytest
import trustme
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentsla import cli
from agentsla.client import ApiClient
from agentsla.config import load_config
from agentsla.errors import AgentslaError, ConfigError
from agentsla.server import check_tls
from serverproc import ServerProcess
from tlskit import Pki, TlsServer, make_pki


@pytest.fixture
def pki(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Pki:
    return make_pki(tmp_path, monkeypatch)


def _spans(name: str):
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "tls-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with provider.get_tracer("tls").start_as_current_span(name):
        pass
    provider.shutdown()
    return memory.get_finished_spans()


def _trace_id(spans) -> str:
    return format(spans[0].get_span_context().trace_id, "032x")


def _grpc_credentials(pki: Pki, with_client_cert: bool) -> grpc.ChannelCredentials:
    client = ((Path(pki.client_key).read_bytes(), Path(pki.client_cert).read_bytes())
              if with_client_cert else (None, None))
    return grpc.ssl_channel_credentials(Path(pki.ca).read_bytes(), *client)


def _stored_names(client: ApiClient, spans) -> list[str]:
    return [s["name"] for s in client.trace(_trace_id(spans))["spans"]]


@pytest.mark.parametrize("receivers", [[], ["--receivers", "2"]],
                         ids=["in-process", "2-receiver-processes"])
def test_every_listener_speaks_tls_with_the_real_exporters(
        tmp_path: Path, pki: Pki, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch, receivers: list[str]) -> None:
    server = TlsServer(tmp_path / "data", ["--tls-cert-file", pki.cert,
                                           "--tls-key-file", pki.key, *receivers]).start()
    try:
        over_http, over_grpc = _spans("POST /over-https"), _spans("POST /over-grpc-tls")
        http = HttpExporter(endpoint=server.traces_url, certificate_file=pki.ca, timeout=10)
        assert http.export(over_http) is SpanExportResult.SUCCESS
        grpc_exporter = GrpcExporter(endpoint=server.grpc_target, timeout=10,
                                     credentials=_grpc_credentials(pki, False))
        assert grpc_exporter.export(over_grpc) is SpanExportResult.SUCCESS
        grpc_exporter.shutdown()
        config = load_config(environ={"AGENTSLA_API": server.api_url,
                                      "AGENTSLA_API_CA_FILE": pki.ca})
        with ApiClient.from_config(config) as client:
            assert _stored_names(client, over_http) == ["POST /over-https"]
            assert _stored_names(client, over_grpc) == ["POST /over-grpc-tls"]
        # the CLI: --api https://... verified with --api-ca-file, whatever SSL_CERT_FILE says
        trustme.CA().cert_pem.write_to_path(str(tmp_path / "other-ca.pem"))
        monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "other-ca.pem"))
        assert cli.main(["findings", "--api", server.api_url, "--json"]) != 0
        assert cli.main(["findings", "--api", server.api_url, "--api-ca-file", pki.ca,
                         "--json"]) == 0
        assert "findings" in json.loads(capsys.readouterr().out)
        monkeypatch.setenv("SSL_CERT_FILE", pki.ca)
        # plain http to a TLS port gets no answer; https with an unknown CA is refused
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{server.api_port}/api/v1/health", timeout=5)
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            other_ca = ssl.create_default_context(cadata=trustme.CA().cert_pem.bytes().decode())
            httpx.get(f"{server.api_url}/api/v1/health", timeout=5, verify=other_ca)
    finally:
        assert server.stop() == 0
    assert "OTLP/HTTP https://" in server.log and "(TLS)" in server.log


def test_client_certificates_are_required_when_a_client_ca_is_set(tmp_path: Path,
                                                                  pki: Pki) -> None:
    args = ["--tls-cert-file", pki.cert, "--tls-key-file", pki.key,
            "--tls-client-ca-file", pki.ca, "--tls-listeners", "otlp_http,otlp_grpc"]
    server = ServerProcess(tmp_path / "data", args).start()  # the API stays plain http here
    try:
        traces_url = f"https://127.0.0.1:{server.http_port}/v1/traces"
        anonymous = HttpExporter(endpoint=traces_url, certificate_file=pki.ca, timeout=3)
        assert anonymous.export(_spans("POST /anonymous")) is SpanExportResult.FAILURE
        signed_spans = _spans("POST /signed")
        signed = HttpExporter(endpoint=traces_url, certificate_file=pki.ca, timeout=10,
                              client_certificate_file=pki.client_cert,
                              client_key_file=pki.client_key)
        assert signed.export(signed_spans) is SpanExportResult.SUCCESS
        anonymous_grpc = GrpcExporter(endpoint=server.grpc_target, timeout=3,
                                      credentials=_grpc_credentials(pki, False))
        assert anonymous_grpc.export(_spans("POST /anonymous-grpc")) is SpanExportResult.FAILURE
        grpc_spans = _spans("POST /signed-grpc")
        signed_grpc = GrpcExporter(endpoint=server.grpc_target, timeout=10,
                                   credentials=_grpc_credentials(pki, True))
        assert signed_grpc.export(grpc_spans) is SpanExportResult.SUCCESS
        for exporter in (anonymous_grpc, signed_grpc):
            exporter.shutdown()
        with ApiClient(server.api_url) as client:
            assert _stored_names(client, signed_spans) == ["POST /signed"]
            assert _stored_names(client, grpc_spans) == ["POST /signed-grpc"]
            stored = sorted(t["root_name"] for t in client.tasks(window="1h")["tasks"])
            assert stored == ["POST /signed", "POST /signed-grpc"]  # nothing anonymous
    finally:
        assert server.stop() == 0


def test_api_client_presents_its_certificate_to_an_api_requiring_one(
        tmp_path: Path, pki: Pki, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["--tls-cert-file", pki.cert, "--tls-key-file", pki.key,
            "--tls-client-ca-file", pki.ca, "--tls-listeners", "api"]
    signed = ssl.create_default_context(cafile=pki.ca)
    signed.load_cert_chain(pki.client_cert, pki.client_key)
    # serverproc polls /api/v1/health with httpx.get: give that poll the client certificate
    monkeypatch.setattr(httpx, "get", functools.partial(httpx.get, verify=signed))
    server = TlsServer(tmp_path / "data", args).start()
    try:
        with ApiClient(server.api_url, ca_file=pki.ca, cert_file=pki.client_cert,
                       key_file=pki.client_key) as client:
            assert client.health()["status"] == "ok"
        with ApiClient(server.api_url, ca_file=pki.ca) as client:
            with pytest.raises(AgentslaError, match="cannot reach the agentsla API"):
                client.health()
    finally:
        assert server.stop() == 0


@pytest.mark.parametrize("settings, message", [
    # a certificate without its key (or the reverse) cannot serve TLS
    ({"tls_cert_file": "cert.pem"}, "must be set together"),
    # a client CA without a server certificate makes no sense
    ({"tls_client_ca_file": "ca.pem"}, "needs tls_cert_file"),
    # files that are not there are named in the error
    ({"tls_cert_file": "nowhere.pem", "tls_key_file": "nokey.pem"}, "nowhere.pem"),
])
def test_bad_tls_settings_fail_at_start(settings: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_tls(load_config(settings).server)


def test_bad_client_tls_files_are_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="api_ca_file"):
        ApiClient("https://127.0.0.1:1", ca_file=str(tmp_path / "missing.pem"))
