"""Run the real `agentsla serve` as a subprocess on free loopback ports, for end-to-end tests."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import httpx
import uvicorn


#: Ports handed out below Linux's ephemeral range (32768-60999), where the kernel also picks
#: the local ports of outgoing connections: a port free now is then far less likely to be
#: taken by someone's client socket before the server binds it.
_PORTS = range(20000, 32000)


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    for _ in range(100):
        port = random.choice(_PORTS)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free loopback port found in 20000-31999")


class _PortTaken(RuntimeError):
    """The server could not bind a port free_port() had found free."""


@dataclass
class ServerProcess:
    """One `agentsla serve` process with its own data dir and ports."""

    data_dir: Path
    extra_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    http_port: int = field(default_factory=free_port)
    grpc_port: int = field(default_factory=free_port)
    api_port: int = field(default_factory=free_port)
    keep_ports: bool = False  # a restart: never move to other ports
    proc: subprocess.Popen | None = None
    log: str = ""

    @property
    def otlp_url(self) -> str:
        """Base URL of the OTLP/HTTP receiver."""
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def traces_url(self) -> str:
        """URL of POST /v1/traces."""
        return f"{self.otlp_url}/v1/traces"

    @property
    def grpc_target(self) -> str:
        """host:port of the gRPC receiver."""
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def api_url(self) -> str:
        """Base URL of the query API."""
        return f"http://127.0.0.1:{self.api_port}"

    def start(self, timeout: float = 30.0) -> "ServerProcess":
        """Start the server and wait until its API answers.

        A port taken between free_port() and the server's bind (other tests run at the same
        time) is a race of the test harness, not of the server: the first start then tries
        fresh ports, up to three times. A restart keeps its ports (clients know them): while
        the killed server's receiver processes still hold a port (they exit by themselves), it
        tries the same ports again until `timeout`.
        """
        deadline = time.monotonic() + timeout
        restart, tries = self.proc is not None or self.keep_ports, 1
        while True:
            try:
                return self._start(max(1.0, deadline - time.monotonic()))
            except _PortTaken:
                if restart and time.monotonic() < deadline:
                    time.sleep(0.5)
                    continue
                if restart or tries == 3:
                    raise
                tries += 1
                self.http_port, self.grpc_port, self.api_port = (free_port(), free_port(),
                                                                 free_port())

    def restarted(self, extra_args: list[str] | None = None) -> "ServerProcess":
        """A new server on this one's data dir and ports (not started): the same server after
        a crash, as its clients see it."""
        return ServerProcess(self.data_dir, self.extra_args if extra_args is None else extra_args,
                             env=self.env, http_port=self.http_port, grpc_port=self.grpc_port,
                             api_port=self.api_port, keep_ports=True)

    def _start(self, timeout: float) -> "ServerProcess":
        args = [sys.executable, "-m", "agentsla", "serve", "--data-dir", str(self.data_dir),
                "--otlp-http-port", str(self.http_port), "--otlp-grpc-port", str(self.grpc_port),
                "--api-port", str(self.api_port), *self.extra_args]
        env = {**os.environ, **self.env}
        self.proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                output = self.proc.stdout.read()
                error = _PortTaken if "address already in use" in output else RuntimeError
                raise error(f"agentsla serve exited {self.proc.returncode}: {output}")
            try:
                if httpx.get(f"{self.api_url}/api/v1/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.kill()
        raise TimeoutError("agentsla serve did not become healthy")

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM the server and return its exit code."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            self._collect_output()

    def kill(self) -> None:
        """SIGKILL the server (simulated crash)."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._collect_output()

    def _collect_output(self) -> None:
        if self.proc and self.proc.stdout and not self.proc.stdout.closed:
            self.log += self.proc.stdout.read()
            self.proc.stdout.close()

    def api(self, path: str, **params) -> httpx.Response:
        """GET an API path."""
        return httpx.get(f"{self.api_url}{path}", params=params, timeout=10)

    def wait_for_evidence(self, timeout_s: float = 1800) -> float | None:
        """Wait until the findings evidence worker stored every minute and built every settled
        hour (a new file's are all pending, a time-shifted copy's hours too), as a server
        that has kept up with its traffic has; return how long that took, None without a
        worker."""
        started = time.perf_counter()
        while time.perf_counter() - started < timeout_s:
            worker = self.api("/api/v1/health").json().get("evidence")
            if worker is None:
                return None
            if worker["minutes_pending"] == 0 and worker["hours_pending"] == 0:
                return round(time.perf_counter() - started, 1)
            time.sleep(1)
        raise TimeoutError("the findings evidence worker did not catch up")


@contextmanager
def serving(app) -> Iterator[str]:
    """Serve an ASGI app with uvicorn on a free loopback port in a thread; yield its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error",
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
