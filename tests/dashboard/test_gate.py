"""The dashboard's login gate and its token errors, under Streamlit's AppTest against real
servers; and `agentsla dashboard` refusing to bind beyond loopback without a login."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from agentsla.cli import main
from agentsla.commands.dashboard import check_login, is_loopback
from agentsla.errors import ConfigError
from seed import APP
from serverproc import ServerProcess

TIMEOUT = 60
PASSWORD = "s3cret-gate"


def _app(monkeypatch, api_url: str, token: str | None = None, password: str | None = None):
    monkeypatch.setenv("AGENTSLA_API", api_url)
    for name, value in (("AGENTSLA_API_TOKEN", token), ("AGENTSLA_DASHBOARD_PASSWORD", password)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    return AppTest.from_file(str(APP), default_timeout=TIMEOUT)


def _sign_in(at: AppTest, password: str) -> AppTest:
    at.text_input(key="_agentsla_gate_password").input(password)
    return at.button[0].click().run()


def test_no_page_renders_before_the_password(seeded, monkeypatch):
    at = _app(monkeypatch, seeded.api_url, password=PASSWORD)
    at.run()
    assert not at.exception
    assert [t.label for t in at.text_input] == ["Password"]
    assert not at.metric and not at.table                  # nothing from the API shown
    _sign_in(at, "guess")
    assert [e.value for e in at.error] == ["Wrong password."]
    assert not at.metric
    _sign_in(at, PASSWORD)
    assert not at.exception and not at.error
    assert any(m.label == "Task success" for m in at.metric)   # the overview, at last


def test_without_a_password_there_is_no_gate(seeded, monkeypatch):
    at = _app(monkeypatch, seeded.api_url)
    at.run()
    assert not at.text_input and any(m.label == "Task success" for m in at.metric)


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    """A server with an admin token and a tenant token for acme."""
    folder: Path = tmp_path_factory.mktemp("guarded")
    (folder / "tokens.yaml").write_text(yaml.safe_dump({"acme": "tok-acme", "*": "tok-admin"}))
    proc = ServerProcess(folder / "data",
                         extra_args=["--api-tokens-file", str(folder / "tokens.yaml")]).start()
    try:
        yield proc
    finally:
        proc.stop()


def test_a_missing_or_wrong_token_is_a_message(guarded, monkeypatch):
    for token in (None, "tok-wrong"):
        at = _app(monkeypatch, guarded.api_url, token=token)
        at.run()
        assert not at.exception
        errors = [e.value for e in at.error]
        assert errors and all("refused the dashboard's token" in e for e in errors), errors


def test_the_right_token_shows_the_page(guarded, monkeypatch):
    at = _app(monkeypatch, guarded.api_url, token="tok-admin")
    at.run()
    assert not at.exception and not at.error and not at.warning


def test_a_tenant_token_beyond_its_tenant_is_a_message(guarded, monkeypatch):
    at = _app(monkeypatch, guarded.api_url, token="tok-acme")
    at.run()                                                    # the overview asks for SLOs
    assert not at.exception and not at.error
    [warning] = [w.value for w in at.warning]
    assert "may not see this view" in warning and "acme" in warning


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("::1", True), ("localhost", True), ("127.0.0.5", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.10", False), ("dash.example", False)])
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


def test_binding_beyond_loopback_needs_a_password(capsys):
    assert main(["dashboard", "--host", "0.0.0.0", "--port", "0"]) == 2
    assert "beyond loopback, without a login" in capsys.readouterr().err
    check_login("0.0.0.0", PASSWORD)                           # with one it may start
    check_login("127.0.0.1", "")
    with pytest.raises(ConfigError, match="dashboard_password"):
        check_login("::", "")
