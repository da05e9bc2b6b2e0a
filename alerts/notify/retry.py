"""The shared Retrier: classifies delivery results and owns the backoff schedule.

5xx, 429, timeouts and connection errors are retryable; other 4xx are not (the request itself
is wrong, so sending it again cannot help), as Alertmanager's notify/util.go does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import httpx


@dataclass(frozen=True)
class Retrier:
    """Backoff (exponential, capped, optional jitter) and status classification."""

    initial_s: float = 1.0
    max_s: float = 300.0
    factor: float = 2.0
    jitter: float = 0.0  # fraction of the delay added at random; 0 keeps tests exact

    def backoff(self, attempts: int) -> float:
        """Seconds to wait after `attempts` failed attempts (1 = after the first failure)."""
        delay = min(self.initial_s * self.factor ** max(attempts - 1, 0), self.max_s)
        return delay * (1 + random.random() * self.jitter) if self.jitter else delay

    @staticmethod
    def check(status: int, body: str = "", what: str = "receiver") -> tuple[bool, str | None]:
        """Classify an HTTP status: (retryable, error), error None on 2xx."""
        if 200 <= status < 300:
            return False, None
        message = f"{what} answered HTTP {status}" + (f": {body[:200]}" if body else "")
        return (status == 429 or status >= 500), message

    @staticmethod
    def from_exception(exc: BaseException, what: str = "receiver") -> tuple[bool, str]:
        """Classify an exception raised while sending: transport problems are retryable."""
        if isinstance(exc, (httpx.TransportError, OSError, TimeoutError)):
            return True, f"cannot reach {what}: {type(exc).__name__}: {exc}"
        return False, f"{what} failed: {type(exc).__name__}: {exc}"


async def post_json(client: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str],
                    what: str, timeout: float) -> tuple[bool, str | None]:
    """POST a body and classify the answer with the Retrier."""
    try:
        response = await client.post(url, content=body, timeout=timeout,
                                     headers={"content-type": "application/json", **headers})
    except Exception as exc:  # classified, never raised: the retry stage decides
        return Retrier.from_exception(exc, what)
    return Retrier.check(response.status_code, response.text, what)
