"""The materializer as a background thread of `agentsla serve --store clickhouse://...|chdb://`.

One process running every role (small setups) runs shard 0/1 on an interval; larger ones run
`agentsla materialize --shard K/N` workers instead. A failed pass is counted and retried on
the next interval: the shard's watermark only moves after a pass has written its rows.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from agentsla.collector.store.clickhouse import retention, rollups
from agentsla.collector.store.clickhouse.materializer import PassResult, Shard, run_pass
from agentsla.collector.store.clickhouse.url import StoreURL
from agentsla.config import TasksConfig

log = logging.getLogger("agentsla.materializer")


def start_shard(runner: Any, url: StoreURL, config: TasksConfig, shard: Shard) -> None:
    """Before a shard's first pass: refuse a shard count the rollups were not kept for
    (PermanentError naming `rollups rebuild`); shard 0 gives the store its retention."""
    rollups.check_shards(runner, url.database, shard)
    if shard.index == 0:
        retention.keep(runner, url, config.retention, config.rollup_retention)


class MaterializerLoop:
    """Runs materializer passes of one shard on a thread until stopped."""

    def __init__(self, runner: Any, url: StoreURL, config: TasksConfig,
                 shard: Shard = Shard(0, 1)) -> None:
        self._runner, self._url, self._config, self._shard = runner, url, config, shard
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agentsla-materializer",
                                        daemon=True)
        self.passes = self.failed_passes = 0
        self.last_error: str | None = None
        self.watermark_ns: int | None = None
        self.last: PassResult | None = None

    def start(self) -> None:
        """Start the thread, once the shard may run (`start_shard`)."""
        start_shard(self._runner, self._url, self._config, self._shard)
        self._thread.start()

    def stop(self) -> None:
        """Ask the thread to end after its current pass, and wait for it."""
        self._stop.set()
        if self._thread.ident is not None:  # never started when serve leaves it to workers
            self._thread.join()

    def run_once(self) -> bool:
        """Run one pass now (on the caller's thread); tell whether a backlog remains."""
        try:
            done = run_pass(self._runner, self._url.database, self._url.table, self._shard,
                            self._config, time.time_ns())
        except Exception as exc:  # the store's errors are transient until shown otherwise
            self.failed_passes += 1
            self.last_error = str(exc)
            log.error("materializer pass failed (retried next interval): %s", exc)
            return False
        self.passes += 1
        self.last, self.last_error = done, None
        self.watermark_ns = done.watermark_ns
        return not done.caught_up

    def health(self) -> dict[str, Any]:
        """State for /api/v1/health."""
        return {"running": self._thread.is_alive(), "shard": str(self._shard),
                "passes": self.passes, "failed_passes": self.failed_passes,
                "last_error": self.last_error, "watermark_ns": self.watermark_ns}

    def _run(self) -> None:
        while not self._stop.is_set():
            if not self.run_once():  # a shard behind on a backlog passes again at once
                self._stop.wait(self._config.materialize_interval)
