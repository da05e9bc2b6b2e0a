"""Configuration of the DingTalk integration (`dingtalk_configs`): `url`, optional `secret`."""

from __future__ import annotations

from agentsla.alerts.notify._robot import RobotConfig, parse_robot


def parse(raw, source: str, path: str) -> RobotConfig:
    """Validate one `dingtalk_configs` item (the robot's `secret` when it signs, `SEC...`)."""
    return parse_robot(raw, source, path, signs=True)
