"""Shared state of the simulated platform in virtual time: worker pools and circuit breakers.

Tasks are planned one at a time in arrival order. Each model answers "what is the state at
virtual time t" from the events recorded so far, so a task sees the queue, the busy workers and
the open breakers that earlier tasks left behind.
"""

from __future__ import annotations

import bisect
import heapq
from collections import deque
from dataclasses import dataclass, field


class WorkerPool:
    """A fixed number of workers fed by one FIFO queue of bounded length."""

    def __init__(self, name: str, workers: int, capacity: int, start: float) -> None:
        self.name = name
        self.capacity = capacity
        self._free = [start] * workers  # heap of the times each worker becomes free
        self._waiting: deque[float] = deque()  # dequeue times of admitted tasks, ~sorted

    def queue_length(self, t: float) -> int:
        """Count the admitted tasks still waiting in the queue at time t."""
        while self._waiting and self._waiting[0] <= t:
            self._waiting.popleft()
        return sum(1 for d in self._waiting if d > t)

    def is_full(self, t: float) -> bool:
        """Tell whether a task enqueued at t would be rejected."""
        return self.queue_length(t) >= self.capacity

    def acquire(self, t_enqueue: float) -> float:
        """Take the earliest free worker; return when it picks up a task enqueued at t."""
        free_at = heapq.heappop(self._free)
        return max(t_enqueue, free_at)

    def admitted(self, t_dequeue: float) -> None:
        """Record that a task waits in the queue until t_dequeue."""
        self._waiting.append(t_dequeue)

    def release(self, t: float) -> None:
        """Give a worker back at time t."""
        heapq.heappush(self._free, t)


@dataclass
class Breaker:
    """Consecutive-failure circuit breaker, evaluated over recorded call results by end time."""

    threshold: int = 5
    cooldown: float = 30.0
    _results: list[tuple[float, bool]] = field(default_factory=list)  # (end, ok), sorted
    _trials: list[float] = field(default_factory=list)  # start times of half-open trials

    def _opened_at(self, t: float) -> float | None:
        """Time the breaker last (re)opened before t, or None when it is closed at t."""
        streak, opened = 0, None
        for end, ok in self._results:
            if end > t:
                break
            if ok:
                streak, opened = 0, None
            else:
                streak += 1
                if opened is not None or streak >= self.threshold:
                    opened = end
        return opened

    def state_at(self, t: float) -> str:
        """Return `closed`, `open` or `half_open` (this call is the one trial) at time t."""
        opened = self._opened_at(t)
        if opened is None:
            return "closed"
        if t < opened + self.cooldown:
            return "open"
        if any(opened + self.cooldown <= s <= t for s in self._trials):
            return "open"  # one trial is already in flight or failed; keep failing fast
        return "half_open"

    def trial(self, t: float) -> None:
        """Record that a half-open trial call started at t."""
        self._trials.append(t)

    def record(self, end: float, ok: bool) -> None:
        """Record the result of a guarded call that ended at `end`."""
        bisect.insort(self._results, (end, ok))


@dataclass
class World:
    """The pools and breakers of one schedule segment, created on first use."""

    start: float
    pools: dict[str, WorkerPool] = field(default_factory=dict)
    breakers: dict[str, Breaker] = field(default_factory=dict)

    def pool(self, name: str, workers: int, capacity: int) -> WorkerPool:
        """Return the named pool, creating it with the given size."""
        if name not in self.pools:
            self.pools[name] = WorkerPool(name, workers, capacity, self.start)
        return self.pools[name]

    def breaker(self, name: str) -> Breaker:
        """Return the breaker guarding the named dependency."""
        return self.breakers.setdefault(name, Breaker())
