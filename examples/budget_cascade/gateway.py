"""The gateway: POST /answer queues the prompt for the worker and waits for its answer (3 s budget).

`before`: the platform as in the post-mortem: a 3 s wait, declared on the root span, known to
nobody downstream. `after`: agentsla-budget's ASGI middleware sets the budget, the queue hop
waits only what is left, and the message carries the remaining budget.
"""

from __future__ import annotations

import argparse
import uuid

import httpx
import uvicorn
from opentelemetry import propagate
from opentelemetry.trace import SpanKind, Status, StatusCode
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import agentsla_budget as budget
import telemetry
from agentsla_budget.ext.asgi import BudgetMiddleware

BUDGET_MS = 3000


class Queue:
    """The gateway's side of the broker: post a message, wait for its result."""

    def __init__(self, url: str) -> None:
        """Talk to the broker at url."""
        self.url, self.http = url, httpx.AsyncClient(timeout=30)

    async def ask(self, prompt: str, headers: dict[str, str], wait_s: float) -> dict | None:
        """Queue prompt and return its result, or None when none came within wait_s."""
        posted = await self.http.post(f"{self.url}/messages",
                                      json={"headers": headers, "body": {"prompt": prompt}})
        message_id = posted.json()["id"]
        result = await self.http.get(f"{self.url}/results/{message_id}",
                                     params={"wait": max(0.0, wait_s)}, timeout=wait_s + 5)
        return result.json() if result.status_code == 200 else None


def before_app(queue: Queue, tracer) -> Starlette:
    """Return the gateway without the library: spans written by hand, no budget downstream."""
    async def answer(request: Request) -> JSONResponse:
        task_id = uuid.uuid4().hex
        prompt = (await request.json())["prompt"]
        with tracer.start_as_current_span("POST /answer", kind=SpanKind.SERVER, attributes={
                "hop.kind": "gateway", "task.id": task_id, "task.type": "answer",
                "budget.total_ms": BUDGET_MS, "hop.timeout_ms": BUDGET_MS}) as root:
            with tracer.start_as_current_span("queue answers", kind=SpanKind.PRODUCER, attributes={
                    "hop.kind": "queue", "hop.timeout_ms": BUDGET_MS}) as waiting:
                headers: dict[str, str] = {}
                propagate.inject(headers)
                result = await queue.ask(prompt, headers, BUDGET_MS / 1000)
                if result is None:
                    waiting.set_attributes({"error.type": "timeout"})
                    waiting.set_status(Status(StatusCode.ERROR, "no answer within 3 s"))
            status = 200 if result and "answer" in result else 504 if result is None else 502
            root.set_attribute("http.response.status_code", status)
            if status != 200:
                root.set_status(Status(StatusCode.ERROR, f"HTTP {status}"))
            return JSONResponse({"task_id": task_id, **(result or {"error": "gateway timeout"})},
                                status_code=status)
    return Starlette(routes=[Route("/answer", answer, methods=["POST"])])


def after_app(queue: Queue) -> Starlette:
    """Return the gateway with agentsla-budget: every wait fits the request's budget."""
    async def answer(request: Request) -> JSONResponse:
        prompt = (await request.json())["prompt"]
        with budget.hop("queue answers", "queue", configured_s=BUDGET_MS / 1000,
                        reserve_ms=100) as waiting:
            result = await queue.ask(prompt, budget.inject_message(), waiting.timeout_s)
            if result is None:
                raise budget.BudgetExhausted("no answer came through the queue in time")
        if result.get("error") == "budget_exhausted":
            raise budget.BudgetExhausted(result["message"])
        status = 200 if "answer" in result else 502
        return JSONResponse({"task_id": budget.current().task_id, **result}, status_code=status)
    return Starlette(routes=[Route("/answer", answer, methods=["POST"])], middleware=[
        Middleware(BudgetMiddleware, default_ms=BUDGET_MS, task_type="answer")])


def main() -> None:
    """Serve the gateway under uvicorn."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=telemetry.MODES, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--queue", required=True)
    parser.add_argument("--otlp", required=True)
    args = parser.parse_args()
    tracer = telemetry.setup("gateway", args.otlp, args.mode)
    queue = Queue(args.queue)
    app = before_app(queue, tracer) if args.mode == "before" else after_app(queue)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
