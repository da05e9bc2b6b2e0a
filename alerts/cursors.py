"""Cursors: the read stores the alert service holds, so stopping can interrupt them.

DuckDB refuses to close a connection a query still runs on ("connection is busy"), so the alert
service opens every store (each over its own cursor) here: `interrupt_all()` refuses new ones,
interrupts the running queries (`ReadStore.interrupt()`; over DuckDB the query raises
InterruptException) and `wait_idle()` returns once every store is closed.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from agentsla.errors import RetryableError
from agentsla.queries.store import ReadStore


class Cursors:
    """Open, track and interrupt the read stores (cursors) of the alert service's threads."""

    def __init__(self, connect: Callable[[], ReadStore]) -> None:
        self.connect = connect
        self._open: set[ReadStore] = set()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self.stopping = False

    @contextmanager
    def cursor(self) -> Iterator[ReadStore]:
        """Yield a fresh read store, closed (and forgotten) afterwards."""
        with self._lock:
            if self.stopping:
                raise RetryableError("the alert service is stopping")
            cur = self.connect()
            self._open.add(cur)
        try:
            yield cur
        finally:
            cur.close()
            with self._lock:
                self._open.discard(cur)
                self._idle.notify_all()

    def interrupt_all(self) -> None:
        """Refuse new cursors and interrupt the queries running on the open ones."""
        with self._lock:
            self.stopping = True
            for cur in self._open:
                cur.interrupt()

    def wait_idle(self, timeout_s: float, poll_s: float = 0.1) -> bool:
        """Interrupt until no cursor is open (True) or `timeout_s` passed (False).

        Interrupting again on every poll catches a query that started on an open cursor
        after the previous interrupt (a round runs one query per rule).
        """
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while self._open:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                for cur in self._open:
                    cur.interrupt()
                self._idle.wait(min(poll_s, left))
        return True
