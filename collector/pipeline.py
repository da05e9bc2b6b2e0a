"""IngestPipeline: the bounded queue between receivers and the one writer thread.

Receivers `await submit(rows)`; the writer thread drains every waiting request into one
transaction (group commit) and only then answers them, so a 200 means the spans are committed.
The queue is bounded in (estimated) bytes: when full, submit raises Overloaded (429) at once and
holds no memory for the refused request.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import duckdb

from agentsla.collector.store.writer import Row, TaskWriter
from agentsla.config import IngestConfig, TasksConfig
from agentsla.errors import AgentslaError, Overloaded, PermanentError, RetryableError

log = logging.getLogger("agentsla.pipeline")

_ROW_OVERHEAD_BYTES = 1200  # a row dict with ~45 keys and small values, measured with tracemalloc
_SWEEP_EVERY_S = 10.0


def estimate_bytes(rows: list[Row]) -> int:
    """Estimate the memory a batch of rows holds while it waits for the writer."""
    total = 0
    for row in rows:
        total += _ROW_OVERHEAD_BYTES + len(row["attributes"]) + len(row["resource"])
        total += len(row["events"]) + len(row["links"])
    return total


@dataclass
class _Item:
    rows: list[Row]
    nbytes: int
    future: asyncio.Future
    loop: asyncio.AbstractEventLoop


@dataclass
class IngestStats:
    """Counters in the spirit of the OpenTelemetry Collector's obsreport."""

    accepted_spans: int = 0
    duplicate_spans: int = 0
    refused_spans: int = 0
    failed_spans: int = 0
    commits: int = 0
    lost_tasks_declared: int = 0
    retention_deleted_tasks: int = 0
    last_commit_ns: int = 0
    started_ns: int = field(default_factory=time.time_ns)


class IngestPipeline:
    """Owns the writer thread; every DuckDB write in `agentsla serve` goes through it."""

    def __init__(self, writer: TaskWriter, ingest: IngestConfig, tasks: TasksConfig) -> None:
        self.writer = writer
        self.ingest = ingest
        self.tasks = tasks
        self.stats = IngestStats()
        self._queue: deque[_Item] = deque()
        self._queued_bytes = 0
        self._cond = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="agentsla-writer", daemon=True)

    @property
    def queued_bytes(self) -> int:
        """Estimated bytes of rows waiting for the writer."""
        return self._queued_bytes

    def is_full(self, nbytes: int = 0) -> bool:
        """Whether a request of nbytes would push the queue over its bound."""
        return self._queued_bytes + nbytes > self.ingest.queue_max_bytes and self._queued_bytes > 0

    def start(self) -> None:
        """Start the writer thread."""
        self._thread.start()

    async def submit(self, rows: list[Row]) -> None:
        """Queue rows and return once they are committed; raise Overloaded when full."""
        if self._closing:
            raise RetryableError("agentsla is shutting down", self.ingest.retry_after)
        nbytes = estimate_bytes(rows)
        loop = asyncio.get_running_loop()
        item = _Item(rows, nbytes, loop.create_future(), loop)
        with self._cond:
            if self.is_full(nbytes):
                self.stats.refused_spans += len(rows)
                raise Overloaded(f"ingest queue full ({self._queued_bytes} of "
                                 f"{self.ingest.queue_max_bytes} bytes); retry later",
                                 self.ingest.retry_after)
            self._queue.append(item)
            self._queued_bytes += nbytes
            self._cond.notify()
        await asyncio.shield(item.future)

    def close(self, timeout: float = 30.0) -> bool:
        """Stop taking requests, commit what is queued, checkpoint; False if the writer is busy.

        A writer still inside a transaction after `timeout` is left alone: DuckDB refuses a
        second call on a busy connection, and what it has not committed was not acknowledged.
        """
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.error("the writer is still busy after %.0f s; leaving it (unacknowledged spans "
                      "are not committed; the WAL replays on the next start)", timeout)
            return False
        try:
            self.writer.con.execute("checkpoint")
        except duckdb.Error as exc:  # a checkpoint failure leaves the WAL, which replays on open
            log.warning("checkpoint at shutdown failed: %s", exc)
        return True

    def health(self) -> dict[str, Any]:
        """Counters and queue state for /api/v1/health and /metrics."""
        return {"ingest": {**self.stats.__dict__, "queued_bytes": self._queued_bytes,
                           "queue_max_bytes": self.ingest.queue_max_bytes,
                           "queued_requests": len(self._queue)}}

    # -- writer thread -------------------------------------------------------------------------

    def _run(self) -> None:
        next_sweep = time.monotonic() + _SWEEP_EVERY_S
        next_retention = time.monotonic()
        while True:
            group = self._take_group(timeout=max(0.0, next_sweep - time.monotonic()))
            if group:
                self._commit(group)
            elif self._closing:
                return
            now = time.monotonic()
            if now >= next_sweep:
                next_sweep = now + min(_SWEEP_EVERY_S, self.tasks.retention_interval)
                self._housekeep(now >= next_retention)
                if now >= next_retention:
                    next_retention = now + self.tasks.retention_interval

    def _take_group(self, timeout: float) -> list[_Item]:
        with self._cond:
            if not self._queue and not self._closing:
                self._cond.wait(timeout)
            group: list[_Item] = []
            spans = 0
            while self._queue and (not group or spans + len(self._queue[0].rows)
                                   <= self.ingest.commit_max_spans):
                item = self._queue.popleft()
                group.append(item)
                spans += len(item.rows)
            return group

    def _commit(self, group: list[_Item]) -> None:
        rows = [row for item in group for row in item.rows]
        try:
            result = self.writer.write(rows)
        except Exception as exc:  # noqa: BLE001 - classified below, never kills the thread
            if len(group) > 1:
                for item in group:  # isolate the request that cannot be written
                    self._commit([item])
                return
            self._finish(group, _classify_write_error(exc, self.ingest.retry_after))
            self.stats.failed_spans += len(rows)
            return
        self.stats.accepted_spans += result.accepted
        self.stats.duplicate_spans += result.duplicates
        self.stats.commits += 1
        self.stats.last_commit_ns = time.time_ns()
        self._finish(group, None)

    def _finish(self, group: list[_Item], error: AgentslaError | None) -> None:
        with self._cond:
            self._queued_bytes -= sum(item.nbytes for item in group)
        for item in group:
            item.loop.call_soon_threadsafe(_settle, item.future, error)

    def _housekeep(self, with_retention: bool) -> None:
        try:
            self.stats.lost_tasks_declared += self.writer.sweep_lost()
            if with_retention:
                cutoff = time.time_ns() - int(self.tasks.retention * 1e9)
                self.stats.retention_deleted_tasks += self.writer.delete_before(cutoff)
        except duckdb.Error as exc:
            log.error("housekeeping failed, will retry: %s", exc)


def _settle(future: asyncio.Future, error: AgentslaError | None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


def _classify_write_error(exc: Exception, retry_after: float) -> AgentslaError:
    """Data DuckDB refuses is the client's fault (400); anything else may pass (503)."""
    if isinstance(exc, (duckdb.ConversionException, duckdb.InvalidInputException,
                        duckdb.ConstraintException)):
        return PermanentError(f"spans could not be stored: {exc}")
    log.error("write failed: %s", exc)
    return RetryableError(f"storage failed, retry later: {exc}", retry_after)
