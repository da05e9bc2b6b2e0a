"""API tokens: the admin token sees every tenant; a tenant's token sees only that tenant.

Tokens come from `api_token` (an admin token, as a value) and from `api_tokens_file`, a YAML
mapping of tenant to token(s) where the tenant `'*'` marks admin tokens:

    acme: [tok-acme-1, tok-acme-2]
    globex: tok-globex
    "*": tok-ops

A presented token is compared with every configured one in constant time (hmac.compare_digest,
no early exit), so timing tells nothing about which token, or how much of one, matched.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import yaml

from agentsla.config import ServerConfig
from agentsla.errors import ConfigError, Forbidden, Unauthorized

ADMIN = "*"


@dataclass(frozen=True)
class Principal:
    """Who a request speaks for: a tenant, or None for an admin."""

    tenant: str | None

    @property
    def admin(self) -> bool:
        """Tell whether the principal sees every tenant."""
        return self.tenant is None

    def require_admin(self, what: str) -> None:
        """Refuse a tenant token for `what` (data or actions spanning every tenant)."""
        if not self.admin:
            raise Forbidden(f"{what} needs an admin token; this token is scoped to tenant "
                            f"{self.tenant!r}")

    def tenant_filter(self, asked: str | None) -> str | None:
        """The tenant_id a question must use: the token's own (403 when another is asked)."""
        if self.admin:
            return asked
        if asked not in (None, "", self.tenant):
            raise Forbidden(f"this token may only see tenant {self.tenant!r}, not {asked!r}")
        return self.tenant

    def sees(self, labels: Mapping[str, Any]) -> bool:
        """Tell whether a labelled thing (alert, incident, silence) belongs to this principal."""
        return self.admin or labels.get("tenant_id") == self.tenant


OPEN = Principal(None)  # no token configured: every request is an admin


class Tokens:
    """The configured tokens and the tenant each speaks for."""

    def __init__(self, tokens: Mapping[str, str | None]) -> None:
        self._tokens = [(t.encode(), tenant) for t, tenant in tokens.items()]

    @classmethod
    def from_config(cls, server: ServerConfig) -> "Tokens":
        """Read api_token and api_tokens_file (a bad file is a ConfigError at start)."""
        tokens: dict[str, str | None] = {}
        if server.api_tokens_file:
            tokens.update(read_tokens_file(server.api_tokens_file))
        if server.api_token:
            tokens[server.api_token] = None
        return cls(tokens)

    @property
    def required(self) -> bool:
        """Tell whether requests must present a token."""
        return bool(self._tokens)

    def principal(self, authorization: str) -> Principal:
        """Who an `Authorization` header speaks for (401 without a known bearer token)."""
        if not self._tokens:
            return OPEN
        scheme, _, given = authorization.partition(" ")
        presented = given.strip().encode()
        found: Principal | None = None
        for token, tenant in self._tokens:  # every token is compared: no early exit
            if hmac.compare_digest(presented, token) and scheme.lower() == "bearer":
                found = Principal(tenant)
        if found is None:
            raise Unauthorized("missing or wrong bearer token (send `Authorization: Bearer "
                               "<token>`)")
        return found


def read_tokens_file(path: str | Path) -> dict[str, str | None]:
    """Parse a tokens file into token → tenant (None for admin tokens)."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise ConfigError(f"api_tokens_file {path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"api_tokens_file {path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not data:
        raise ConfigError(f"api_tokens_file {path}: expected a mapping of tenant to token(s)")
    out: dict[str, str | None] = {}
    for tenant, value in data.items():
        listed = value if isinstance(value, list) else [value]
        if not str(tenant).strip() or not listed or not all(
                isinstance(t, str) and t.strip() for t in listed):
            raise ConfigError(f"api_tokens_file {path}: tenant {tenant!r} needs a non-empty "
                              "token or list of tokens")
        for token in listed:
            if token in out:
                raise ConfigError(f"api_tokens_file {path}: a token of {tenant!r} is also "
                                  "listed for another tenant")
            out[token] = None if str(tenant) == ADMIN else str(tenant)
    return out
