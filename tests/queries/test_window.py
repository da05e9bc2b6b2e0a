"""Window parsing: RFC 3339 or unix seconds, `window`, `step`, and precise 400 messages."""

from __future__ import annotations

import pytest

from agentsla.errors import PermanentError
from agentsla.queries.window import MAX_BUCKETS, Window, parse_window, rfc3339

NS = 1_000_000_000
NOW = 1_700_000_000 * NS


@pytest.mark.parametrize("params, expected", [
    ({}, Window(NOW - 3600 * NS, NOW)),                                  # default: last hour
    ({"window": "15m"}, Window(NOW - 900 * NS, NOW)),
    ({"window": "90"}, Window(NOW - 90 * NS, NOW)),                      # bare seconds
    ({"to": "1700000000.5", "window": "1s"}, Window(NOW - NS // 2, NOW + NS // 2)),
    ({"from": "2023-11-14T22:00:00Z", "to": "2023-11-14T22:13:20Z"},
     Window(NOW - 800 * NS, NOW)),
    ({"from": "2023-11-14T23:00:00+01:00"}, Window(NOW - 800 * NS, NOW)),  # offsets honoured
    ({"from": "2023-11-14T22:13:19.25Z"}, Window(NOW - 750_000_000, NOW)),
    ({"window": "1h", "step": "1m"}, Window(NOW - 3600 * NS, NOW, 60 * NS)),
    ({"window": "", "step": ""}, Window(NOW - 3600 * NS, NOW)),          # empty = absent
])
def test_parses(params, expected):
    assert parse_window(params, NOW) == expected


@pytest.mark.parametrize("params, message", [
    ({"window": "soon"}, "bad window 'soon': expected a duration"),
    ({"window": "0s"}, "bad window '0s': must be greater than zero"),
    ({"to": "tomorrow"}, "bad to 'tomorrow': expected RFC 3339"),
    ({"from": "2023-11-14 22:00:00"}, "needs a time zone"),
    ({"from": "1700000000", "window": "1h"}, "either from"),
    ({"from": "1700000100", "to": "1700000000"}, "must be before"),
    ({"step": "-1m"}, "bad step '-1m'"),
    ({"window": "1d", "step": "1s"}, f"more than {MAX_BUCKETS} buckets"),
])
def test_refuses(params, message):
    with pytest.raises(PermanentError, match=message):
        parse_window(params, NOW)


def test_rfc3339_and_json():
    assert rfc3339(NOW) == "2023-11-14T22:13:20.000Z"
    assert Window(NOW, NOW + NS, NS).as_json() == {
        "from_ns": NOW, "to_ns": NOW + NS, "from": "2023-11-14T22:13:20.000Z",
        "to": "2023-11-14T22:13:21.000Z", "step_s": 1.0}
