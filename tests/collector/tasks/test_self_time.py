"""Self time per hop kind: overlaps merged, children clipped to their parents, ghost work dropped.

Expected values are written by hand from each span layout (times in ms after BASE_NS).
"""

from __future__ import annotations

from agentsla.collector.tasks.materialize import materialize_task
from agentsla.collector.tasks.self_time import self_times
from agentsla.collector.tasks.tree import build_tree
from agentsla.config import TasksConfig
from spanfactory import make_trace, ms

CONFIG = TasksConfig(default_budget=300.0, lost_grace=60.0, task_cache_spans=1000,
                     retention=86400.0, retention_interval=3600.0)


def _self_ms(*specs) -> dict[str, float]:
    spans = make_trace(*specs)
    tree = build_tree(spans)
    return {r["hop_kind"]: r["self_us"] / 1000 for r in self_times(tree, tree.root)}


def test_a_chain_without_parallelism_sums_to_the_root_duration():
    got = _self_ms({"span_id": "r", "hop_kind": "gateway", "start_ms": 0, "end_ms": 1000},
                   {"span_id": "a", "parent": "r", "hop_kind": "agent", "start_ms": 10,
                    "end_ms": 990},
                   {"span_id": "m", "parent": "a", "hop_kind": "model", "start_ms": 100,
                    "end_ms": 400},
                   {"span_id": "t", "parent": "a", "hop_kind": "tool", "start_ms": 500,
                    "end_ms": 700})
    # gateway 1000 - 980; agent 980 - 300 - 200
    assert got == {"gateway": 20, "agent": 480, "model": 300, "tool": 200}
    assert sum(got.values()) == 1000


def test_parallel_children_keep_their_own_time_and_cover_their_parent_once():
    got = _self_ms({"span_id": "r", "hop_kind": "agent", "start_ms": 0, "end_ms": 1000},
                   {"span_id": "m1", "parent": "r", "hop_kind": "model", "start_ms": 100,
                    "end_ms": 600},
                   {"span_id": "m2", "parent": "r", "hop_kind": "model", "start_ms": 400,
                    "end_ms": 800},
                   {"span_id": "t", "parent": "r", "hop_kind": "tool", "start_ms": 800,
                    "end_ms": 900})  # touches m2's end: one island 100..900
    assert got == {"agent": 200, "model": 900, "tool": 100}


def test_children_are_clipped_to_their_clipped_parent_and_ghost_work_is_dropped():
    got = _self_ms({"span_id": "r", "hop_kind": "gateway", "start_ms": 0, "end_ms": 1000},
                   {"span_id": "a", "parent": "r", "hop_kind": "agent", "start_ms": 500,
                    "end_ms": 1500},                 # outlives the root: 500..1000
                   {"span_id": "t", "parent": "a", "hop_kind": "tool", "start_ms": 900,
                    "end_ms": 1400},                 # clipped to its parent's 1000: 100
                   {"span_id": "g", "parent": "a", "hop_kind": "model", "start_ms": 1200,
                    "end_ms": 1300})                 # all ghost work: a kind with zero time
    assert got == {"gateway": 500, "agent": 400, "tool": 100, "model": 0}


def test_unreachable_spans_are_not_counted_and_a_missing_kind_is_other():
    got = _self_ms({"span_id": "r", "hop_kind": "gateway", "start_ms": 0, "end_ms": 100},
                   {"span_id": "x", "parent": "r", "hop_kind": None, "start_ms": 10,
                    "end_ms": 30},
                   {"span_id": "o", "parent": "absent", "hop_kind": "cache", "start_ms": 0,
                    "end_ms": 50})
    assert got == {"gateway": 80, "other": 20}


def test_times_are_whole_microseconds_rounded_once_per_kind():
    spans = make_trace({"span_id": "r", "hop_kind": "agent", "start_ms": 0, "end_ms": 1},
                       {"span_id": "a", "parent": "r", "hop_kind": "model", "start_ms": 0,
                        "end_ms": 0.0004},
                       {"span_id": "b", "parent": "r", "hop_kind": "model", "start_ms": 0.5,
                        "end_ms": 0.5004})
    tree = build_tree(spans)
    # model: 400 ns + 400 ns = 0.8 µs -> 1 µs; agent: 1000 µs - 0.8 µs = 999.2 µs -> 999 µs
    assert self_times(tree, tree.root) == [{"hop_kind": "agent", "self_us": 999},
                                           {"hop_kind": "model", "self_us": 1}]


def test_materialization_stores_them_on_a_rooted_task_only():
    spans = make_trace({"span_id": "r", "hop_kind": "gateway", "start_ms": 0, "end_ms": 100},
                       {"span_id": "m", "parent": "r", "hop_kind": "model", "start_ms": 20,
                        "end_ms": 70})
    row = materialize_task("t", spans, CONFIG, now_ns=ms(10_000), first_seen_ns=ms(0))
    assert row["self_times"] == [{"hop_kind": "gateway", "self_us": 50_000},
                                 {"hop_kind": "model", "self_us": 50_000}]
    rootless = materialize_task("t", spans[1:], CONFIG, now_ns=ms(10_000), first_seen_ns=ms(0))
    assert rootless["self_times"] is None
