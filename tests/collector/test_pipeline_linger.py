"""IngestPipeline's commit_linger, over a real TaskWriter: a request submitted while the writer
lingers joins its group (one commit); a full group and a close end the wait.

The linger is set far longer than the tests run (60 s), so that a wait that did not end is a
test that hangs (bounded by asyncio timeouts), never a comparison of durations.
"""

from __future__ import annotations

import asyncio
import dataclasses

from agentsla.collector.pipeline import IngestPipeline
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from spanfactory import make_span

_LINGER_S = 60.0


def _request(trace_id: str) -> list[dict]:
    return [make_span(trace_id=trace_id, span_id=trace_id[:16], hop_kind="gateway",
                      start_ms=0, end_ms=100, http_status=200)]


def _pipeline(con, **ingest) -> IngestPipeline:
    config = load_config()
    limits = dataclasses.replace(config.ingest, commit_linger=_LINGER_S, **ingest)
    pipeline = IngestPipeline(TaskWriter(con, config.tasks), limits, config.tasks)
    pipeline.start()
    return pipeline


async def _taken(pipeline: IngestPipeline) -> None:
    """Return once the writer holds every queued request."""
    await asyncio.sleep(0)
    while pipeline.health()["ingest"]["queued_requests"]:
        await asyncio.sleep(0.01)


def test_a_request_submitted_while_the_writer_lingers_joins_its_commit(con) -> None:
    pipeline = _pipeline(con, commit_max_spans=2)  # two one-span requests fill the group

    async def scenario() -> None:
        first = asyncio.create_task(pipeline.submit(_request("a" * 32)))
        await _taken(pipeline)  # the writer holds the first request, and waits
        await asyncio.gather(first, pipeline.submit(_request("b" * 32)))

    try:
        asyncio.run(asyncio.wait_for(scenario(), _LINGER_S / 2))
        assert pipeline.stats.commits == 1
        stored = {r[0] for r in con.cursor().execute("select trace_id from spans").fetchall()}
        assert stored == {"a" * 32, "b" * 32}
    finally:
        assert pipeline.close(timeout=10)


def test_a_full_group_is_committed_without_waiting(con) -> None:
    pipeline = _pipeline(con, commit_max_spans=1)

    try:
        asyncio.run(asyncio.wait_for(pipeline.submit(_request("a" * 32)), _LINGER_S / 2))
        assert pipeline.stats.commits == 1
    finally:
        assert pipeline.close(timeout=10)


def test_close_ends_the_wait_and_commits_the_group(con) -> None:
    pipeline = _pipeline(con)

    async def scenario() -> bool:
        first = asyncio.create_task(pipeline.submit(_request("a" * 32)))
        await _taken(pipeline)
        closed = await asyncio.to_thread(pipeline.close, 10)
        await first  # answered 200: committed
        return closed

    assert asyncio.run(asyncio.wait_for(scenario(), _LINGER_S / 2))
    assert pipeline.stats.commits == 1
    assert con.cursor().execute("select count(*) from spans").fetchone() == (1,)
