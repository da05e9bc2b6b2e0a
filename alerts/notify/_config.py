"""Helpers the integration configs share: required keys, types, and errors naming the key."""

from __future__ import annotations

from typing import Any

from agentsla.yamlsrc import SourceError, line_of
from agentsla.config import parse_duration


class Section:
    """One integration's raw config with its path, for error messages naming the key."""

    def __init__(self, raw: Any, source: str, path: str, allowed: set[str]) -> None:
        if not isinstance(raw, dict):
            raise SourceError(source, getattr(raw, "line", 0), f"{path} must be a mapping")
        self.raw, self.source, self.path = raw, source, path
        for key in raw:
            if key not in allowed:
                raise self.error(key, f"unknown key; expected one of {', '.join(sorted(allowed))}")

    def error(self, key: str, message: str) -> SourceError:
        """An error at a key."""
        return SourceError(self.source, line_of(self.raw, key), f"{self.path}.{key}: {message}")

    def str(self, key: str, default: str | None = None, required: bool = False) -> str | None:
        """A string value."""
        value = self.raw.get(key, default)
        if required and not value:
            raise self.error(key, "is required")
        return None if value is None else str(value)

    def url(self, key: str, default: str | None = None) -> str:
        """A required http(s) URL."""
        value = self.str(key, default, required=True) or ""
        if not value.startswith(("http://", "https://")):
            raise self.error(key, f"{value!r} is not an http(s) URL")
        return value

    def bool(self, key: str, default: bool) -> bool:
        """A boolean."""
        value = self.raw.get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"{value!r} must be true or false")
        return value

    def int(self, key: str, default: int) -> int:
        """A whole number >= 0."""
        value = self.raw.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.error(key, f"{value!r} must be a whole number >= 0")
        return value

    def duration(self, key: str, default: float) -> float:
        """A duration in seconds."""
        try:
            return parse_duration(self.raw.get(key, default))
        except ValueError as exc:
            raise self.error(key, str(exc)) from None

    def list(self, key: str, required: bool = False) -> list[str]:
        """A string or a list of strings."""
        value = self.raw.get(key) or []
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if required and not value:
            raise self.error(key, "is required")
        return [str(v) for v in value]
