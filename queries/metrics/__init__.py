"""/metrics: agentsla's counters, histograms and gauges, the Prometheus way (docs/api.md).

Counters (`_total`) by outcome and reason, histograms of durations with classic `le` buckets
summed exactly from the rollups' exponential buckets, and gauges only for what is a level now;
no ratio or quantile is computed here: Prometheus and Grafana take rate() and
histogram_quantile() over their own windows. The counters and histograms are the process's
`Totals` (settled rollup minutes, each added once); text format 0.0.4 by default, OpenMetrics
(with exemplars carrying trace ids) when the scraper's Accept header asks for it.
"""

from __future__ import annotations

from typing import Callable, Iterator, Mapping

from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import Metric

from agentsla.config import Config
from agentsla.queries.metrics.families import (counter_families, gauge_families,
                                               histogram_families, ingest_families)
from agentsla.queries.metrics.totals import Totals
from agentsla.queries.store import ReadStore

__all__ = ["Totals", "render_metrics"]


class _Scrape:
    """One scrape's families, in the shape prometheus_client's encoders read (collect())."""

    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self.families)


def render_metrics(store: ReadStore, config: Config, totals: Totals, now_ns: int,
                   accept: str = "",
                   stats: Callable[[], Mapping[str, float]] | None = None) -> tuple[bytes, str]:
    """Answer: what are agentsla's metrics now? Returns the body and its content type.

    Adds the rollup minutes settled since the last scrape to `totals` first (none most of the
    time), then reads the one gauge that needs the store (tasks in progress).
    """
    with totals.lock:  # one scrape at a time reads and adds
        totals.advance(store, now_ns)
        families = [*counter_families(totals), *histogram_families(totals),
                    *gauge_families(totals, list(totals.in_progress(store, now_ns)), config)]
    if stats is not None:
        families += ingest_families(stats())
    encode, content_type = choose_encoder(accept)
    return encode(_Scrape(families)), content_type
