"""SLO error budget and burn rates against hand-computed values."""

from __future__ import annotations

import dataclasses

import pytest

from agentsla.config import SloObjective, load_config
from agentsla.queries.slo import budget_share, slo_status, slo_window
from queryrows import NS, T0, insert, task

END = T0 + 100 * 86400 * NS
M, H, D = 60, 3600, 86400


def aged(task_id, outcome, age_s, task_type):
    """A task of `task_type` that finished `age_s` seconds before END."""
    return task(task_id, outcome, end_s=(END - T0) / NS - age_s, task_type=task_type)


@pytest.fixture
def config():
    return dataclasses.replace(load_config(environ={}), slos=(
        SloObjective("chat", objective=0.99),                                  # 30d, degraded good
        SloObjective("search", objective=0.9, period=1 * D, degraded_is_good=False),
        SloObjective("voice", objective=0.95),                                 # no traffic
    ))


@pytest.fixture
def traffic(con, store):
    rows = [aged("c-f", "failed", 1 * M, "chat"), aged("c-x", "cancelled", 1 * M, "chat"),
            aged("c-d", "degraded", 10 * M, "chat"), aged("c-l", "lost", 2 * D, "chat"),
            aged("c-old", "failed", 40 * D, "chat")]
    rows += [aged(f"c-s{i}", "success", 2 * M, "chat") for i in range(3)]
    rows += [aged(f"c-h{i}", "success", 2 * H, "chat") for i in range(5)]
    rows += [aged("s-d", "degraded", 1 * M, "search"), aged("s-s", "success", 1 * M, "search"),
             aged("s-f", "failed", 2 * D, "search")]
    rows += [aged(f"s-h{i}", "success", 12 * H, "search") for i in range(18)]
    insert(con, tasks=rows)
    return store


def test_burn_rates_and_budget(traffic, config):
    chat, search, voice = slo_status(traffic, config, END)
    # chat (objective .99, degraded good): 5m: 1 bad of 4 -> .25/.01 = 25; 30m and 1h add the
    # degraded task -> 1/5 -> 20; 6h and 1d add five successes -> 1/10 -> 10; 3d adds the lost
    # task -> 2/11; the 30-day period is the same as 3d (the 40-day failure is outside).
    assert chat["burn_rates"] == pytest.approx(
        {"5m": 25.0, "30m": 20.0, "1h": 20.0, "6h": 10.0, "1d": 10.0, "3d": 2 / 11 / 0.01})
    assert (chat["good"], chat["bad"]) == (9, 2)
    assert chat["error_budget_remaining"] == pytest.approx(1 - 2 / 11 / 0.01)
    # search (objective .9, degraded bad, period 1d): 5m..6h: 1 bad of 2 -> .5/.1 = 5;
    # 1d: 1 of 20 -> .5; 3d: 2 of 21
    assert search["burn_rates"] == pytest.approx(
        {"5m": 5.0, "30m": 5.0, "1h": 5.0, "6h": 5.0, "1d": 0.5, "3d": 2 / 21 / 0.1})
    assert search["error_budget_remaining"] == pytest.approx(0.5)
    assert search["windows"]["5m"] == {"good": 1, "bad": 1}
    # voice: configured, no traffic: nothing to divide
    assert voice["task_type"] == "voice" and voice["error_budget_remaining"] is None
    assert set(voice["burn_rates"].values()) == {None}


def test_filter_and_default_objective(traffic):
    (chat,) = slo_status(traffic, load_config(environ={}), END, task_type="chat")
    assert chat["objective"] == 0.999 and chat["period_s"] == 30 * D
    assert chat["burn_rates"]["5m"] == pytest.approx(0.25 / 0.001)


def test_any_window_counts_good_and_bad_against_the_types_slo(con, store, config):
    # search: degraded is bad (degraded_is_good=False), objective 0.9; chat: degraded is good
    start_s, end_s = 100.0, 200.0
    insert(con, tasks=[
        task("s1", "success", end_s=start_s, task_type="search"),   # on the lower bound: in
        task("s2", "degraded", end_s=150, task_type="search"),
        task("s3", "failed", end_s=199, task_type="search"),
        task("s4", "failed", end_s=end_s, task_type="search"),      # on the upper bound: out
        task("s5", "cancelled", end_s=150, task_type="search"),     # neither good nor bad
        task("c1", "degraded", end_s=150, task_type="chat"),
    ])
    rows = slo_window(store, config, T0 + int(start_s * NS), T0 + int(end_s * NS))
    by_type = {r["task_type"]: r for r in rows}
    assert set(by_type) == {"search", "chat"}
    search = by_type["search"]
    assert (search["good"], search["bad"], search["total"]) == (1, 2, 3)
    assert search["bad_fraction"] == pytest.approx(2 / 3)
    assert search["burn_rate"] == pytest.approx((2 / 3) / 0.1)
    chat = by_type["chat"]
    assert (chat["good"], chat["bad"], chat["burn_rate"]) == (1, 0, 0.0)


def test_budget_share_of_a_period():
    # 30 minutes at half bad against 99 % over 1 day: 15 bad minutes of 14.4 allowed
    slo = SloObjective("chat", objective=0.99, period=86400.0)
    assert budget_share(0.5, 30.0, slo) == pytest.approx(15 / 14.4)
