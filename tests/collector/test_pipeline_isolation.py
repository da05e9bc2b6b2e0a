"""IngestPipeline over a real TaskWriter: one request that breaks the writer fails alone.

Three requests wait in the queue before the writer thread starts, so it takes them as one
group. The middle one carries a row no receiver would produce (no `trace_id` key), which makes
the writer raise an unexpected KeyError. The group is retried request by request: the other
two are committed, the poison one is answered 503 and the writer restarts.
"""

from __future__ import annotations

import asyncio

from agentsla.collector.pipeline import IngestPipeline
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from agentsla.errors import RetryableError
from spanfactory import make_span


def _request(trace_id: str) -> list[dict]:
    return [make_span(trace_id=trace_id, span_id=trace_id[:16], hop_kind="gateway",
                      start_ms=0, end_ms=100, http_status=200)]


async def _submit_as_one_group(pipeline: IngestPipeline, requests: list[list[dict]]) -> list:
    waits = [asyncio.create_task(pipeline.submit(rows)) for rows in requests]
    await asyncio.sleep(0)  # every submit is queued now
    pipeline.start()
    return await asyncio.gather(*waits, return_exceptions=True)


def test_a_poison_request_fails_alone_and_the_writer_restarts(con) -> None:
    config = load_config()
    pipeline = IngestPipeline(TaskWriter(con, config.tasks), config.ingest, config.tasks)
    poison = _request("b" * 32)
    del poison[0]["trace_id"]
    results = asyncio.run(_submit_as_one_group(
        pipeline, [_request("a" * 32), poison, _request("c" * 32)]))
    try:
        assert results[0] is None and results[2] is None
        assert isinstance(results[1], RetryableError) and results[1].status == 503
        stored = {r[0] for r in con.cursor().execute("select trace_id from spans").fetchall()}
        assert stored == {"a" * 32, "c" * 32}
        writer = pipeline.health()["writer"]
        assert writer["alive"] and writer["restarts"] == 1
        assert writer["last_error"] == "KeyError: 'trace_id'"
    finally:
        assert pipeline.close(timeout=10)

