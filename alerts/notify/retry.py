"""The shared Retrier: classifies delivery results and owns the backoff schedule.

5xx, 429, timeouts and connection errors are retryable; other 4xx are not (the request itself
is wrong, so sending it again cannot help), as Alertmanager's notify/util.go does. Delays are
jittered, so receivers that come back are not hit by every queued retry at once, and a 429 or
503 carrying `Retry-After` is not retried before the receiver asked (up to `max_s`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

import httpx

#: Default share of a delay taken off at random (a delay d becomes one in [d/2, d]).
DEFAULT_JITTER = 0.5


class Failure(str):
    """A delivery error message that may carry the receiver's `Retry-After` header."""

    retry_after: str | None

    def __new__(cls, message: str, retry_after: str | None = None) -> "Failure":
        failure = super().__new__(cls, message)
        failure.retry_after = retry_after
        return failure


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds a `Retry-After` header asks to wait at `now` (delay-seconds or an HTTP date)."""
    text = (value or "").strip()
    if not text:
        return None
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None  # unreadable: fall back to the backoff schedule
    return max(0.0, when - now)


@dataclass(frozen=True)
class Retrier:
    """Backoff (exponential, capped, jittered) and status classification."""

    initial_s: float = 1.0
    max_s: float = 300.0
    factor: float = 2.0
    jitter: float = DEFAULT_JITTER  # share of the delay taken off at random; 0 keeps it exact

    def backoff(self, attempts: int) -> float:
        """Seconds to wait after `attempts` failed attempts (1 = after the first failure)."""
        delay = min(self.initial_s * self.factor ** max(attempts - 1, 0), self.max_s)
        return delay * (1 - random.random() * self.jitter) if self.jitter else delay

    def delay(self, attempts: int, error: str | None = None, now: float = 0.0) -> float:
        """Seconds from `now` to the next attempt: the backoff, or the receiver's Retry-After
        (capped at max_s) if that is later."""
        asked = parse_retry_after(getattr(error, "retry_after", None), now)
        backoff = self.backoff(attempts)
        return backoff if asked is None else max(backoff, min(asked, self.max_s))

    @staticmethod
    def check(status: int, body: str = "", what: str = "receiver",
              retry_after: str | None = None) -> tuple[bool, str | None]:
        """Classify an HTTP status: (retryable, error), error None on 2xx."""
        if 200 <= status < 300:
            return False, None
        message = f"{what} answered HTTP {status}" + (f": {body[:200]}" if body else "")
        return (status == 429 or status >= 500), Failure(message, retry_after)

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
    return Retrier.check(response.status_code, response.text, what,
                         response.headers.get("retry-after"))
