"""Live progress of a simulation run (rich): tasks finished by scenario and outcome."""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from rich.console import Console
from rich.live import Live
from rich.table import Table

from agentsla.contract import FINISHED_OUTCOMES
from agentsla.simulator.truth import Tally

_COLORS = {"success": "green", "degraded": "yellow", "failed": "red",
           "budget_exhausted": "magenta", "rejected": "bright_red"}


class Progress:
    """A rich Live table refreshed a few times a second while tasks finish."""

    def __init__(self, console: Console | None = None, title: str = "agentsla simulate") -> None:
        self.console = console or Console(stderr=True)
        self.title = title
        self.tally = Tally()
        self.started = time.monotonic()
        self._live = Live(self._render(), console=self.console, refresh_per_second=4,
                          transient=False)

    def _render(self) -> Table:
        outcomes = [o for o in FINISHED_OUTCOMES if o not in ("lost", "cancelled")]
        table = Table(title=f"{self.title} — {self.tally.tasks} tasks, {self.tally.spans} spans, "
                            f"{time.monotonic() - self.started:.0f}s", title_justify="left")
        table.add_column("scenario")
        for outcome in outcomes:
            table.add_column(outcome, justify="right", style=_COLORS.get(outcome))
        rows = dict(self.tally.by_scenario)
        rows["total"] = self.tally.outcomes
        for name, counts in rows.items():
            table.add_row(name, *(str(counts.get(o, 0)) for o in outcomes))
        return table

    def update(self, tally: Tally) -> None:
        """Take the latest counts (called by the runner as tasks finish)."""
        self.tally = tally
        self._live.update(self._render())

    def __enter__(self) -> Progress:
        self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.update(self._render())
        self._live.__exit__(*exc)


@contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[threading.Event]:
    """Set `stop` on SIGINT or SIGTERM while the block runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, lambda *_: stop.set())
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
