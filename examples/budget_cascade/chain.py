"""Start the chain's processes on loopback and play the post-mortem's load through it."""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import httpx

HERE = Path(__file__).resolve().parent
BACKLOG = ["backlog question 1", "backlog question 2"]  # queued while the worker is down
LOAD = [("fast", "fast question 1"), ("fast", "fast question 2"), ("fast", "fast question 3"),
        ("flaky", "flaky question"), ("tail", "tail question 1"), ("tail", "tail question 2")]


@dataclass(frozen=True)
class Call:
    """One request to the gateway and what came back."""

    kind: str
    prompt: str
    status: int
    latency_s: float
    body: dict

    @property
    def task_id(self) -> str:
        """Return the task id the gateway answered with."""
        return self.body["task_id"]


@dataclass(frozen=True)
class Run:
    """What one mode's run produced: the calls and the worker's log."""

    mode: str
    calls: list[Call]
    worker_log: list[dict]

    def dropped(self) -> int:
        """Return how many expired messages the worker dropped."""
        return sum(1 for line in self.worker_log if line.get("dropped"))


def free_port() -> int:
    """Return a loopback TCP port free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_listening(port: int, proc: subprocess.Popen, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited {proc.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {port}")


@contextmanager
def process(script: str, *args: str, log: Path) -> Iterator[subprocess.Popen]:
    """Run one of the chain's scripts; SIGTERM it (spans are flushed on exit) when done."""
    with log.open("w") as out:
        path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": path}
        proc = subprocess.Popen([sys.executable, str(HERE / script), *args], stdout=out,
                                stderr=subprocess.STDOUT, env=env)
        try:
            yield proc
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def _post(gateway: str, kind: str, prompt: str) -> Call:
    started = time.monotonic()
    response = httpx.post(f"{gateway}/answer", json={"prompt": prompt}, timeout=30)
    return Call(kind, prompt, response.status_code, time.monotonic() - started, response.json())


def wait_for(predicate, what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        time.sleep(0.1)


def _all_answered(queue: str) -> bool:
    stats = httpx.get(f"{queue}/stats", timeout=5).json()
    return stats["answered"] == stats["enqueued"]


def _worker_log(path: Path) -> list[dict]:
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines if line.startswith("{")]


def play(mode: str, otlp_url: str, workdir: Path) -> Run:
    """Play the load through a fresh chain in mode (`before` or `after`), exporting to otlp_url."""
    workdir.mkdir(parents=True, exist_ok=True)
    ports = {name: free_port() for name in ("model", "queue", "gateway")}
    model, queue = (f"http://127.0.0.1:{ports[n]}" for n in ("model", "queue"))
    gateway = f"http://127.0.0.1:{ports['gateway']}"
    with ExitStack() as stack:
        for name, script, args in (
                ("model", "model_server.py", ["--port", str(ports["model"])]),
                ("queue", "queue_server.py", ["--port", str(ports["queue"])]),
                ("gateway", "gateway.py", ["--mode", mode, "--port", str(ports["gateway"]),
                                           "--queue", queue, "--otlp", otlp_url])):
            proc = stack.enter_context(process(script, *args, log=workdir / f"{name}.log"))
            wait_listening(ports[name], proc)
        # The worker is down (a deploy, a rebalance) while the first requests come in.
        with concurrent.futures.ThreadPoolExecutor(len(BACKLOG)) as pool:
            calls = list(pool.map(lambda p: _post(gateway, "backlog", p), BACKLOG))
        time.sleep(1.5)
        worker_log = workdir / "worker.log"
        stack.enter_context(process("worker.py", "--mode", mode, "--queue", queue, "--model",
                                    model, "--otlp", otlp_url, log=worker_log))
        wait_for(lambda: _worker_log(worker_log), "the worker to start")
        calls += [_post(gateway, kind, prompt) for kind, prompt in LOAD]
        wait_for(lambda: _all_answered(queue), "the worker to finish")
    return Run(mode, calls, [line for line in _worker_log(worker_log) if "message" in line])
