"""The dashboard reads an https API, trusting the CA given as api_ca_file (not the process's
default trust), under Streamlit's AppTest against a real TLS server."""

from __future__ import annotations

from pathlib import Path

import pytest
import trustme
from streamlit.testing.v1 import AppTest

from seed import APP
from tlskit import TlsServer, make_pki


@pytest.fixture
def tls_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pki = make_pki(tmp_path, monkeypatch)
    server = TlsServer(tmp_path / "data", ["--tls-cert-file", pki.cert,
                                           "--tls-key-file", pki.key]).start()
    # from here on the default trust is another CA: only api_ca_file can make the API trusted
    trustme.CA().cert_pem.write_to_path(str(tmp_path / "other-ca.pem"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "other-ca.pem"))
    monkeypatch.setenv("AGENTSLA_API", server.api_url)
    try:
        yield pki
    finally:
        server.stop()


def test_the_dashboard_trusts_the_api_ca_file(tls_api, monkeypatch):
    monkeypatch.setenv("AGENTSLA_API_CA_FILE", tls_api.ca)
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception and not at.error, [e.value for e in at.error]


def test_without_the_ca_the_dashboard_says_it_cannot_reach_the_api(tls_api, monkeypatch):
    monkeypatch.delenv("AGENTSLA_API_CA_FILE", raising=False)
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception
    assert at.error and all("cannot reach the agentsla API" in e.value for e in at.error)
