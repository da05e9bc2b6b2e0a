"""Receiver processes: OTLP/HTTP decoding and normalization outside the writer's interpreter.

`agentsla serve --receivers N` binds the OTLP/HTTP port once, in the writer process, and starts
N receiver processes that share that listening socket (the kernel hands each connection to one
of them); for OTLP/gRPC each receiver listens on the gRPC port with SO_REUSEPORT, the writer
process holding the port bound (not listening) so that nobody else takes it. Each receiver
reads, decompresses, decodes and normalizes requests on its own interpreter and core, then
hands the rows to the writer process over a WriterLink (collector/receivers/link.py) and
answers only after the writer's verdict: 200 once committed, or the writer's 429/503 with
Retry-After. The writer process keeps the pipeline, the API and alerts.

A receiver process that dies is started again (its clients got no answer and retry); when the
writer process goes away, receivers answer 503 with `Connection: close` (their clients reconnect,
to the restarted server) and exit within `_LOST_GRACE_S`, so that a restarted server owns the
port alone.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import math
import multiprocessing
import os
import shutil
import signal
import socket
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

from agentsla.collector.receivers.export import LinkedExporter
from agentsla.collector.receivers.grpc import start_grpc_server
from agentsla.collector.receivers.http import create_otlp_http_app
from agentsla.collector.receivers.link import LinkServer, WriterLink
from agentsla.collector.store.writer import Row
from agentsla.config import Config
from agentsla.listeners import grpc_credentials, http_server

log = logging.getLogger("agentsla.receivers")

_STOP_TIMEOUT_S = 15.0
_RESTART_DELAY_S = 1.0
# After the writer process died nothing can commit: connections get this long to take their
# 503 before the receiver exits (a client trickling a body, or one whose connection the
# shutdown's sweep missed, must not keep the process, and the old server's port, alive).
_LOST_GRACE_S = 2.0


class ReceiverPool:
    """The writer process's side: the shared OTLP/HTTP socket, the link, the N processes."""

    def __init__(self, config: Config, count: int) -> None:
        self.config = config
        self.count = count
        self.restarts = 0
        host = config.server.host
        self._socket = _bind_shared(host, config.server.otlp_http_port, config.server.port_wait)
        try:
            self._grpc_hold = _hold_port(host, config.server.otlp_grpc_port)
        except OSError:
            self._socket.close()
            raise
        self.grpc_port = self._grpc_hold.getsockname()[1]
        self._dir = Path(tempfile.mkdtemp(prefix="agentsla-receivers-"))  # mode 0700
        self._link: LinkServer | None = None
        self._processes: list[Any] = []
        self._context = multiprocessing.get_context("spawn")
        self._watch: asyncio.Task | None = None
        self._stopping = False

    async def start(self, submit: Callable[[list[Row]], Awaitable[None]],
                    timeout: float = 60.0) -> None:
        """Serve the link, start the processes, and wait until each one has connected."""
        self._link = LinkServer(str(self._dir / "writer.sock"), submit)
        await self._link.start()
        self._processes = [self._spawn() for _ in range(self.count)]
        deadline = time.monotonic() + timeout
        while self._link.connections < self.count:
            dead = [p for p in self._processes if p.exitcode is not None]
            if dead or time.monotonic() > deadline:
                await self.stop()
                raise RuntimeError(f"a receiver process did not start (exit code "
                                   f"{dead[0].exitcode if dead else 'none'}); see its log")
            await asyncio.sleep(0.05)
        self._watch = asyncio.create_task(self._restart_dead())

    def _spawn(self):
        per_process = math.ceil(self.config.server.max_connections / self.count)
        process = self._context.Process(
            target=run_receiver, name="agentsla-receiver", daemon=True,
            args=(self.config, self._socket, self.grpc_port, str(self._dir / "writer.sock"),
                  per_process))
        process.start()
        return process

    async def _restart_dead(self) -> None:
        while not self._stopping:
            await asyncio.sleep(_RESTART_DELAY_S)
            for i, process in enumerate(self._processes):
                if process.exitcode is not None and not self._stopping:
                    log.error("receiver process %d exited with %s; starting it again",
                              process.pid, process.exitcode)
                    self.restarts += 1
                    self._processes[i] = self._spawn()

    def health(self) -> dict[str, Any]:
        """The receiver processes' part of /api/v1/health."""
        return {"processes": self.count,
                "alive": sum(p.exitcode is None for p in self._processes),
                "restarts": self.restarts}

    @property
    def link_rejected_spans(self) -> int:
        """Spans the receiver processes rejected (partial success), for /metrics."""
        return self._link.rejected_spans if self._link else 0

    async def stop(self) -> None:
        """SIGTERM the processes (they answer what they hold), then close link and socket."""
        self._stopping = True
        if self._watch is not None:
            self._watch.cancel()
        for process in self._processes:
            if process.exitcode is None:
                process.terminate()
        await asyncio.to_thread(self._join)
        if self._link is not None:
            await self._link.close()
        self._socket.close()
        self._grpc_hold.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def _join(self) -> None:
        deadline = time.monotonic() + _STOP_TIMEOUT_S
        for process in self._processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.exitcode is None:
                log.error("receiver process %d did not stop; killing it", process.pid)
                process.kill()
                process.join(5)


def _bind_shared(host: str, port: int, wait: float) -> socket.socket:
    """Listen on the OTLP/HTTP port the receivers share. After a SIGKILL of the writer process
    its receivers hold that port until they have answered what they held and exited (seconds,
    more under load): a supervisor's immediate restart waits for them instead of failing."""
    deadline, waiting = time.monotonic() + wait, False
    while True:
        try:
            return socket.create_server((host, port), family=_family(host), backlog=2048)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE or time.monotonic() >= deadline:
                raise
            if not waiting:
                log.warning("OTLP/HTTP port %d is in use (receiver processes of a stopped "
                            "server still exiting?): waiting up to %.0f s (port_wait)", port, wait)
                waiting = True
            time.sleep(0.5)


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _hold_port(host: str, port: int) -> socket.socket:
    """Bind (not listen on) host:port with SO_REUSEPORT: the receivers can listen on it, any
    process without SO_REUSEPORT (or of another user) cannot, and port 0 gets its number."""
    hold = socket.socket(_family(host), socket.SOCK_STREAM)
    hold.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        hold.bind((host, port))
    except OSError:
        hold.close()
        raise
    return hold


def run_receiver(config: Config, sock: socket.socket, grpc_port: int, link_path: str,
                 max_connections: int) -> None:
    """Entry point of one receiver process: serve OTLP/HTTP on `sock` and OTLP/gRPC on
    grpc_port until SIGTERM."""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    # Ctrl-C reaches the whole process group: the writer process stops us in order (SIGTERM).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    asyncio.run(_serve(config, sock, grpc_port, link_path, max_connections))


async def _serve(config: Config, sock: socket.socket, grpc_port: int, link_path: str,
                 max_connections: int) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    link = WriterLink(link_path, config.ingest.retry_after, on_lost=stop.set)
    await link.connect()
    exporter = LinkedExporter(config.ingest, link)
    app = create_otlp_http_app(exporter, config.server.ingest_token, config.server.read_timeout)
    server = http_server(app, config, 0, "otlp_http", max_connections)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    grpc_server, _ = await start_grpc_server(
        exporter, config.server.host, grpc_port, config.server.ingest_token,
        config.ingest.max_body_bytes, grpc_credentials(config.server), reuse_port=True)
    await asyncio.wait([serving, asyncio.create_task(stop.wait())],
                       return_when=asyncio.FIRST_COMPLETED)
    if link.lost:
        server.config.timeout_graceful_shutdown = _LOST_GRACE_S
    server.should_exit = True  # uvicorn and gRPC let the requests in flight finish
    await asyncio.gather(serving, grpc_server.stop(grace=5), return_exceptions=True)
    await link.close()
    if link.lost:  # the writer process died (SIGKILL) and could not remove the link's directory
        shutil.rmtree(Path(link_path).parent, ignore_errors=True)
        log.warning("receiver process %d exits: its writer process is gone", os.getpid())
