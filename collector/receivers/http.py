"""OTLP/HTTP receiver: `POST /v1/traces`, protobuf or JSON, gzip, chunked bodies.

Status codes follow https://opentelemetry.io/docs/specs/otlp/#otlphttp-response: 200 (with
partial_success when spans were rejected), 400 with a google.rpc.Status body, 413, 415, 429/503
with Retry-After. The answer uses the request's content type.
"""

from __future__ import annotations

import hmac
import math

import anyio
from anyio import to_thread
from google.protobuf import json_format
from google.rpc import code_pb2, status_pb2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agentsla.collector.receivers.decode import decode_body
from agentsla.collector.receivers.export import Exporter
from agentsla.errors import (AgentslaError, PayloadTooLarge, RequestTimeout, RetryableError,
                             Unauthorized, UnsupportedMediaType)

_JSON = "application/json"
_PROTOBUF = "application/x-protobuf"
_GRPC_CODE = {400: code_pb2.INVALID_ARGUMENT, 401: code_pb2.UNAUTHENTICATED,
              408: code_pb2.DEADLINE_EXCEEDED,
              413: code_pb2.INVALID_ARGUMENT, 415: code_pb2.INVALID_ARGUMENT,
              429: code_pb2.RESOURCE_EXHAUSTED, 503: code_pb2.UNAVAILABLE}


def create_otlp_http_app(exporter: Exporter, token: str = "",
                         read_timeout: float = 30.0) -> Starlette:
    """Build the ASGI app serving POST /v1/traces; bodies must arrive within read_timeout."""

    async def traces(request: Request) -> Response:
        wants_json = _is_json(request.headers.get("content-type", ""))
        try:
            _check_token(request, token)
            body = await _read_body_within(request, exporter.limits.max_body_bytes, read_timeout)
            message = await to_thread.run_sync(
                decode_body, body, request.headers.get("content-type", ""),
                request.headers.get("content-encoding"), exporter.limits)
            response = await exporter.export(message)
        except AgentslaError as exc:
            return _error_response(exc, wants_json)
        return _encode(response, wants_json, 200)

    return Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])])


def _is_json(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == _JSON


def _check_token(request: Request, token: str) -> None:
    if not token:
        return
    given = request.headers.get("authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        raise Unauthorized("missing or wrong bearer token")


async def _read_body_within(request: Request, limit: int, timeout: float) -> bytes:
    """Read the body, refusing a client that trickles it (uvicorn has no body timeout)."""
    try:
        with anyio.fail_after(timeout):
            return await _read_body(request, limit)
    except TimeoutError:
        raise RequestTimeout(f"request body not received within {timeout:g} s") from None


async def _read_body(request: Request, limit: int) -> bytes:
    """Read the body, chunked or not, refusing it as soon as it passes the limit."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"request body of {declared} bytes is over the {limit}-byte limit")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"request body is over the {limit}-byte limit")
        chunks.append(chunk)
    return b"".join(chunks)


def _encode(message, as_json: bool, status: int, headers: dict[str, str] | None = None) -> Response:
    if as_json:
        body = json_format.MessageToJson(message, indent=None)
        return Response(body, status, headers, media_type=_JSON)
    return Response(message.SerializeToString(), status, headers, media_type=_PROTOBUF)


def _error_response(exc: AgentslaError, as_json: bool) -> Response:
    if isinstance(exc, UnsupportedMediaType):
        as_json = True  # the client's own type is one we cannot speak
    status = exc.status
    headers = {}
    if isinstance(exc, RetryableError):
        headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after_s)))
    if isinstance(exc, Unauthorized):
        headers["WWW-Authenticate"] = "Bearer"
    if exc.closes_connection:
        headers["Connection"] = "close"
    rpc = status_pb2.Status(code=_GRPC_CODE.get(status, code_pb2.INTERNAL), message=exc.message)
    return _encode(rpc, as_json, status, headers)
