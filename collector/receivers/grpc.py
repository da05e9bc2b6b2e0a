"""OTLP/gRPC receiver: `opentelemetry.proto.collector.trace.v1.TraceService/Export`.

Errors map per https://opentelemetry.io/docs/specs/otlp/#otlpgrpc-response: bad data is
INVALID_ARGUMENT (not retried); a full queue is RESOURCE_EXHAUSTED carrying RetryInfo, which
tells exporters the error is retryable and when.
"""

from __future__ import annotations

import hmac
import math

import grpc
from google.protobuf import duration_pb2
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from agentsla.collector.receivers.decode import parse_protobuf
from agentsla.collector.receivers.export import Exporter
from agentsla.errors import (AgentslaError, Overloaded, PermanentError, RetryableError,
                             Unauthorized)

_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
_CODES = {Overloaded: grpc.StatusCode.RESOURCE_EXHAUSTED, RetryableError: grpc.StatusCode.UNAVAILABLE,
          Unauthorized: grpc.StatusCode.UNAUTHENTICATED}


class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    """The gRPC servicer: the same Exporter as the HTTP receiver behind it."""

    def __init__(self, exporter: Exporter, token: str = "") -> None:
        self.exporter = exporter
        self.token = token

    async def Export(self, request, context: grpc.aio.ServicerContext):  # noqa: N802 - gRPC name
        """Store the request's spans, answering only after they are committed."""
        try:
            self._check_token(context)
            if isinstance(request, PermanentError):
                raise request
            return await self.exporter.export(request)
        except AgentslaError as exc:
            await _abort(context, exc)

    def _check_token(self, context: grpc.aio.ServicerContext) -> None:
        if not self.token:
            return
        given = dict(context.invocation_metadata() or ()).get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
            raise Unauthorized("missing or wrong bearer token")


def _handler(service: TraceService) -> grpc.GenericRpcHandler:
    """The TraceService handler, decoding with parse_protobuf (span-by-span fallback) instead
    of the generated FromString, so that one undecodable span is rejected alone."""
    export = grpc.unary_unary_rpc_method_handler(
        service.Export, request_deserializer=_deserialize,
        response_serializer=ExportTraceServiceResponse.SerializeToString)
    return grpc.method_handlers_generic_handler(_SERVICE, {"Export": export})


def _deserialize(raw: bytes) -> ExportTraceServiceRequest | PermanentError:
    # Returned, not raised: a raising deserializer makes gRPC answer INTERNAL without a reason.
    try:
        return parse_protobuf(raw)
    except PermanentError as exc:
        return exc


async def _abort(context: grpc.aio.ServicerContext, exc: AgentslaError) -> None:
    code = next((c for cls, c in _CODES.items() if isinstance(exc, cls)),
                grpc.StatusCode.INVALID_ARGUMENT)
    if isinstance(exc, RetryableError):
        retry = error_details_pb2.RetryInfo(
            retry_delay=duration_pb2.Duration(seconds=max(1, math.ceil(exc.retry_after_s))))
        detail = status_pb2.Status(code=code.value[0], message=exc.message)
        detail.details.add().Pack(retry)
        context.set_trailing_metadata((("grpc-status-details-bin", detail.SerializeToString()),))
    await context.abort(code, exc.message)


async def start_grpc_server(exporter: Exporter, host: str, port: int, token: str,
                            max_message_bytes: int,
                            credentials: grpc.ServerCredentials | None = None,
                            reuse_port: bool = False) -> tuple[grpc.aio.Server, int]:
    """Start the gRPC listener (TLS with `credentials`); return the server and its port.

    `reuse_port` lets the receiver processes listen on one port (SO_REUSEPORT); otherwise a
    port already in use fails here.
    """
    server = grpc.aio.server(options=[("grpc.max_receive_message_length", max_message_bytes),
                                      ("grpc.so_reuseport", int(reuse_port))])
    server.add_generic_rpc_handlers((_handler(TraceService(exporter, token)),))
    address = f"{host}:{port}"
    bound = (server.add_secure_port(address, credentials) if credentials is not None
             else server.add_insecure_port(address))
    if bound == 0:
        raise OSError(f"cannot listen for OTLP/gRPC on {host}:{port}")
    await server.start()
    return server, bound
