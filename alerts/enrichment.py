"""Enricher: incident timelines (snapshots, Pareto, findings, impact) in their own worker thread.

Enrichment reads DuckDB hard (every detector, impact and Pareto per open incident), so it runs
beside the evaluation loop, never inside it: an evaluation round never waits for it, and at
scale an incident does not slow the alerts that report it. Each pass has a time budget: a
query still running when the budget runs out is interrupted, and the incidents not reached
wait for the next pass (the most overdue go first).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from agentsla.alerts.cursors import Cursors

log = logging.getLogger("agentsla.alerts.enrichment")
#: Seconds between passes (each incident's own pace is alerts.incidents.snapshot_interval).
PASS_INTERVAL_S = 1.0


class Enricher:
    """Run `enrich(now, cur, deadline)` every PASS_INTERVAL_S in the thread `alerts-enrich`."""

    def __init__(self, enrich: Callable[[float, object, float], None], cursors: Cursors,
                 budget_s: float, clock: Callable[[], float]) -> None:
        self.enrich, self.cursors, self.budget_s, self.clock = enrich, cursors, budget_s, clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.passes = 0

    def start(self) -> None:
        """Start the worker thread."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="alerts-enrich", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 30.0) -> None:
        """Stop the worker after its current query (the service interrupts that query)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None

    def run_once(self, now: float) -> None:
        """Run one pass at `now` within the budget."""
        with self.cursors.cursor() as cur:
            # the budget is enforced twice: between incidents (the deadline) and inside a
            # query that alone outlasts it (the timer interrupts it)
            timer = threading.Timer(self.budget_s, cur.interrupt)
            timer.daemon = True
            timer.start()
            try:
                self.enrich(now, cur, time.monotonic() + self.budget_s)
            finally:
                timer.cancel()
        self.passes += 1

    def _run(self) -> None:
        while not self._stop.wait(PASS_INTERVAL_S):
            try:
                self.run_once(self.clock())
            except Exception:  # noqa: BLE001 - enrichment is best effort; the next pass retries
                # the service closes its cursors before it stops this worker: a pass that
                # fails then is the shutdown, not an error
                if not (self._stop.is_set() or self.cursors.stopping):
                    log.exception("incident enrichment failed; retrying next pass")
