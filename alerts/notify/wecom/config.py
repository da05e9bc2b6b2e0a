"""Configuration of the WeCom integration (`wecom_configs`): `url` (the key is in it)."""

from __future__ import annotations

from agentsla.alerts.notify._robot import RobotConfig, parse_robot


def parse(raw, source: str, path: str) -> RobotConfig:
    """Validate one `wecom_configs` item (WeCom group robots do not sign)."""
    return parse_robot(raw, source, path, signs=False)
