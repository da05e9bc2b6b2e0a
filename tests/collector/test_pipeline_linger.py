"""IngestPipeline's commit_linger, over a real TaskWriter: a lone client's requests are committed
at once; a writer that answered one client while another's request arrived waits for the first
client's next request (one commit of both); a wait that missed stops the next ones; a full
group and a close end the wait.

The linger is set far longer than the tests run (60 s), so that a wait that did not end is a
test that hangs (bounded by asyncio timeouts), never a comparison of durations.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading

from agentsla.collector.pipeline import IngestPipeline
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from spanfactory import make_span

_LINGER_S = 60.0


def _request(trace_id: str) -> list[dict]:
    return [make_span(trace_id=trace_id, span_id=trace_id[:16], hop_kind="gateway",
                      start_ms=0, end_ms=100, http_status=200)]


class _GatedWriter(TaskWriter):
    """The real writer, whose first write waits for the test to open its gate: requests
    submitted meanwhile arrive while the writer is busy, as a second client's do under load."""

    def __init__(self, con, config) -> None:
        super().__init__(con, config)
        self.gate = threading.Event()
        self.writing = threading.Event()

    def write(self, rows, now_ns=None):
        self.writing.set()
        self.gate.wait()
        return super().write(rows, now_ns)


def _pipeline(con, **ingest) -> IngestPipeline:
    config = load_config()
    limits = dataclasses.replace(config.ingest, **{"commit_linger": _LINGER_S, **ingest})
    pipeline = IngestPipeline(_GatedWriter(con, config.tasks), limits, config.tasks)
    pipeline.start()
    return pipeline


async def _two_clients_then(pipeline: IngestPipeline, second_of_a: bool) -> None:
    """Client a's request is in the writer's hands while client b's arrives; once a's is
    answered, b's waits for a's next one (sent when second_of_a)."""
    writer = pipeline.writer
    first = asyncio.create_task(pipeline.submit(_request("a" * 32)))
    await asyncio.to_thread(writer.writing.wait)  # the writer holds a's request
    b = asyncio.create_task(pipeline.submit(_request("b" * 32)))
    while not pipeline.health()["ingest"]["queued_requests"]:  # b's is queued
        await asyncio.sleep(0.01)
    writer.gate.set()
    await first  # a answered: its client sends again
    if second_of_a:
        await pipeline.submit(_request("c" * 32))
    await b


async def _taken(pipeline: IngestPipeline) -> None:
    """Return once the writer holds every queued request."""
    await asyncio.sleep(0)
    while pipeline.health()["ingest"]["queued_requests"]:
        await asyncio.sleep(0.01)


def _stored_traces(con) -> set[str]:
    return {r[0] for r in con.cursor().execute("select trace_id from spans").fetchall()}


def test_a_lone_clients_requests_are_committed_without_waiting(con) -> None:
    pipeline = _pipeline(con)
    pipeline.writer.gate.set()

    async def one_client() -> None:
        for trace in ("a", "b", "c"):  # each answered before the next is sent
            await pipeline.submit(_request(trace * 32))

    try:
        asyncio.run(asyncio.wait_for(one_client(), _LINGER_S / 2))
        assert pipeline.stats.commits == 3
        assert _stored_traces(con) == {"a" * 32, "b" * 32, "c" * 32}
    finally:
        assert pipeline.close(timeout=10)


def test_a_busy_writer_waits_for_the_client_it_answered(con) -> None:
    pipeline = _pipeline(con)
    try:
        asyncio.run(asyncio.wait_for(_two_clients_then(pipeline, True), _LINGER_S / 2))
        assert pipeline.stats.commits == 2  # a's; then b's and a's next one together
        assert _stored_traces(con) == {"a" * 32, "b" * 32, "c" * 32}
    finally:
        assert pipeline.close(timeout=10)


def test_after_a_wait_that_missed_the_next_groups_wait_for_nobody(con) -> None:
    pipeline = _pipeline(con, commit_linger=0.2)  # a's client sends nothing more: b's wait
    try:                                          # ends at the linger, a miss
        asyncio.run(asyncio.wait_for(_two_clients_then(pipeline, False), _LINGER_S / 2))
        assert pipeline.stats.commits == 2
        pipeline.ingest = dataclasses.replace(pipeline.ingest, commit_linger=_LINGER_S)
        pipeline.writer.gate.clear()
        pipeline.writer.writing.clear()
        # the same two clients again: b's request is committed without waiting for a's next
        asyncio.run(asyncio.wait_for(_two_clients_then(pipeline, False), _LINGER_S / 2))
        assert pipeline.stats.commits == 4
    finally:
        assert pipeline.close(timeout=10)


def test_a_full_group_is_committed_without_waiting(con) -> None:
    pipeline = _pipeline(con, commit_max_spans=1)  # b's request alone fills its group
    try:
        asyncio.run(asyncio.wait_for(_two_clients_then(pipeline, False), _LINGER_S / 2))
        assert pipeline.stats.commits == 2
    finally:
        assert pipeline.close(timeout=10)


def test_close_ends_the_wait_and_commits_the_group(con) -> None:
    pipeline = _pipeline(con)

    async def scenario() -> bool:
        waiting = asyncio.create_task(_two_clients_then(pipeline, False))
        while pipeline.stats.commits < 1:  # a's committed; b's taken, waiting for a's next
            await asyncio.sleep(0.01)
        await _taken(pipeline)
        closed = await asyncio.to_thread(pipeline.close, 10)
        await waiting  # b answered 200: committed
        return closed

    assert asyncio.run(asyncio.wait_for(scenario(), _LINGER_S / 2))
    assert pipeline.stats.commits == 2
    assert _stored_traces(con) == {"a" * 32, "b" * 32}
