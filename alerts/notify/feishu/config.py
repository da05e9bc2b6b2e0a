"""Configuration of the Feishu / Lark integration (`feishu_configs`): `url`, optional `secret`."""

from __future__ import annotations

from agentsla.alerts.notify._robot import RobotConfig, parse_robot


def parse(raw, source: str, path: str) -> RobotConfig:
    """Validate one `feishu_configs` item (the bot's `secret` when signature checking is on)."""
    return parse_robot(raw, source, path, signs=True)
