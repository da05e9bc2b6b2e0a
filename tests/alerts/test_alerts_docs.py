"""docs/alerts.md documents every alerts config key and every metric."""

from pathlib import Path

import pytest

from agentsla.alerts.rules.catalog import METRICS
from agentsla.alerts.config import KEYS

DOC = (Path(__file__).parents[2] / "docs" / "alerts.md").read_text()


@pytest.mark.parametrize("key", sorted(KEYS))
def test_config_key_is_documented(key):
    assert f"| `{key}` |" in DOC


@pytest.mark.parametrize("metric", sorted(METRICS))
def test_metric_is_documented(metric):
    assert f"| `{metric}` |" in DOC
