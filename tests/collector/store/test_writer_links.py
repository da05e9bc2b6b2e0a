"""TaskWriter: a queue consumer that starts a trace of its own with a link to the producer joins
the producer's task, in whatever order the two traces arrive, across restarts.

The story: a gateway (trace A) takes POST /v1/agents/run, puts the work on a queue (a PRODUCER
span) and answers 503 after 3.6 s. A worker takes the message in a new trace B: its CONSUMER
span has no parent and one link to the producer; under it the model answers 429 three times.
One user request, one task, failed because the model was rate limited.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from agentsla.collector.store.database import open_store
from agentsla.collector.store.writer import TaskWriter
from agentsla.config import load_config
from spanfactory import BASE_NS, make_span

A, B, C = "a" * 32, "b" * 32, "c" * 32
CONFIG = replace(load_config().tasks, root_grace=0.0)


@pytest.fixture
def con(tmp_path: Path):
    connection = open_store(tmp_path / "db.duckdb")
    yield connection
    connection.close()


def _link(trace_id: str, span_id: str) -> str:
    return json.dumps([{"trace_id": trace_id, "span_id": span_id, "attributes": {}}])


def gateway(task_id: str | None = None) -> tuple[dict, dict]:
    """Trace A: the request's root (503) and the PRODUCER span that queued the work."""
    root = make_span(trace_id=A, span_id="a1", name="POST /v1/agents/run", span_kind="server",
                     hop_kind="gateway", start_ms=0, end_ms=3_600, http_status=503,
                     status_code="error")
    root["task_id"] = task_id
    producer = make_span(span_id="a2", parent=root, name="send tasks", span_kind="producer",
                         start_ms=1, end_ms=2)
    return root, producer


def worker(trace_id: str = B, linked: tuple[str, str] = (A, "a2")) -> list[dict]:
    """Trace B: the CONSUMER entry linked to the producer, three model calls answered 429."""
    consumer = make_span(trace_id=trace_id, span_id=trace_id[0] + "1", name="process tasks",
                         span_kind="consumer", start_ms=5, end_ms=3_500, status_code="error",
                         links=_link(*linked))
    calls = [make_span(span_id=f"{trace_id[0]}m{i}", parent=consumer, span_kind="client",
                       hop_kind="model", model="gpt-4o", start_ms=10 + i * 1_000,
                       end_ms=210 + i * 1_000, http_status=429, error_type="rate_limited",
                       status_code="error") for i in range(3)]
    return [consumer, *calls]


def tasks(con) -> dict[str, dict]:
    cur = con.execute("select * from tasks")
    names = [d[0] for d in cur.description]
    return {row[0]: dict(zip(names, row)) for row in cur.fetchall()}


def write_all(con, batches: list[list[dict]], restart: bool) -> None:
    """Write the batches a second apart, by one writer or by a fresh one each time (a restart:
    nothing in memory, every answer from the database)."""
    writer = TaskWriter(con, CONFIG)
    for i, batch in enumerate(batches):
        if restart:
            writer = TaskWriter(con, CONFIG)
        writer.write([dict(span) for span in batch], now_ns=BASE_NS + (4 + i) * 10**9)


def assert_one_failed_task(con, task_id: str, spans: int = 6) -> None:
    """What a post-mortem says of the story: one task, every span in it, the model to blame."""
    found = tasks(con)
    assert list(found) == [task_id]
    task = found[task_id]
    assert (task["span_count"], task["outcome"], task["root_name"], task["http_status"]) == \
        (spans, "failed", "POST /v1/agents/run", 503)
    assert (task["ffh_kind"], task["ffh_name"], task["ffh_reason"]) == \
        ("model", "gpt-4o", "rate_limited")
    assert con.execute("select distinct task_id from spans").fetchall() == [(task_id,)]
    traces = dict(con.execute("select trace_id, task_id from trace_task").fetchall())
    assert traces == {A: task_id, B: task_id}


ORDERS = {
    # name: batches, the task id the story ends with
    "producer first": (lambda: [list(gateway()), worker()], A),
    "consumer first": (lambda: [worker(), list(gateway())], A),
    "one batch, consumer first": (lambda: [worker() + list(gateway())], A),
    "producer span, consumer, then the root": (
        lambda: [[gateway()[1]], worker(), [gateway()[0]]], A),
    "root declaring task.id first": (lambda: [list(gateway("req-1")), worker()], "req-1"),
    "consumer first, then the root declaring task.id": (
        lambda: [worker(), list(gateway("req-1"))], "req-1"),
    "producer span, consumer, then the root declaring task.id": (
        lambda: [[gateway("req-1")[1]], worker(), [gateway("req-1")[0]]], "req-1"),
    "consumer split around the producer's trace": (
        lambda: [worker()[1:], list(gateway("req-1")), worker()[:1]], "req-1"),
}


@pytest.mark.parametrize("restart", [False, True], ids=["warm", "restarted"])
@pytest.mark.parametrize("order", sorted(ORDERS))
def test_a_linked_consumer_joins_the_producers_task(con, order: str, restart: bool) -> None:
    batches, task_id = ORDERS[order]
    write_all(con, batches(), restart)
    assert_one_failed_task(con, task_id)


@pytest.mark.parametrize("restart", [False, True], ids=["warm", "restarted"])
def test_a_chain_of_linked_consumers_joins_the_first_task(con, restart: bool) -> None:
    """C consumes what B produced, B what A did; they arrive C, B, then A declaring task.id."""
    chained = worker(C, linked=(B, "b1"))
    for span in chained[1:]:  # C's calls succeed: B's are the failing ones
        span.update(http_status=200, error_type=None, status_code="unset", is_error=False)
    write_all(con, [chained, worker(), list(gateway("req-1"))], restart)
    found = tasks(con)
    assert list(found) == ["req-1"]
    assert (found["req-1"]["span_count"], found["req-1"]["ffh_reason"]) == (10, "rate_limited")
    traces = dict(con.execute("select trace_id, task_id from trace_task").fetchall())
    assert traces == {A: "req-1", B: "req-1", C: "req-1"}


def test_a_batch_consumer_stays_a_task_of_its_own(con) -> None:
    """A consumer taking two messages at once links to both producers: it works for both
    requests and is not one of them."""
    batch = worker()
    batch[0]["links"] = json.dumps([{"trace_id": A, "span_id": "a2", "attributes": {}},
                                    {"trace_id": C, "span_id": "c2", "attributes": {}}])
    write_all(con, [list(gateway()), batch], restart=False)
    found = tasks(con)
    assert sorted(found) == [A, B]
    assert (found[A]["ffh_kind"], found[B]["ffh_kind"]) == ("gateway", "model")


def test_a_consumer_declaring_its_task_keeps_it(con) -> None:
    """task.id is the application's word: a link does not override it."""
    batch = worker()
    batch[0]["task_id"] = "job-7"
    write_all(con, [list(gateway()), batch], restart=False)
    assert sorted(tasks(con)) == [A, "job-7"]


def test_a_consumer_whose_producer_never_comes_is_its_own_request(con) -> None:
    """Keyed by the linked trace's id until that trace arrives; judged on its own spans."""
    write_all(con, [worker()], restart=False)
    found = tasks(con)
    assert list(found) == [A]
    assert (found[A]["span_count"], found[A]["root_name"], found[A]["ffh_reason"]) == \
        (4, "process tasks", "rate_limited")
    # the task's lookup by either trace: B's spans, and A, which has none yet
    assert dict(con.execute("select trace_id, task_id from trace_task").fetchall()) == \
        {A: A, B: A}


def test_a_link_a_declared_trace_ignores_keys_no_provisional_task(con) -> None:
    """The consumer's calls declared job-7 before its entry came with the link: the link is
    not followed, so nothing waits for the producer's trace (which would otherwise be moved,
    spanless, when it arrives)."""
    batch = worker()
    for span in batch[1:]:
        span["task_id"] = "job-7"
    write_all(con, [batch[1:], batch[:1]], restart=False)
    assert dict(con.execute("select trace_id, task_id from trace_task").fetchall()) == \
        {B: "job-7"}
    write_all(con, [list(gateway("req-1"))], restart=False)
    assert sorted(tasks(con)) == ["job-7", "req-1"]


def test_of_two_entries_following_links_the_first_to_start_decides(con) -> None:
    """A trace with two parentless CONSUMER spans linking to different traces joins the task of
    the one that started first, whatever their order in the batch (as the ClickHouse
    materializer decides)."""
    batch = worker()  # its entry links to A and starts at 5 ms
    earlier = make_span(trace_id=B, span_id="b0", name="process tasks", span_kind="consumer",
                        start_ms=1, end_ms=4, links=_link(C, "c2"))
    write_all(con, [batch + [earlier]], restart=False)
    assert dict(con.execute("select trace_id, task_id from trace_task").fetchall()) == \
        {B: C, C: C}
