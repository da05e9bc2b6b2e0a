"""A small HTTP message broker: producers post messages, consumers long-poll and post results."""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse


class Broker:
    """Messages waiting, and the results posted for them, guarded by one condition."""

    def __init__(self) -> None:
        """Start empty."""
        self.waiting: deque[dict] = deque()
        self.results: dict[str, dict] = {}
        self.ids = itertools.count(1)
        self.enqueued = 0
        self.changed = threading.Condition()

    def put(self, message: dict) -> str:
        """Queue message, stamped with the broker's time; return its id."""
        with self.changed:
            message_id = str(next(self.ids))
            self.waiting.append({**message, "id": message_id, "enqueued_at": time.time()})
            self.enqueued += 1
            self.changed.notify_all()
            return message_id

    def take(self, wait_s: float) -> dict | None:
        """Pop the oldest message, waiting up to wait_s for one."""
        with self.changed:
            self.changed.wait_for(lambda: self.waiting, timeout=wait_s)
            return self.waiting.popleft() if self.waiting else None

    def answer(self, message_id: str, result: dict) -> None:
        """Store the result of a message."""
        with self.changed:
            self.results[message_id] = result
            self.changed.notify_all()

    def result(self, message_id: str, wait_s: float) -> dict | None:
        """Return the result of a message, waiting up to wait_s for it."""
        with self.changed:
            self.changed.wait_for(lambda: message_id in self.results, timeout=wait_s)
            return self.results.get(message_id)

    def stats(self) -> dict:
        """Return how many messages were queued, are waiting, and were answered."""
        with self.changed:
            return {"enqueued": self.enqueued, "waiting": len(self.waiting),
                    "answered": len(self.results)}


def handler(broker: Broker) -> type[BaseHTTPRequestHandler]:
    """Return the request handler of broker's HTTP API."""
    class Handler(BaseHTTPRequestHandler):
        def _reply(self, status: int, payload: object = None) -> None:
            body = b"" if payload is None else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            parts = urlparse(self.path).path.strip("/").split("/")
            if parts == ["messages"]:
                self._reply(201, {"id": broker.put(body)})
            elif len(parts) == 2 and parts[0] == "results":
                broker.answer(parts[1], body)
                self._reply(204)
            else:
                self._reply(404)

        def do_GET(self) -> None:
            url = urlparse(self.path)
            wait_s = float(parse_qs(url.query).get("wait", ["0"])[0])
            parts = url.path.strip("/").split("/")
            if parts == ["messages"]:
                message = broker.take(wait_s)
                self._reply(200 if message else 204, message)
            elif len(parts) == 2 and parts[0] == "results":
                result = broker.result(parts[1], wait_s)
                self._reply(200 if result else 204, result)
            elif parts == ["stats"]:
                self._reply(200, broker.stats())
            else:
                self._reply(404)

        def log_message(self, *args: object) -> None:
            """Keep the chain's output quiet."""
    return Handler


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    server = ThreadingHTTPServer(("127.0.0.1", parser.parse_args().port), handler(Broker()))
    server.daemon_threads = True
    server.serve_forever(0.1)
