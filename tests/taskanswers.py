"""Every task question over one window, on either engine: what the hour-tier tests
(test_whole_hours_of_a_window_come_from_the_hour_tier) compare with the raw-row answers and
before and after deleting rollup rows."""

from __future__ import annotations

import pytest

from agentsla.config import load_config
from agentsla.queries import budget, root_causes, sla, slo


def task_answers(store, window: tuple[int, int], raw: bool = False) -> list:
    """/sla totals and by tenant, /root-causes, /budget and the SLO window (over raw rows only
    with `raw`), and the burn status at the window's end (which has no raw-only form)."""
    config = load_config()
    return [sla.sla_totals(store, *window, raw=raw),
            sla.sla_by(store, *window, "tenant_id", raw=raw),
            root_causes.root_causes(store, *window, raw=raw),
            budget.budget_waterfall(store, *window, raw=raw),
            slo.slo_window(store, config, *window, raw=raw), slo.slo_status(store, config, window[1])]


def seven_task_answers(store, window: tuple[int, int]) -> list:
    """Return task_answers of the hour-tier tests' story (seven tasks of durations 2..8 s, one
    failed) after checking them: equal over raw rows, the counts by hand, p50 and p95 within
    1.1 % of the exact linear-interpolation quantiles (5 s, 7.7 s)."""
    rolled = task_answers(store, window)
    assert rolled == task_answers(store, window, raw=True)
    totals = rolled[0]
    assert (totals["finished"], totals["success"], totals["failed"]) == (7, 6, 1)
    assert totals["latency_p50_ms"] == pytest.approx(5_000, rel=0.011)
    assert totals["latency_p95_ms"] == pytest.approx(7_700, rel=0.011)
    return rolled
