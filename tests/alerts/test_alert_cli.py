"""`agentsla alerts check|test|list|silence` end to end through the CLI entry point."""

from __future__ import annotations

import shutil
from pathlib import Path

from agentsla.cli import main

DATA = Path(__file__).parent / "testdata"


def test_check_accepts_good_files(capsys):
    assert main(["alerts", "check", str(DATA / "rules.yaml"), str(DATA / "rules_test.yaml")]) == 0
    assert "OK (1 rules)" in capsys.readouterr().out


def test_check_reports_line_accurate_errors(capsys):
    assert main(["alerts", "check", str(DATA / "bad_rules.yaml"), str(DATA / "routing.yaml")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{DATA / 'bad_rules.yaml'}:5: expr: column 37: hop_error_rate cannot be grouped by 'tenant_id'")
    assert err[1].startswith(f"{DATA / 'bad_rules.yaml'}:9: for: expected a duration")
    assert err[2] == f"{DATA / 'routing.yaml'}:7: route.routes[0].group_wait: expected a duration such as 30s, 15m, 1h30m or 30d"


def test_rule_unit_test_passes(capsys):
    assert main(["alerts", "test", str(DATA / "rules_test.yaml")]) == 0
    assert "SUCCESS (2/2 expectations met)" in capsys.readouterr().out


def test_failing_rule_unit_test_shows_a_diff(capsys):
    assert main(["alerts", "test", str(DATA / "rules_test_failing.yaml")]) == 1
    captured = capsys.readouterr()
    assert "FAILED (0/1 expectations met)" in captured.out
    assert f"FAILED {DATA / 'rules_test_failing.yaml'}:8: alertname ToolErrorRateHigh at eval_time 5m" in captured.err
    diff = captured.err.splitlines()
    assert "--- expected" in diff and "+++ got" in diff
    assert "-    severity: P0" in diff and "+    severity: P1" in diff
    assert "-    summary: Tool search fails 4% of calls" in diff
    assert "+    summary: Tool search fails 5% of calls" in diff


def test_check_and_test_a_copy_elsewhere(tmp_path, capsys):
    for name in ("rules.yaml", "rules_test.yaml"):
        shutil.copy(DATA / name, tmp_path / name)
    assert main(["alerts", "test", str(tmp_path / "rules_test.yaml")]) == 0
