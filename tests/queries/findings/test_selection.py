"""Window selection, threshold overrides and the finding shape."""

from __future__ import annotations

import pytest
from shapes import Trace
from spanfactory import BASE_NS

from agentsla.errors import ConfigError, PermanentError
from agentsla.queries.findings import DEFAULT_THRESHOLDS, find_findings, resolve_thresholds

S = 1_000_000_000
LATE_S = 3_600  # the second ghost task runs an hour after the first


def _ghost(at_s: float, ran_on_ms: float = 15_000) -> Trace:
    t = Trace(at_ms=at_s * 1000, root_end_ms=10_000, error_type="timeout", status_code="error")
    t.child(t.root, "model", "gpt-4o", 100, 10_000 + ran_on_ms, hop_timeout_ms=30_000,
            input_tokens=3000, output_tokens=500)
    return t


@pytest.fixture(scope="module")
def two_ghosts(load_module):
    early, late = _ghost(0), _ghost(LATE_S)
    return load_module(early.rows + late.rows), early, late


@pytest.mark.parametrize("start_s, end_s, tasks", [
    # (window in seconds after BASE_NS, 20 s into its minute; tasks whose ghost work ended in
    # the window widened to whole minutes: the early ghost span ends at 25 s)
    (-20, 2 * LATE_S, 2),          # both
    (-20, LATE_S - 20, 1),         # the early one only (whole minutes)
    (LATE_S - 20, 2 * LATE_S, 1),  # the late one only
    (40, LATE_S - 20, 0),          # from the minute after the early end: nothing
    (30, LATE_S - 20, 1),          # widened to the minute holding 30 s: from -20 s
    (0, 25, 1),                    # widened to the end of the minute: to 40 s
    (0, LATE_S, 2),                # to LATE_S + 40 s: the late end (LATE_S + 25 s) too
    (-80, -20, 0),                 # the minute before: the window is half-open
])
def test_window_selects_findings_by_evidence_end(two_ghosts, start_s, end_s, tasks):
    store, early, late = two_ghosts
    found = find_findings(store, BASE_NS + start_s * S, BASE_NS + end_s * S, "ghost_work", {})
    if not tasks:
        assert found == []
        return
    (finding,) = found
    assert finding["evidence"]["tasks"] == tasks
    minute = 60 * S
    assert (BASE_NS + start_s * S) // minute * minute <= finding["first_seen_ns"]
    assert finding["first_seen_ns"] <= finding["last_seen_ns"]
    assert finding["last_seen_ns"] < -(-(BASE_NS + end_s * S) // minute) * minute


def test_finding_shape(two_ghosts):
    store, early, late = two_ghosts
    (f,) = find_findings(store, BASE_NS, BASE_NS + 2 * LATE_S * S, None, {})
    assert f["type"] == "ghost_work" and f["severity"] == "warning"
    assert f["hop"] == {"kind": "model", "name": "gpt-4o"}
    assert f["evidence"] == {"spans": 2, "started_after_cutoff": 0, "tasks": 2,
                             "seconds_after": 30.0, "max_ms_after": 15_000.0, "tokens_after": 7000}
    assert {e["task_id"] for e in f["examples"]} == {early.task_id, late.task_id}
    assert f["first_seen"] == "2023-11-14T22:13:45.000Z" and f["last_seen_ns"] == (
        BASE_NS + (LATE_S + 25) * S)
    assert "30 s in all" in f["hint"] and "7000 tokens" in f["hint"]


def test_kind_limits_and_unknown_kind_is_refused(two_ghosts):
    store, *_ = two_ghosts
    assert find_findings(store, BASE_NS, BASE_NS + 2 * LATE_S * S, "stream_stall", {}) == []
    with pytest.raises(PermanentError, match="bad kind 'ghosts'"):
        find_findings(store, BASE_NS, BASE_NS + 2 * LATE_S * S, "ghosts", {})


@pytest.mark.parametrize("overrides, found", [
    ({}, 1),                                   # default: 1 s of grace
    ({"ghost_work_grace_ms": 20_000}, 0),      # 15 s after the root is within 20 s of grace
    ({"ghost_work_grace_ms": "20s"}, 0),       # durations as in the rest of the config file
    ({"ghost_work_critical_s": 10}, 1),        # same finding, now critical
])
def test_thresholds_override_defaults(two_ghosts, overrides, found):
    store, *_ = two_ghosts
    result = find_findings(store, BASE_NS, BASE_NS + 2 * LATE_S * S, None, overrides)
    assert len(result) == found
    if "ghost_work_critical_s" in overrides:
        assert result[0]["severity"] == "critical"


def test_resolve_thresholds():
    assert resolve_thresholds(None) == DEFAULT_THRESHOLDS
    minute = resolve_thresholds({"missing_timeout_long_ms": "1m"})
    assert minute["missing_timeout_long_ms"] == 60_000
    with pytest.raises(ConfigError, match="unknown threshold.*missing_timeout_long"):
        resolve_thresholds({"missing_timeout_long": 1})
    with pytest.raises(ConfigError, match="findings.polling_max_cv: bad value 'low'"):
        resolve_thresholds({"polling_max_cv": "low"})
    with pytest.raises(ConfigError, match="must not be negative"):
        resolve_thresholds({"polling_max_cv": -1})
    with pytest.raises(ConfigError, match="context_timeout_duration_quantile.*at most 1"):
        resolve_thresholds({"context_timeout_duration_quantile": 1.5})
