"""IngestPipeline: the bounded queue between receivers and the one writer thread.

Receivers `await submit(rows)`; the writer thread drains every waiting request into one
transaction (group commit) and only then answers them, so a 200 means the spans are committed.
A commit has a fixed cost (docs/architecture.md, Few statements a batch), so a busy writer
waits up to `commit_linger` for the requests of clients it expects back (`_linger_target`); a
lone client's request is committed at once.
The queue is bounded in (estimated) bytes: when full, submit raises Overloaded (429) at once and
holds no memory for the refused request. No request waits longer than `submit_timeout`.

The writer thread is supervised: an unexpected error is logged with its traceback, the batch in
hand is answered 503 (retryable), the writer forgets its memory and carries on; after more
than `writer_max_restarts` such errors in a row the pipeline dies, answers everything queued
503 and calls `on_death` (the server then exits non-zero for its supervisor to restart it).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import duckdb

from agentsla.collector.faults import FaultPlan, InjectedFault
from agentsla.collector.store.writer import Row, TaskWriter
from agentsla.config import IngestConfig, TasksConfig
from agentsla.errors import AgentslaError, Overloaded, RetryableError

log = logging.getLogger("agentsla.pipeline")

_ROW_OVERHEAD_BYTES = 1200  # a row dict with ~45 keys and small values, measured with tracemalloc
_SWEEP_EVERY_S = 10.0
_MAX_NO_WAIT = 64  # most groups taken without a wait after waits that missed their target


def estimate_bytes(rows: list[Row]) -> int:
    """Estimate the memory a batch of rows holds while it waits for the writer."""
    total = 0
    for row in rows:
        total += _ROW_OVERHEAD_BYTES + len(row["attributes"]) + len(row["resource"])
        total += len(row["events"]) + len(row["links"])
    return total


@dataclass(eq=False)  # compared by identity: withdrawing one must not compare rows
class _Item:
    rows: list[Row]
    nbytes: int
    future: asyncio.Future
    loop: asyncio.AbstractEventLoop
    taken: bool = False  # the writer has it in hand: too late to withdraw


@dataclass
class IngestStats:
    """Counters in the spirit of the OpenTelemetry Collector's obsreport."""

    accepted_spans: int = 0
    duplicate_spans: int = 0
    refused_spans: int = 0
    failed_spans: int = 0
    timed_out_spans: int = 0
    writer_restarts: int = 0
    commits: int = 0
    lost_tasks_declared: int = 0
    retention_deleted_tasks: int = 0
    last_commit_ns: int = 0
    started_ns: int = field(default_factory=time.time_ns)


class IngestPipeline:
    """Owns the writer thread; every DuckDB write in `agentsla serve` goes through it."""

    def __init__(self, writer: TaskWriter, ingest: IngestConfig, tasks: TasksConfig,
                 on_death: Callable[[], None] | None = None) -> None:
        self.writer = writer
        self.ingest = ingest
        self.tasks = tasks
        self.stats = IngestStats()
        self.on_death = on_death
        self.dead = False
        self._queue: deque[_Item] = deque()
        self._queued_bytes = 0
        self._cond = threading.Condition()
        self._closing = False
        self._in_hand: list[_Item] = []
        self._busy_since: float | None = None  # monotonic start of the writer's current step
        self._last_group = 0  # requests in the last group the writer took
        self._arrived_busy = 0  # requests queued when the writer last answered its group
        self._misses = 0  # waits in a row that ended at commit_linger short of their target
        self._no_wait_left = 0  # groups still to take without a wait after the last miss
        self._errors_in_a_row = 0
        self._last_error: str | None = None
        self._faults = FaultPlan(ingest.fault_injection)
        self._batches = 0
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
        """Queue rows and return once they are committed; raise Overloaded when full.

        Raises RetryableError (503) when the commit does not come within submit_timeout. A
        request still queued is then withdrawn, never committed; one the writer already holds
        may still be committed, and the client's retry is then a duplicate the writer drops.
        """
        if self._closing or self.dead:
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
        timeout = self.ingest.submit_timeout or None
        try:
            await asyncio.wait_for(asyncio.shield(item.future), timeout)
        except TimeoutError:
            self._withdraw(item)
            raise RetryableError(f"spans not committed within {timeout:g} s (the writer is "
                                 "slow or stuck); retry later", self.ingest.retry_after) from None

    def _withdraw(self, item: _Item) -> None:
        with self._cond:
            self.stats.timed_out_spans += len(item.rows)
            if not item.taken:
                self._queue.remove(item)
                self._queued_bytes -= item.nbytes

    def close(self, timeout: float = 30.0) -> bool:
        """Stop taking requests, commit what is queued, checkpoint; False if the writer is busy.

        A writer still inside a transaction after `timeout` is left alone: DuckDB refuses a
        second call on a busy connection, and what it has not committed was not acknowledged.
        """
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._faults.released.set()
        self._thread.join(timeout)
        if self.dead:
            return False  # the writer gave up: leave the connection to the WAL replay
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
        """Counters, queue and writer state for /api/v1/health (503 unless ok) and /metrics."""
        writer = self._writer_health()
        problem = ("the writer thread is dead" if not writer["alive"] else
                   f"the writer has been busy for {writer['busy_s']:.0f} s" if writer["stalled"]
                   else None)
        return {**({"status": "unavailable", "reason": problem} if problem else {}),
                "ingest": {**self.stats.__dict__, "queued_bytes": self._queued_bytes,
                           "queue_max_bytes": self.ingest.queue_max_bytes,
                           "queued_requests": len(self._queue)},
                "writer": writer}

    def _writer_health(self) -> dict[str, Any]:
        since = self._busy_since
        busy_s = None if since is None else round(time.monotonic() - since, 3)
        last = self.stats.last_commit_ns
        return {"alive": self._thread.is_alive() and not self.dead,
                "stalled": busy_s is not None and busy_s > self.ingest.writer_stall_timeout,
                "busy_s": busy_s,
                "last_commit_ns": last or None,
                "last_commit_age_s": round((time.time_ns() - last) / 1e9, 3) if last else None,
                "queued_requests": len(self._queue), "queued_bytes": self._queued_bytes,
                "restarts": self.stats.writer_restarts, "last_error": self._last_error}

    # -- writer thread -------------------------------------------------------------------------

    def _run(self) -> None:
        """Supervise the writer loop until close, or until it fails too often in a row."""
        clean = False
        try:
            clean = self._supervise()
        finally:
            if not clean:
                self._die()

    def _supervise(self) -> bool:
        while True:
            try:
                self._loop()
                return True
            except Exception as exc:  # noqa: BLE001 - supervision: log, answer 503, restart
                self._errors_in_a_row += 1
                log.exception("the writer failed unexpectedly (%d in a row); its batch is "
                              "answered 503", self._errors_in_a_row)
                restarts = self._errors_in_a_row <= self.ingest.writer_max_restarts
                # counted before the 503 goes out: a client that saw it sees the restart too
                self.stats.writer_restarts += restarts
                self._finish(self._in_hand, self._internal_error(exc))
                if not restarts:
                    return False
                self.writer.forget_memory()

    def _die(self) -> None:
        """Answer everything queued 503 and tell the server, which exits for a restart."""
        self.dead = True
        log.critical("the writer gave up after %d unexpected errors in a row; agentsla exits "
                     "so that its supervisor restarts it", self._errors_in_a_row)
        with self._cond:
            queued = list(self._queue)
            self._queue.clear()
        self._finish(queued, RetryableError("agentsla is restarting its writer; retry later",
                                            self.ingest.retry_after))
        if self.on_death is not None:
            self.on_death()

    def _loop(self) -> None:
        next_sweep = time.monotonic() + _SWEEP_EVERY_S
        next_retention = time.monotonic()
        while True:
            group = self._take_group(timeout=max(0.0, next_sweep - time.monotonic()))
            if group:
                self._busy(self._commit_in_hand, group)
            elif self._closing:
                return
            now = time.monotonic()
            if now >= next_sweep:
                next_sweep = now + min(_SWEEP_EVERY_S, self.tasks.retention_interval)
                self._busy(self._housekeep, now >= next_retention)
                if now >= next_retention:
                    next_retention = now + self.tasks.retention_interval

    def _busy(self, step: Callable[..., None], arg: Any) -> None:
        """Run one writer step, timing it for the stall check of /api/v1/health."""
        self._busy_since = time.monotonic()
        try:
            step(arg)
        finally:
            self._busy_since = None

    def _commit_in_hand(self, group: list[_Item]) -> None:
        self._in_hand = group
        self._batches += 1
        fault = self._faults.at(self._batches)
        if fault == "crash":
            raise InjectedFault(f"fault_injection crash@{self._batches}")
        if fault == "stall":
            self._faults.released.wait()
        self._commit(group, fault == "write_error")

    def _take_group(self, timeout: float) -> list[_Item]:
        """Take the queued requests that fit in one commit, then wait up to commit_linger for
        more while the group is under `_linger_target` requests and commit_max_spans (each
        submit wakes the writer; close ends the wait)."""
        with self._cond:
            if not self._queue and not self._closing:
                self._cond.wait(timeout)
            group: list[_Item] = []
            spans = self._take_queued(group, 0)
            target = self._linger_target() if group else 0
            deadline = time.monotonic() + self.ingest.commit_linger
            waited = False
            while (group and not self._queue and not self._closing and len(group) < target
                   and spans < self.ingest.commit_max_spans
                   and (left := deadline - time.monotonic()) > 0):
                waited = True
                self._cond.wait(left)
                spans = self._take_queued(group, spans)
            if waited:
                self._record_wait(missed=len(group) < target and time.monotonic() >= deadline)
            if group:
                self._last_group = len(group)
            return group

    def _linger_target(self) -> int:
        """How many requests the next group waits for: those the last commit answered (their
        clients send again) plus those queued before its answers went out (other clients'),
        so a lone client (one answered, none queued) waits for nobody. A client that stopped
        costs one wait: the smaller group it leaves sets the next target. After a missed wait
        (`_record_wait`) the target is 0."""
        if self._no_wait_left:
            self._no_wait_left -= 1
            return 0
        return self._last_group + self._arrived_busy

    def _record_wait(self, missed: bool) -> None:
        """Back off from waits that do not pay: clients that do not send again once answered
        (exporters sending on a timer) never fill the target, so a miss makes the next
        2**misses groups (at most _MAX_NO_WAIT) wait for nobody; a wait that filled its
        target ends the backoff."""
        self._misses = self._misses + 1 if missed else 0
        if missed:
            self._no_wait_left = min(2 ** self._misses, _MAX_NO_WAIT)

    def _take_queued(self, group: list[_Item], spans: int) -> int:
        """Move queued requests into the group while it stays within commit_max_spans (a
        larger request alone); return the group's spans."""
        while self._queue and (not group or spans + len(self._queue[0].rows)
                               <= self.ingest.commit_max_spans):
            item = self._queue.popleft()
            item.taken = True
            group.append(item)
            spans += len(item.rows)
        return spans

    def _commit(self, group: list[_Item], inject_error: bool = False) -> None:
        rows = [row for item in group for row in item.rows]
        try:
            if inject_error:  # fault_injection write_error: as DuckDB reports a broken key
                raise duckdb.ConstraintException("fault_injection write_error: duplicate key")
            result = self.writer.write(rows)
        except Exception as exc:  # noqa: BLE001 - isolated, then classified below
            if len(group) > 1:
                self._commit_each(group)
                return
            if not isinstance(exc, duckdb.Error):
                raise  # unexpected: the supervisor logs it, answers 503 and restarts the writer
            # Receivers already refused what is malformed; the writer owns every key and has
            # converted every type, so a failure here is agentsla's: retryable, and loud.
            log.error("writing %d spans failed; answered 503: %s", len(rows), exc,
                      exc_info=exc)
            self._last_error = f"{type(exc).__name__}: {exc}"
            self.stats.failed_spans += len(rows)
            self._finish(group, RetryableError(f"storage failed, retry later: {exc}",
                                               self.ingest.retry_after))
            return
        self.stats.accepted_spans += result.accepted
        self.stats.duplicate_spans += result.duplicates
        self.stats.commits += 1
        self.stats.last_commit_ns = time.time_ns()
        self._errors_in_a_row = 0
        self._finish(group, None)

    def _commit_each(self, group: list[_Item]) -> None:
        """Isolate the request that cannot be written: commit the others, then raise its error.

        The failed requests stay in hand: the supervisor answers them 503 once it has counted
        the restart, so a client that saw the 503 sees the restart in /api/v1/health too."""
        unexpected: Exception | None = None
        for item in group:
            try:
                self._commit([item])
            except Exception as exc:  # noqa: BLE001 - raised again once the others are in
                unexpected = unexpected or exc
        if unexpected is not None:
            raise unexpected

    def _internal_error(self, exc: Exception) -> RetryableError:
        self._last_error = f"{type(exc).__name__}: {exc}"
        return RetryableError(f"internal error while storing spans, retry later: "
                              f"{self._last_error}", self.ingest.retry_after)

    def _finish(self, group: list[_Item], error: AgentslaError | None) -> None:
        with self._cond:
            self._queued_bytes -= sum(item.nbytes for item in group)
            self._arrived_busy = len(self._queue)  # before the answers: not their clients'
        for item in group:
            item.loop.call_soon_threadsafe(_settle, item.future, error)
        self._in_hand = [item for item in self._in_hand if item not in group]

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
