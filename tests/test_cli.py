"""Every command answers --help (argparse formats help text, so a stray % would crash it)."""

from __future__ import annotations

import pytest

from agentsla.cli import build_parser, main

COMMANDS = sorted(build_parser()._subparsers._group_actions[0].choices)


def test_every_issue_command_exists() -> None:
    assert {"serve", "dashboard", "simulate", "demo", "report", "findings", "audit-budget",
            "alerts", "incidents"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_explains_and_exits_zero(command: str, capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: agentsla {command}") and len(out.splitlines()) > 3
