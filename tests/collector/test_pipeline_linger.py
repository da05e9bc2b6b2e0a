"""IngestPipeline's commit linger, over a real TaskWriter: a request still being normalized when
the writer takes its group joins that group (one commit), within commit_max_spans.

The linger is set far longer than the tests run (60 s), so that waiting for the arriving
request, or not waiting, decides the commit count, not the machine's speed: the arriving
request's submit ends the wait.
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


async def _wait_taken(pipeline: IngestPipeline) -> None:
    """Until the writer holds the queued request (it lingers, or commits)."""
    while pipeline.health()["ingest"]["queued_requests"]:
        await asyncio.sleep(0.01)


def test_a_request_being_normalized_joins_the_commit(con) -> None:
    pipeline = _pipeline(con)

    async def scenario() -> None:
        with pipeline.arriving():  # the second request is being normalized
            first = asyncio.create_task(pipeline.submit(_request("a" * 32)))
            await asyncio.sleep(0)
            await _wait_taken(pipeline)
        await asyncio.gather(first, pipeline.submit(_request("b" * 32)))

    try:
        asyncio.run(scenario())
        assert pipeline.stats.commits == 1
        stored = {r[0] for r in con.cursor().execute("select trace_id from spans").fetchall()}
        assert stored == {"a" * 32, "b" * 32}
    finally:
        assert pipeline.close(timeout=10)


def test_without_requests_arriving_the_writer_commits_at_once(con) -> None:
    pipeline = _pipeline(con)

    async def scenario() -> None:
        await pipeline.submit(_request("a" * 32))  # answered: nothing made it wait
        await pipeline.submit(_request("b" * 32))

    try:
        asyncio.run(asyncio.wait_for(scenario(), _LINGER_S / 2))
        assert pipeline.stats.commits == 2
    finally:
        assert pipeline.close(timeout=10)


def test_a_full_group_does_not_wait_for_arriving_requests(con) -> None:
    pipeline = _pipeline(con, commit_max_spans=1)  # one request fills a commit

    async def scenario() -> None:
        with pipeline.arriving():
            await pipeline.submit(_request("a" * 32))  # committed while the other arrives

    try:
        asyncio.run(asyncio.wait_for(scenario(), _LINGER_S / 2))
        assert pipeline.stats.commits == 1
    finally:
        assert pipeline.close(timeout=10)
