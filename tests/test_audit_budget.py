"""The static timeout-chain audit (agentsla/budget_audit.py) and `agentsla audit-budget`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentsla.budget_audit import ChainError, Hop, audit, load_chain, parse_chain, worst_case
from agentsla.cli import main

CHAINS = Path(__file__).parent / "data" / "chains"


def _rules(name: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for v in audit(load_chain(CHAINS / f"{name}.yaml")):
        found.setdefault(v.rule, []).append(v.message)
    return found


def test_retried_read_timeouts_under_gateway_and_scheduler_are_flagged():
    found = _rules("retried_read_timeouts")
    assert set(found) == {"missing_timeout", "inner_exceeds_caller", "calls_exceed_limit",
                          "timeout_retried"}
    assert found["missing_timeout"] == [
        "worker: no timeout: it waits forever on a hung dependency; set one that fits its "
        "caller's budget"]
    (inner,) = found["inner_exceeds_caller"]
    assert "3 attempts × (10 s connect + 45 s read) = 165 s > the 30 s scheduler allows" in inner
    assert "tightest of gateway 60 s, scheduler 30 s" in inner
    (calls,) = found["calls_exceed_limit"]
    assert "5 × model 165 s + 5 × search 10 s = 875 s > the 30 s scheduler allows" in calls
    assert "2 retries × 45 s = 90 s" in found["timeout_retried"][0]


def test_one_connect_retry_that_overflows_the_worker_is_flagged():
    found = _rules("connect_retry_too_slow")
    assert set(found) == {"inner_exceeds_caller"}
    assert ("model: worst case 3 s failed connect + (3 s connect + 8 s read) = 14 s > the 10 s "
            "worker allows") in found["inner_exceeds_caller"][0]


def test_the_fixed_chain_passes():
    assert _rules("connect_retry_fits") == {}


WORST_CASES = [
    # (hop, worst case in s): connect C, read R, attempts A
    # no retry: one attempt, connect + read
    (Hop("m", 1, connect_ms=10_000, read_ms=45_000), 55),
    # retries configured but nothing to retry on: still one attempt
    (Hop("m", 1, connect_ms=10_000, read_ms=45_000, attempts=3), 55),
    # timeouts retried: A × (C + R)
    (Hop("m", 1, connect_ms=10_000, read_ms=45_000, attempts=3, retry_on=("timeout",)), 165),
    # ... plus the waits between attempts
    (Hop("m", 1, connect_ms=10_000, read_ms=45_000, attempts=3, retry_on=("timeout",),
         backoff_ms=1_000), 167),
    # exponential backoff 1 s, 2 s, capped at 3 s: 1 + 2 + 3
    (Hop("m", 1, timeout_ms=5_000, attempts=4, retry_on=("server_error",), backoff_ms=1_000,
         backoff_multiplier=2, max_backoff_ms=3_000), 26),
    # connection errors only: (A - 1) × C + C + R
    (Hop("m", 1, connect_ms=3_000, read_ms=8_000, attempts=2, retry_on=("connection_error",)), 14),
    (Hop("m", 1, connect_ms=2_000, read_ms=8_000, attempts=3, retry_on=("connection_error",)), 14),
    # a single overall timeout cannot tell connect from read: every attempt may take it all
    (Hop("m", 1, timeout_ms=10_000, attempts=2, retry_on=("connection_error",)), 20),
    # an overall timeout caps connect + read
    (Hop("m", 1, timeout_ms=30_000, connect_ms=10_000, read_ms=45_000), 30),
]


@pytest.mark.parametrize("hop, seconds", WORST_CASES)
def test_worst_case_formula(hop, seconds):
    assert worst_case(hop).ms == seconds * 1000


def test_no_read_timeout_is_unbounded():
    assert worst_case(Hop("m", 1, connect_ms=10_000)) is None


MALFORMED = [
    # (file, line:column the error names, words of the message)
    ("bad_duration.yaml", "8:19", "bad read_timeout '45 seconds'"),
    ("bad_yaml.yaml", "5:4", "not valid YAML"),
    ("unknown_key.yaml", "4:5", "unknown key 'retires'"),
]


@pytest.mark.parametrize("name, where, words", MALFORMED)
def test_malformed_file_names_the_line(name, where, words):
    with pytest.raises(ChainError) as err:
        load_chain(CHAINS / name)
    assert err.value.message.startswith(f"{CHAINS / name}:{where}: ")
    assert words in err.value.message


@pytest.mark.parametrize("text, where, words", [
    # retries and attempts together are ambiguous
    ("chain:\n  - name: gw\n    retries: 1\n    attempts: 2\n", "4:15", "not both"),
    # a duplicate key would silently win in plain YAML
    ("chain:\n  - name: gw\n    timeout: 1s\n    timeout: 2s\n", "4:5", "duplicate key"),
    # the chain is required
    ("calls: []\n", "1:1", "missing `chain`"),
    ("chain: gateway\n", "1:8", "chain must be a list"),
])
def test_malformed_text(text, where, words):
    with pytest.raises(ChainError) as err:
        parse_chain(text, "c.yaml")
    assert err.value.message.startswith(f"c.yaml:{where}: ") and words in err.value.message


def test_chain_hops_must_shrink_inwards():
    chain = parse_chain("chain:\n  - {name: gateway, timeout: 10s}\n"
                        "  - {name: worker, timeout: 20s}\n")
    (v,) = audit(chain)
    assert v.rule == "inner_exceeds_caller" and v.hop == "worker" and v.line == 3
    assert "worker: worst case 20 s > the 10 s gateway allows" in v.message


@pytest.mark.parametrize("name, code", [
    ("retried_read_timeouts.yaml", 1),
    ("connect_retry_too_slow.yaml", 1),
    ("connect_retry_fits.yaml", 0),
    ("bad_yaml.yaml", 2),
    ("missing.yaml", 2),
])
def test_cli_exit_codes(name, code, capsys):
    assert main(["audit-budget", str(CHAINS / name)]) == code
    out, err = capsys.readouterr()
    if code == 2:
        assert err.startswith("agentsla audit-budget: error: ") and not out


def test_cli_json(capsys):
    assert main(["audit-budget", "--json", str(CHAINS / "connect_retry_too_slow.yaml")]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False
    assert [v["rule"] for v in doc["violations"]] == ["inner_exceeds_caller"]
    assert doc["violations"][0]["worst_ms"] == 14_000 and doc["violations"][0]["limit_ms"] == 10_000
    model = doc["hops"][-1]
    assert model["worst_case"] == "3 s failed connect + (3 s connect + 8 s read) = 14 s"
