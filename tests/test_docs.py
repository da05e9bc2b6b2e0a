"""Every setting is documented, with its flag and environment variable (as Datasette does)."""

from pathlib import Path

import pytest

from agentsla.config import SETTINGS

DOC = (Path(__file__).parents[1] / "docs" / "configuration.md").read_text()


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_setting_is_documented(setting) -> None:
    row = next((line for line in DOC.splitlines() if line.startswith(f"| `{setting.name}` |")), "")
    assert setting.flag in row and setting.env_var in row, f"{setting.name} missing from docs"
