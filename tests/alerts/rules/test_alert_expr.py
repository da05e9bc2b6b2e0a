"""The expression language: what parses, to what, and where errors point."""

from __future__ import annotations

import pytest

from agentsla.alerts.rules.expr import ExprError, PredictLinear, parse


@pytest.mark.parametrize("text, shown", [
    # the brief's examples, printed back in canonical form
    ('task_success_rate{task_type="chat"} by (task_type) [5m] < 0.99',
     'task_success_rate{task_type="chat"} by (task_type) [5m] < 0.99'),
    ('hop_error_rate{hop_kind="tool"} by (hop_name) [2m] > 2%',
     'hop_error_rate{hop_kind="tool"} by (hop_name) [2m] > 0.02'),
    ("queue_wait_p95_seconds [1m] > 5", 'queue_wait_p95_seconds{hop_kind="queue"} [1m] > 5'),
    ("budget_exhaustion_rate [10m] > 0.05", "budget_exhaustion_rate [10m] > 0.05"),
    ('ttft_p95_seconds{model="x"} [5m] > 3', 'ttft_p95_seconds{hop_kind="model", model="x"} [5m] > 3'),
    ("spans_ingested [10m] == 0", "spans_ingested [10m] == 0"),
    # `by` may follow the window
    ("hop_error_rate [5m] by (hop_name) > 1e-3", "hop_error_rate by (hop_name) [5m] > 0.001"),
    # multi-window burn rate with `and`
    ('slo_burn_rate{task_type="chat"} [1h] > 14.4 and slo_burn_rate{task_type="chat"} [5m] > 14.4',
     'slo_burn_rate{task_type="chat"} [1h] > 14.4 and slo_burn_rate{task_type="chat"} [5m] > 14.4'),
    ("task_success_rate by (task_type) [5m] < objective",
     "task_success_rate by (task_type) [5m] < objective"),
    ('task_success_rate{task_type!~"a|b"} by (task_type) [5m] < 0.9',
     'task_success_rate{task_type!~"a|b"} by (task_type) [5m] < 0.9'),
])
def test_parses(text, shown):
    assert str(parse(text)) == shown


def test_predict_linear():
    expr = parse("predict_linear(token_quota_ratio by (model) [5m], 30m) >= 1")
    vector = expr.conditions[0].vector
    assert isinstance(vector, PredictLinear) and vector.horizon_s == 1800
    assert vector.selector.window_s == 300 and vector.selector.by == ("model",)


@pytest.mark.parametrize("text, column, fragment", [
    ("task_sucess_rate [5m] < 1", 1, "unknown metric 'task_sucess_rate'"),
    ('task_success_rate{model="x"} [5m] < 1', 19, "cannot be filtered by 'model'"),
    ("task_success_rate [5m]", 23, "expected a comparison"),
    ("task_success_rate [5x] < 1", 20, "bad duration '5x'"),
    ("hop_error_rate by (hop_name) < 1", 30, "expected a window"),
    ("task_success_rate by (task_type, tenant_id) [5m] < 1", 43, "at most 1 label"),
    ('task_success_rate{task_type!="a"} [5m] < 1', 1, "needs `by (task_type)`"),
    ("hop_error_rate by (tenant_id) [5m] > 1", 20, "cannot be grouped by 'tenant_id'"),
    ('hop_error_rate{hop_name=~"("} [5m] > 1', 26, "bad regular expression"),
    ("hop_error_rate [5m] > 1 extra", 25, "unexpected 'extra'"),
    ("hop_error_rate [0s] > 1", 17, "longer than zero"),
    ("", 1, "empty"),
])
def test_errors_point_at_the_column(text, column, fragment):
    with pytest.raises(ExprError) as info:
        parse(text)
    assert info.value.column == column
    assert fragment in info.value.message
