"""GuardedH11Protocol: uvicorn's h11 protocol with a header deadline and a hard connection cap.

Plain uvicorn has two gaps an exposed listener cannot live with. It starts no timer before a
connection's first response, so a client that connects and stays silent, or trickles its
headers a byte at a time (slowloris), holds its slot forever; and `limit_concurrency` counts
those connections, so a few hundred of them make every honest request get 503. It also answers
that 503 without `Retry-After`. Here every request's headers must arrive within `read_timeout`
of the connection opening (or of its first byte, on a kept-alive connection), else the
connection is closed; the body has its own deadline in the receiver (collector/http.py), which
can still answer 408. Connections beyond `max_connections` get 503 with `Retry-After` and
`Connection: close` without reaching the app.
"""

from __future__ import annotations

import asyncio
import math

from uvicorn.protocols.http.h11_impl import H11Protocol


def guarded_protocol(read_timeout: float, max_connections: int,
                     retry_after: float) -> type[H11Protocol]:
    """Return an H11Protocol class enforcing these limits (pass it as uvicorn's `http`)."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {
        "read_timeout": read_timeout, "max_connections": max_connections,
        "retry_after": str(max(1, math.ceil(retry_after)))})


class GuardedH11Protocol(H11Protocol):
    """One HTTP/1.1 connection, closed when its headers are late, refused when over the cap."""

    read_timeout: float = 30.0
    max_connections: int = 1000
    retry_after: str = "1"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Counted per connection below, so that the refusal can carry Retry-After.
        self.limit_concurrency = None
        self._inner_app = self.app
        self.app = self._admit
        self._header_timer: asyncio.TimerHandle | None = None
        self._over_limit = False

    def connection_made(self, transport) -> None:  # type: ignore[override]
        """Register the connection, note whether it is over the cap, start the header clock."""
        super().connection_made(transport)
        self._over_limit = len(self.connections) > self.max_connections
        self._arm()

    def data_received(self, data: bytes) -> None:
        """Feed h11; the header clock runs from the first byte of each request to its headers."""
        if self._header_timer is None and self._awaiting_headers():
            self._arm()
        super().data_received(data)
        if not self._awaiting_headers():
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the timer with the connection."""
        self._disarm()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        """Close at shutdown; an idle connection is aborted, not closed politely.

        A polite TLS close waits for the peer's close_notify, up to asyncio's 30 s SSL
        shutdown timeout: one idle keep-alive exporter would hold `agentsla serve` that long.
        """
        idle = self._awaiting_headers()
        super().shutdown()
        if idle:
            self.transport.abort()

    def _awaiting_headers(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.read_timeout, self._headers_late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self._awaiting_headers() and not self.transport.is_closing():
            self.transport.close()  # no request to answer yet: just hang up, as on keep-alive

    async def _admit(self, scope, receive, send) -> None:
        if not self._over_limit:
            await self._inner_app(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": 503,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"retry-after", self.retry_after.encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body",
                    "body": b"too many connections; retry later\n"})
