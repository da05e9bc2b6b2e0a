"""The link between receiver processes and the writer process: normalized batches in, verdicts out.

One Unix-domain stream connection per receiver process, in a directory only this user can
open. Each frame is a 4-byte big-endian length and a pickle. A receiver sends `(id, rows,
rejected)`: the normalized rows of one OTLP request and how many of its spans normalization
rejected; the writer process answers `(id, None)` once the rows are committed, or `(id, (status,
message, retry_after))` for the error the receiver must answer with (429/503 with Retry-After,
as in-process). Only an answer after the commit becomes a 200, so a receiver that dies loses
nothing acknowledged: its clients got no answer and retry (the writer drops the duplicates).
When the connection breaks (the writer process died), every waiting and every later request is
answered 503 with `Connection: close` (WriterGone) and `on_lost` is called.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import pickle
import struct
from typing import Any, Awaitable, Callable

from agentsla.collector.store.writer import Row
from agentsla.errors import AgentslaError, Overloaded, RetryableError, WriterGone

log = logging.getLogger("agentsla.link")

_HEADER = struct.Struct(">I")
_ERRORS: dict[int, type[RetryableError]] = {429: Overloaded, 503: RetryableError}


async def _read_frame(reader: asyncio.StreamReader) -> Any:
    (size,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
    return pickle.loads(await reader.readexactly(size))


def _write_frame(writer: asyncio.StreamWriter, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    writer.write(_HEADER.pack(len(data)) + data)


class WriterLink:
    """Receiver side: submit a request's rows to the writer process and wait for its verdict."""

    def __init__(self, path: str, retry_after: float,
                 on_lost: Callable[[], None] | None = None) -> None:
        self.path = path
        self.retry_after = retry_after
        self.on_lost = on_lost
        self._ids = itertools.count()
        self._waiting: dict[int, asyncio.Future] = {}
        self._writer: asyncio.StreamWriter | None = None
        self._reading: asyncio.Task | None = None
        self.lost = False

    async def connect(self) -> None:
        """Open the connection and start reading verdicts."""
        reader, self._writer = await asyncio.open_unix_connection(self.path)
        self._reading = asyncio.create_task(self._read_verdicts(reader))

    async def submit(self, rows: list[Row], rejected: int = 0) -> None:
        """Return once the writer committed rows; raise the writer's Overloaded/RetryableError."""
        if self.lost or self._writer is None:
            raise WriterGone("the writer process is not running; retry later", self.retry_after)
        request_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        try:
            _write_frame(self._writer, (request_id, rows, rejected))
            await self._writer.drain()
            await future
        except (ConnectionError, OSError):
            raise WriterGone("the writer process went away; retry later",
                             self.retry_after) from None
        finally:
            self._waiting.pop(request_id, None)

    async def _read_verdicts(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                request_id, verdict = await _read_frame(reader)
                future = self._waiting.get(request_id)
                if future is None or future.done():
                    continue
                if verdict is None:
                    future.set_result(None)
                else:
                    status, message, retry_after = verdict
                    future.set_exception(_ERRORS.get(status, RetryableError)(message, retry_after))
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        self._lose()

    def _lose(self) -> None:
        self.lost = True
        log.error("the connection to the writer process is gone; answering 503")
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(WriterGone(
                    "the writer process went away before committing; retry later",
                    self.retry_after))
        if self.on_lost is not None:
            self.on_lost()

    async def close(self) -> None:
        """Close the connection (after the receiver's last request was answered)."""
        if self._reading is not None:
            self._reading.cancel()
            await asyncio.gather(self._reading, return_exceptions=True)
        if self._writer is not None:
            self._writer.close()
            await asyncio.gather(self._writer.wait_closed(), return_exceptions=True)


class LinkServer:
    """Writer side: take batches from receiver processes, submit them, send the verdicts."""

    def __init__(self, path: str, submit: Callable[[list[Row]], Awaitable[None]]) -> None:
        self.path = path
        self.submit = submit
        self.rejected_spans = 0  # spans the receiver processes' normalization rejected
        self.connections = 0  # receiver processes that connected since the start
        self._server: asyncio.AbstractServer | None = None
        self._pending: set[asyncio.Task] = set()

    async def start(self) -> None:
        """Listen on the socket path."""
        self._server = await asyncio.start_unix_server(self._serve, self.path)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                request_id, rows, rejected = await _read_frame(reader)
                self.rejected_spans += rejected
                task = asyncio.create_task(self._answer(writer, request_id, rows))
                self._pending.add(task)
                task.add_done_callback(self._pending.discard)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass  # the receiver process exited; what it has in flight is answered to nobody
        finally:
            writer.close()

    async def _answer(self, writer: asyncio.StreamWriter, request_id: int, rows: list[Row]) -> None:
        verdict = None
        try:
            if rows:
                await self.submit(rows)
        except RetryableError as exc:
            verdict = (exc.status, exc.message, exc.retry_after_s)
        except AgentslaError as exc:  # the writer classifies its own errors as retryable
            verdict = (503, exc.message, 1.0)
        if not writer.is_closing():
            _write_frame(writer, (request_id, verdict))

    async def close(self) -> None:
        """Stop listening once every batch in hand has its verdict."""
        if self._server is not None:
            self._server.close()
        await asyncio.gather(*self._pending, return_exceptions=True)
