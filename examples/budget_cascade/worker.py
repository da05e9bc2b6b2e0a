"""The agent worker: takes prompts off the queue and asks the model (2 s read timeout, 3 attempts).

`before`: the openai client retries timeouts on its own, whatever the caller has left, and every
message is worked on however long it waited. `after`: expired messages are dropped, each attempt
gets a timeout that fits, and no retry starts that cannot fit.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time

import httpx
import httpx2
import openai
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

import agentsla_budget as budget
import telemetry
from agentsla_budget.ext.openai import budgeted
from agentsla_budget.hop import mark_exhausted

MODEL, READ_TIMEOUT_S, ATTEMPTS = "tail-model", 2.0, 3
MODEL_ATTRIBUTES = {"gen_ai.request.model": MODEL, "gen_ai.operation.name": "chat"}


class AttemptSpans(httpx2.BaseTransport):
    """The platform's own instrumentation before the library: one span per HTTP attempt."""

    def __init__(self, tracer: trace.Tracer) -> None:
        """Send through a plain transport, tracing with tracer."""
        self.inner, self.tracer = httpx2.HTTPTransport(), tracer

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send request in a model span stating its timeout and attempt."""
        read_s = (request.extensions.get("timeout") or {}).get("read")
        with self.tracer.start_as_current_span(f"chat {MODEL}", kind=SpanKind.CLIENT, attributes={
                **MODEL_ATTRIBUTES, "hop.kind": "model", "hop.timeout_ms": read_s * 1000,
                "retry.attempt": int(request.headers.get("x-stainless-retry-count", 0)),
                "retry.max": ATTEMPTS - 1}) as span:
            response = self.inner.handle_request(request)
            span.set_attribute("http.response.status_code", response.status_code)
            return response


def ask_before(client: openai.OpenAI, prompt: str) -> str:
    """Ask the model as the post-mortem's platform did."""
    reply = client.chat.completions.create(model=MODEL, messages=[{"role": "user",
                                                                   "content": prompt}])
    return reply.choices[0].message.content


def ask_after(client: openai.OpenAI, prompt: str, tracer: trace.Tracer) -> str:
    """Ask the model with attempts that fit the budget."""
    def attempt(timeout_s: float) -> str:
        one = budgeted(client.with_options(timeout=timeout_s, max_retries=0))
        return ask_before(one, prompt)
    return budget.call_with_retries(attempt, name=f"chat {MODEL}", kind="model",
                                    configured_s=READ_TIMEOUT_S, reserve_ms=200,
                                    policy=budget.RetryPolicy(attempts=ATTEMPTS, backoff_s=0.2),
                                    attributes=MODEL_ATTRIBUTES, tracer=tracer)


class Worker:
    """One consumer of the broker, working on one message at a time."""

    def __init__(self, mode: str, queue: str, model: str, tracer: trace.Tracer) -> None:
        """Consume from queue and ask the model at model."""
        self.mode, self.queue, self.tracer = mode, queue, tracer
        http_client = httpx2.Client(transport=AttemptSpans(tracer)) if mode == "before" else None
        self.client = openai.OpenAI(base_url=f"{model}/v1", api_key="cascade",
                                    timeout=READ_TIMEOUT_S, max_retries=ATTEMPTS - 1,
                                    http_client=http_client)

    def run(self) -> None:
        """Take messages until stopped."""
        print(json.dumps({"ready": True}), flush=True)
        while True:
            reply = httpx.get(f"{self.queue}/messages", params={"wait": 1}, timeout=10)
            if reply.status_code == 200:
                self.handle(reply.json())

    def handle(self, message: dict) -> None:
        """Work on one message (or drop it, after) and post its result."""
        if self.mode == "before":
            ctx = propagate.extract(message["headers"])
        else:
            ctx = budget.admit(message["headers"], enqueued_at=message["enqueued_at"])
        if ctx is None:
            result = {"error": "budget_exhausted", "message": "expired in the queue",
                      "dropped": True}
        else:
            token = otel_context.attach(ctx)
            try:
                result = self.work(message["body"]["prompt"])
            finally:
                otel_context.detach(token)
        httpx.post(f"{self.queue}/results/{message['id']}", json=result, timeout=10)
        print(json.dumps({"message": message["id"], "dropped": ctx is None,
                          "waited_s": round(time.time() - message["enqueued_at"], 3),
                          "result": sorted(result)}), flush=True)

    def work(self, prompt: str) -> dict:
        """Answer prompt in an agent span; return the result to post."""
        with self.tracer.start_as_current_span("agent answer", kind=SpanKind.CONSUMER, attributes={
                "hop.kind": "agent", "gen_ai.agent.name": "answerer"},
                record_exception=False, set_status_on_exception=False) as span:
            try:
                if self.mode == "before":
                    return {"answer": ask_before(self.client, prompt)}
                return {"answer": ask_after(self.client, prompt, self.tracer)}
            except budget.BudgetExhausted as error:
                mark_exhausted(span, error)
                return {"error": "budget_exhausted", "message": str(error)}
            except openai.APIError as error:
                span.record_exception(error)
                span.set_status(Status(StatusCode.ERROR, type(error).__name__))
                return {"error": type(error).__name__, "message": str(error)}


def main() -> None:
    """Run the worker until SIGTERM."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=telemetry.MODES, required=True)
    parser.add_argument("--queue", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--otlp", required=True)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # exit normally: spans are flushed
    tracer = telemetry.setup("worker", args.otlp, args.mode)
    Worker(args.mode, args.queue, args.model, tracer).run()


if __name__ == "__main__":
    main()
