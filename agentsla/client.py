"""ApiClient: the small HTTP client of the query API, used by the CLI and the dashboard."""

from __future__ import annotations

import ssl
from typing import Any, Mapping
from urllib.parse import quote

import httpx

from agentsla.config import Config
from agentsla.errors import (AgentslaError, ConfigError, Forbidden, NotFound, PermanentError,
                             RetryableError, Unauthorized)

_ERRORS_BY_STATUS = {400: PermanentError, 401: Unauthorized, 403: Forbidden, 404: NotFound,
                     503: RetryableError}


class ApiClient:
    """Call the agentsla query API; every method returns the decoded JSON (or text)."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 30.0,
                 transport: httpx.BaseTransport | None = None, ca_file: str = "",
                 cert_file: str = "", key_file: str = "") -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout,
                                  transport=transport,
                                  verify=_tls_context(ca_file, cert_file, key_file))

    @classmethod
    def from_config(cls, config: Config, **kwargs: Any) -> "ApiClient":
        """Build a client for config.client.api with its token and TLS files, if set."""
        tls = {"ca_file": config.client.api_ca_file, "cert_file": config.client.api_cert_file,
               "key_file": config.client.api_key_file}
        return cls(config.client.api, token=config.server.api_token or None, **tls, **kwargs)

    def close(self) -> None:
        """Close the underlying connections."""
        self._http.close()

    def __enter__(self) -> "ApiClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, path: str, params: Mapping[str, Any] | None = None, text: bool = False) -> Any:
        """GET one API path; raise AgentslaError carrying the server's message on failure."""
        clean = {k: v for k, v in (params or {}).items() if v is not None and v != ""}
        response = self._send("GET", path, params=clean)
        if text:
            return response.text
        try:
            return response.json()
        except ValueError:
            raise AgentslaError(f"the agentsla API at {self.base_url} answered {path} with "
                                "something that is not JSON; is --api the query API port?"
                                ) from None

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """POST a JSON body to one API path; errors as in get()."""
        return self._send("POST", path, json=dict(body)).json()

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            reason = str(exc) or type(exc).__name__
            raise AgentslaError(f"cannot reach the agentsla API at {self.base_url}: {reason}; "
                                "is `agentsla serve` running?") from None
        if response.status_code >= 400:
            raise _error_from(response)
        return response

    def health(self) -> dict:
        """GET /api/v1/health."""
        return self.get("/api/v1/health")

    def sla(self, **params: Any) -> dict:
        """GET /api/v1/sla (from, to, window, step, group_by, task_type, tenant_id, service_name)."""
        return self.get("/api/v1/sla", params)

    def hops(self, **params: Any) -> dict:
        """GET /api/v1/hops (from, to, window, step, hop_kind, task_type, tenant_id, service_name,
        limit, series_limit)."""
        return self.get("/api/v1/hops", params)

    def root_causes(self, **params: Any) -> dict:
        """GET /api/v1/root-causes (from, to, window, step, task_type, tenant_id, service_name,
        limit)."""
        return self.get("/api/v1/root-causes", params)

    def budget(self, **params: Any) -> dict:
        """GET /api/v1/budget (from, to, window, task_type, tenant_id, service_name)."""
        return self.get("/api/v1/budget", params)

    def slo(self, **params: Any) -> dict:
        """GET /api/v1/slo (to, task_type)."""
        return self.get("/api/v1/slo", params)

    def findings(self, **params: Any) -> dict:
        """GET /api/v1/findings (window parameters, kind)."""
        return self.get("/api/v1/findings", params)

    def incidents(self, **params: Any) -> dict:
        """GET /api/v1/incidents (state, from, to, limit)."""
        return self.get("/api/v1/incidents", params)

    def incident(self, incident_id: str) -> dict:
        """GET /api/v1/incidents/{id}: the agentsla.incident/2 document."""
        return self.get(f"/api/v1/incidents/{quote(incident_id, safe='')}")

    def incident_export(self, incident_id: str, format: str = "json") -> str:
        """GET /api/v1/incidents/{id}/timeline?format=json|csv|md|html as text."""
        return self.get(f"/api/v1/incidents/{quote(incident_id, safe='')}/timeline",
                        {"format": format}, text=True)

    def ack_incident(self, incident_id: str, author: str, source: str = "api") -> dict:
        """POST /api/v1/incidents/{id}/ack."""
        return self.post(f"/api/v1/incidents/{quote(incident_id, safe='')}/ack",
                         {"author": author, "source": source})

    def note_incident(self, incident_id: str, kind: str, author: str, text: str,
                      source: str = "api", **extra: Any) -> dict:
        """POST /api/v1/incidents/{id}/notes (kind note|change|mitigated; extra: at, labels)."""
        body = {"kind": kind, "author": author, "text": text, "source": source, **extra}
        return self.post(f"/api/v1/incidents/{quote(incident_id, safe='')}/notes", body)

    def tasks(self, **params: Any) -> dict:
        """GET /api/v1/tasks (window parameters, outcome, task_type, tenant_id, service_name,
        ffh_kind, ffh_name, limit)."""
        return self.get("/api/v1/tasks", params)

    def task(self, task_id: str) -> dict:
        """GET /api/v1/tasks/{task_id}: the task, its first failing hop and span tree."""
        return self.get(f"/api/v1/tasks/{quote(task_id, safe='')}")

    def trace(self, trace_id: str) -> dict:
        """GET /api/v1/traces/{trace_id}: the trace's span tree."""
        return self.get(f"/api/v1/traces/{quote(trace_id, safe='')}")

    def alerts(self, **params: Any) -> dict:
        """GET /api/v1/alerts (state, history): current alerts, rule health, history."""
        return self.get("/api/v1/alerts", params)

    def metrics(self) -> str:
        """GET /metrics as Prometheus text."""
        return self.get("/metrics", text=True)

    def openapi(self) -> dict:
        """GET /api/v1/openapi.json."""
        return self.get("/api/v1/openapi.json")


def _tls_context(ca_file: str, cert_file: str, key_file: str) -> ssl.SSLContext | bool:
    """Verify an https API against ca_file (else the default trust), presenting cert_file."""
    if not (ca_file or cert_file):
        return True  # httpx's default trust (it honours SSL_CERT_FILE)
    try:
        context = ssl.create_default_context(cafile=ca_file or None)
        if cert_file:
            context.load_cert_chain(cert_file, key_file or None)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"cannot use api_ca_file {ca_file!r}, api_cert_file {cert_file!r}, "
                          f"api_key_file {key_file!r}: {exc}") from None
    return context


def _error_from(response: httpx.Response) -> AgentslaError:
    try:
        message = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        message = response.text.strip()[:200] or response.reason_phrase
    cls = _ERRORS_BY_STATUS.get(response.status_code, AgentslaError)
    return cls(f"{message} (HTTP {response.status_code})")
