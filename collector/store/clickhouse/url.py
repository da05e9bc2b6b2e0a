"""Store URLs: `duckdb`, `chdb:///path`, `clickhouse://user:password@host:8123/database`.

Parsed where the config is loaded, so a bad URL is an error at start naming what is wrong.
Light on purpose (no engine imports): agentsla.config uses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def identifier(name: str) -> str:
    """Return a database or table name fit for SQL text, or raise ValueError."""
    if not _IDENT.fullmatch(name):
        raise ValueError(f"invalid ClickHouse name {name!r}: letters, digits and '_' only")
    return name


SCHEMES = ("duckdb", "chdb", "clickhouse", "clickhouses")


@dataclass(frozen=True)
class StoreURL:
    """Where the store lives: `duckdb`, `chdb:///path` or `clickhouse://...`, parsed."""

    scheme: str
    path: str = ""
    host: str = ""
    port: int = 8123
    user: str = "default"
    password: str = ""
    database: str = "default"
    table: str = "otel_traces"

    @property
    def is_clickhouse(self) -> bool:
        """Tell whether the store is the ClickHouse engine (server or chdb)."""
        return self.scheme != "duckdb"

    def __str__(self) -> str:
        if self.scheme == "duckdb":
            return "duckdb"
        where = self.path if self.scheme == "chdb" else f"{self.host}:{self.port}"
        return f"{self.scheme}://{where}/{self.database}.{self.table}"  # never the password


def parse_store_url(text: str) -> StoreURL:
    """Parse a store URL; raise ValueError saying what is wrong with it."""
    text = text.strip()
    if text in ("", "duckdb"):
        return StoreURL("duckdb")
    parts = urlsplit(text)
    if parts.scheme not in SCHEMES:
        raise ValueError(f"unknown store {text.split(':')[0]!r}; expected duckdb, "
                         f"chdb:///path or clickhouse://user:password@host:8123/database")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    unknown = set(query) - {"table", "database"}
    if unknown:
        raise ValueError(f"unknown store URL parameter {sorted(unknown)[0]!r}; "
                         f"expected table or database")
    if parts.scheme == "chdb":
        if not parts.path or parts.netloc:
            raise ValueError("a chdb store is chdb:///absolute/path (three slashes)")
        return StoreURL("chdb", path=parts.path, database=identifier(
            query.get("database", "default")), table=identifier(
            query.get("table", "otel_traces")))
    if not parts.hostname:
        raise ValueError("a ClickHouse store URL needs a host: clickhouse://host:8123/database")
    try:
        port = parts.port or (8443 if parts.scheme == "clickhouses" else 8123)
    except ValueError as exc:
        raise ValueError(f"bad port in the store URL: {exc}") from None
    database = parts.path.strip("/") or query.get("database", "default")
    return StoreURL(parts.scheme, host=parts.hostname, port=port,
                    user=unquote(parts.username or "default"),
                    password=unquote(parts.password or ""),
                    database=identifier(database),
                    table=identifier(query.get("table", "otel_traces")))
