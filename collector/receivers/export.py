"""The export step both OTLP receivers share: normalize, enqueue, answer with partial success."""

from __future__ import annotations

import time
from typing import Awaitable, Callable

from anyio import to_thread
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from agentsla.collector.receivers.decode import check_span_count
from agentsla.collector.processing.normalize import NormalizedBatch, normalize_request
from agentsla.collector.receivers.link import WriterLink
from agentsla.collector.store.writer import Row
from agentsla.config import IngestConfig

Submit = Callable[[list[Row]], Awaitable[None]]


class Exporter:
    """Turns one decoded OTLP request into committed rows and an OTLP response."""

    def __init__(self, limits: IngestConfig, submit: Submit) -> None:
        self.limits = limits
        self.submit = submit
        self.rejected_spans = 0

    async def export(self, request: ExportTraceServiceRequest) -> ExportTraceServiceResponse:
        """Store the request's valid spans; report the invalid ones as a partial success."""
        check_span_count(request, self.limits.max_spans_per_request)
        # Normalization is CPU work: run it off the event loop so health checks stay responsive.
        batch = await to_thread.run_sync(normalize_request, request, self.limits, time.time_ns())
        await self.hand_on(batch)
        response = ExportTraceServiceResponse()
        if batch.rejected:
            response.partial_success.rejected_spans = batch.rejected
            response.partial_success.error_message = "; ".join(batch.errors)
        return response

    async def hand_on(self, batch: NormalizedBatch) -> None:
        """Count the rejected spans and submit the rows (returns once they are committed)."""
        self.rejected_spans += batch.rejected
        if batch.rows:
            await self.submit(batch.rows)


class LinkedExporter(Exporter):
    """The Exporter of a receiver process: rows and rejected counts go to the writer process."""

    def __init__(self, limits: IngestConfig, link: WriterLink) -> None:
        super().__init__(limits, link.submit)
        self.link = link

    async def hand_on(self, batch: NormalizedBatch) -> None:
        """Send rows and the rejected count (counted by the writer process for /metrics), even
        when no row is left, so that the count is current once the request is answered."""
        await self.link.submit(batch.rows, batch.rejected)

