"""A slow API for the dashboard tests: the real server behind a loopback proxy that holds one
route's answers back, as a busy server computing a long window does; and waiting for a page's
deferred sections (render.pending) to be filled in."""

from __future__ import annotations

import asyncio
import time

import httpx
from streamlit.testing.v1 import AppTest

#: How render.pending's placeholder starts (the tests look for it).
PENDING_TEXT = "are still being computed by the API"


def slow_route(upstream: str, path: str, delay_s: float, arrivals: list | None = None):
    """An ASGI app forwarding every request to `upstream`, answering `path` after `delay_s`;
    each request's (path, time.monotonic() of arrival) is appended to `arrivals` if given."""
    client = httpx.AsyncClient(base_url=upstream, timeout=60)

    async def app(scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        if arrivals is not None:
            arrivals.append((scope["path"], time.monotonic()))
        if scope["path"] == path:
            await asyncio.sleep(delay_s)
        answer = await client.request(scope["method"], scope["path"],
                                      params=scope["query_string"].decode())
        await send({"type": "http.response.start", "status": answer.status_code,
                    "headers": [(b"content-type", answer.headers.get("content-type", "").encode())]})
        await send({"type": "http.response.body", "body": answer.content})

    return app


def answer(server, path: str, timeout_s: float = 60.0, **params) -> dict:
    """The API's own answer, the ground truth, without the 10 s cap of ServerProcess.api
    (findings take longer than that on a loaded machine)."""
    return httpx.get(f"{server.api_url}{path}", params=params, timeout=timeout_s).json()


def pending_infos(at: AppTest) -> list[str]:
    """The "still being computed" placeholders the page shows."""
    return [i.value for i in at.info if PENDING_TEXT in i.value]


def settle(at: AppTest, timeout_s: float = 60.0) -> AppTest:
    """Re-run the page (as its polling fragment does in a browser) until no section is pending."""
    deadline = time.monotonic() + timeout_s
    while pending_infos(at):
        assert time.monotonic() < deadline, f"still pending after {timeout_s} s"
        time.sleep(0.2)
        at.run()
    return at
