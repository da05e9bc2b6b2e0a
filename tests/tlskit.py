"""TLS test material: a throwaway PKI made by trustme and a ServerProcess speaking https."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import trustme

from serverproc import ServerProcess


@dataclass
class Pki:
    """PEM files of a test CA, a server certificate for 127.0.0.1 and a client certificate."""

    ca: str
    cert: str
    key: str
    client_cert: str
    client_key: str


def make_pki(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Pki:
    """Write a CA, a server certificate for 127.0.0.1 and a client certificate; trust the CA."""
    ca = trustme.CA()
    server, client = ca.issue_cert("127.0.0.1", "localhost"), ca.issue_cert("agent@example.com")
    files = {"ca": ca.cert_pem, "cert": server.cert_chain_pems[0],
             "key": server.private_key_pem, "client_cert": client.cert_chain_pems[0],
             "client_key": client.private_key_pem}
    for name, blob in files.items():
        blob.write_to_path(str(tmp_path / f"{name}.pem"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    # requests (under the OTLP/HTTP exporter) lets these override its certificate_file
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
    return Pki(**{name: str(tmp_path / f"{name}.pem") for name in files})


class TlsServer(ServerProcess):
    """A ServerProcess whose OTLP/HTTP receiver and API speak https."""

    @property
    def otlp_url(self) -> str:
        """Base URL of the OTLP/HTTP receiver."""
        return f"https://127.0.0.1:{self.http_port}"

    @property
    def api_url(self) -> str:
        """Base URL of the query API."""
        return f"https://127.0.0.1:{self.api_port}"
