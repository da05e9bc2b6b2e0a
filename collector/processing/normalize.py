"""Turn a decoded OTLP ExportTraceServiceRequest into span rows (collector.schema.SPAN_COLUMNS).

One row per valid span; spans with unusable ids or times are rejected one by one (OTLP
partial success) while the rest are kept. Typed columns follow span contract v1
(docs/span-contract.md); the mapping tables live in collector/processing/mapping.py. This runs for every
span, so each span's attributes are converted once and every typed field is read from that dict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentsla.config import IngestConfig

from . import mapping as m
from .attributes import INT64, Limits, attributes_to_dict, cut, dumps, to_int, to_str
from agentsla.collector.store.schema import SPAN_COLUMN_NAMES

MAX_ERRORS = 5
CLOCK_SKEW_KEY = "agentsla.clock_skew"

_SPAN_KINDS = ("unspecified", "internal", "server", "client", "producer", "consumer")
_STATUS_CODES = ("unset", "ok", "error")
_SERVER, _STATUS_ERROR = 2, 2
# Span.flags bits 8 and 9 (trace.proto SpanFlags): the SDK knew whether the parent was remote,
# and it was. SDKs that predate them send neither bit: parent_remote stays null (unknown).
_HAS_IS_REMOTE, _IS_REMOTE = 0x100, 0x200
_ROW_TEMPLATE = dict.fromkeys(SPAN_COLUMN_NAMES)
_ZERO_TRACE, _ZERO_SPAN = bytes(16), bytes(8)
_MAX_NS = INT64[1]
_OTHER = "_OTHER"
#: hop kind -> the column naming the hop; other kinds are named by the span name.
_HOP_NAME_COLUMN = {"model": "model", "tool": "tool", "agent": "agent"}
_URL_HOST = re.compile(m.URL_HOST)


#: A span the decoder could not parse on its own (collector/receivers/decode.py) is passed on
#: with this one-byte trace id and its reason as name, so that it is rejected alone.
_UNDECODABLE = b"\xfe"


def mark_undecodable(span: Any, reason: str) -> None:
    """Make span a placeholder that normalization rejects with `reason` (partial success)."""
    span.Clear()
    span.trace_id = _UNDECODABLE
    span.name = reason


@dataclass
class NormalizedBatch:
    """Span rows of one request plus what was rejected (for OTLP partial_success)."""

    rows: list[dict] = field(default_factory=list)
    rejected: int = 0
    errors: list[str] = field(default_factory=list)

    def reject(self, message: str) -> None:
        """Count one rejected span, remembering up to MAX_ERRORS distinct messages."""
        self.rejected += 1
        if len(self.errors) < MAX_ERRORS and message not in self.errors:
            self.errors.append(message)


def normalize_request(request: ExportTraceServiceRequest, limits: IngestConfig,
                      received_ns: int) -> NormalizedBatch:
    """Normalize every span of a request into a row keyed by SPAN_COLUMN_NAMES."""
    lim = Limits(limits.max_attributes_per_span, limits.max_attribute_value_length,
                 limits.max_value_depth)
    batch = NormalizedBatch()
    for resource_spans in request.resource_spans:
        resource = resource_spans.resource
        resource_attrs = attributes_to_dict(resource.attributes, lim,
                                            resource.dropped_attributes_count)
        shared = {"service_name": to_str(resource_attrs.get("service.name")),
                  "resource": dumps(resource_attrs), "received_ns": received_ns}
        for scope_spans in resource_spans.scope_spans:
            shared["scope"] = scope_spans.scope.name or None
            for span in scope_spans.spans:
                row = _row(span, shared, lim)
                if type(row) is str:
                    batch.reject(row)
                else:
                    batch.rows.append(row)
    return batch


def _invalid(span: Any) -> str | None:
    """Say why a span cannot be stored, or None."""
    trace_id = span.trace_id
    if len(trace_id) != 16 or trace_id == _ZERO_TRACE:
        if trace_id == _UNDECODABLE:
            return span.name
        return "invalid trace id: must be 16 bytes (32 hex digits) and not all zero"
    span_id = span.span_id
    if len(span_id) != 8 or span_id == _ZERO_SPAN:
        return "invalid span id: must be 8 bytes (16 hex digits) and not all zero"
    parent = span.parent_span_id
    if parent and len(parent) != 8:
        return "invalid parent span id: must be empty or 8 bytes (16 hex digits)"
    if span.start_time_unix_nano > INT64[1] or span.end_time_unix_nano > INT64[1]:
        return "invalid span time: beyond the year 2262"
    return None


def _row(span: Any, shared: dict[str, Any], lim: Limits) -> dict[str, Any] | str:
    """The span's row, or why it cannot be stored (each field is read from the message once)."""
    trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
    start, end = span.start_time_unix_nano, span.end_time_unix_nano
    if not (len(trace_id) == 16 and len(span_id) == 8 and (not parent or len(parent) == 8)
            and start <= _MAX_NS and end <= _MAX_NS
            and trace_id != _ZERO_TRACE and span_id != _ZERO_SPAN):
        problem = _invalid(span)  # the message; the check above is the hot path's
        if problem:
            return problem
    attrs = attributes_to_dict(span.attributes, lim, span.dropped_attributes_count)
    if end < start:
        end = start
        attrs[CLOCK_SKEW_KEY] = True
    kind = span.kind
    status = span.status
    code = status.code
    message = status.message
    name = span.name
    if len(name) > lim.max_length:
        name = cut(name, lim.max_length)
    row = _ROW_TEMPLATE.copy()
    row.update(shared)
    row.update(trace_id=trace_id.hex(), span_id=span_id.hex(),
               parent_span_id=parent.hex() if parent else None, name=name,
               parent_remote=_parent_remote(span.flags),
               span_kind=_SPAN_KINDS[kind] if 0 <= kind < 6 else "unspecified",
               start_ns=start, end_ns=end, duration_ms=(end - start) / 1e6,
               status_code=_STATUS_CODES[code] if 0 <= code < 3 else "unset",
               status_message=cut(message, lim.max_length) if message else None)
    _typed_columns(row, attrs)
    row["hop_kind"] = hop_kind = _hop_kind(attrs, not parent, kind)
    hop_name = row[_HOP_NAME_COLUMN.get(hop_kind, "name")] or name
    if hop_name in m.HTTP_METHOD_NAMES:
        hop_name = _http_hop_name(hop_name, attrs)
    row["hop_name"] = hop_name
    events = [_event(e, lim) for e in span.events] if span.events else None
    row["error_type"] = error_type = _error_type(attrs, code, message, row["http_status"],
                                                 events)
    row["is_error"] = code == _STATUS_ERROR or error_type is not None
    row["attributes"] = dumps(attrs)
    row["events"] = dumps(events) if events else "[]"
    row["links"] = dumps([_link(link, lim) for link in span.links]) if span.links else "[]"
    return row


def _parent_remote(flags: int) -> bool | None:
    """Tell whether the span's parent is remote per its OTLP flags; None when not stated."""
    return bool(flags & _IS_REMOTE) if flags & _HAS_IS_REMOTE else None


def _typed_columns(row: dict[str, Any], attrs: dict[str, Any]) -> None:
    """Fill the typed columns from the attribute dict (sources in _mapping.COLUMN_SOURCES)."""
    table = m.COLUMN_TABLE
    ranks: dict[str, int] = {}
    # Only the attributes the table names (about half of a span's): one set operation in C
    # instead of a lookup per attribute; the ranks make the order of the keys irrelevant.
    for key in m.COLUMN_KEYS.intersection(attrs):
        value = attrs[key]
        column, coerce, rank, ready_type = table[key]
        if rank is not None and ranks.get(column, rank + 1) < rank:
            continue  # a higher-priority source already filled the column
        if type(value) is not ready_type or value == "":
            value = coerce(value)
            if value is None:
                continue
        row[column] = value
        if rank is not None:
            ranks[column] = rank


def _http_hop_name(method: str, attrs: dict[str, Any]) -> str:
    """Name a hop named by its HTTP method alone by the method and its server's host."""
    for key in m.HTTP_SERVER_KEYS:
        host = to_str(attrs.get(key))
        if host:
            return f"{method} {host}"
    for key in m.HTTP_URL_KEYS:
        url = attrs.get(key)
        found = _URL_HOST.match(url) if isinstance(url, str) else None
        if found and found.group(1):
            return f"{method} {found.group(1)}"
    return method


def _hop_kind(attrs: dict[str, Any], is_root: bool, kind: int) -> str:
    """Take hop.kind when valid, else infer it (rules in docs/span-contract.md)."""
    given = attrs.get("hop.kind")
    if isinstance(given, str):
        given = given.strip().lower()
        if given in m.VALID_HOP_KINDS:
            return given
    for key, table in m.HOP_KIND_LOOKUPS:
        value = attrs.get(key)
        if isinstance(value, str):
            hop = table.get(value.strip().lower())
            if hop is not None:
                return hop
    if "gen_ai.operation.name" not in attrs:
        for key, hop in m.GENAI_PRESENCE_HOPS:
            if key in attrs:
                return hop
    for key, hop in m.PRESENCE_HOPS:
        if key in attrs:
            return hop
    return "gateway" if is_root and kind == _SERVER else "other"


def _error_type(attrs: dict[str, Any], code: int, message: str, http_status: int | None,
                events: list[dict[str, Any]] | None) -> str | None:
    """Derive the normalized failure reason; None when the span did not fail."""
    if (code != _STATUS_ERROR and (http_status is None or http_status < 429)
            and "error.type" not in attrs):
        return None  # most spans: nothing below could name a failure
    raw = to_str(attrs.get("error.type"))
    declared = m.map_error_name(raw) if raw and raw != _OTHER else None  # _OTHER: "failed"
    if declared is not None and declared != "cancelled":
        return declared
    # Unrecognized (a wrapper such as io.grpc.StatusRuntimeException or Go's *url.Error, whose
    # status code or message says the reason) or a cancellation: the other signals may name it.
    from_http = m.map_http_status(http_status)
    if from_http is not None:
        return from_http
    if code != _STATUS_ERROR and not raw:
        return None
    exceptions = [e["attributes"] for e in events or () if e["name"] == "exception"]
    types = [t for t in (to_str(e.get("exception.type")) for e in exceptions) if t]
    # The signals of a failed span, the most specific first.
    candidates = (
        (m.map_grpc_status, to_int(attrs.get("rpc.grpc.status_code"))),
        (m.map_error_name, to_str(attrs.get("rpc.response.status_code"))),
        *((m.map_error_name, t) for t in types),
        (m.map_status_message, message),
        *((m.map_status_message, to_str(e.get("exception.message"))) for e in exceptions),
    )
    found = [r for r in (mapper(value) for mapper, value in candidates if value) if r]
    # A cancellation is often what a timeout looks like from inside ("QueryCanceled: canceling
    # statement due to statement timeout"): a more specific reason anywhere else wins.
    specific = next((r for r in found if r != "cancelled"), None)
    if specific is not None or declared is not None:
        return specific or declared
    return found[0] if found else raw or (types[0] if types else "error")


def _event(event: Any, lim: Limits) -> dict[str, Any]:
    return {"name": cut(event.name, lim.max_length), "time_ns": event.time_unix_nano,
            "attributes": attributes_to_dict(event.attributes, lim,
                                             event.dropped_attributes_count)}


def _link(link: Any, lim: Limits) -> dict[str, Any]:
    return {"trace_id": link.trace_id.hex(), "span_id": link.span_id.hex(),
            "attributes": attributes_to_dict(link.attributes, lim,
                                             link.dropped_attributes_count)}
