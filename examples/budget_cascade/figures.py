"""Read one run back from agentsla's API: the before/after figures and a picture of budget use."""

from __future__ import annotations

from typing import Iterator

import httpx

from chain import Run

CASCADE = ("budget_inversion", "retry_amplification", "ghost_work")


def spans_of(api: str, task_id: str) -> list[dict]:
    """Return a task's spans from GET /api/v1/tasks/{id}, flattened."""
    def walk(span: dict) -> Iterator[dict]:
        yield span
        for child in span.get("children", []):
            yield from walk(child)
    task = httpx.get(f"{api}/api/v1/tasks/{task_id}", timeout=10).json()
    return [span for top in task["spans"] for span in walk(top)]


def worst_case_ms(span: dict) -> float:
    """Return a call's timeout times the attempts it may still make, as agentsla judges it."""
    attempts = (span["retry_max"] or 0) + 1 - (span["retry_attempt"] or 0)
    return span["hop_timeout_ms"] * attempts


def summarize(api: str, run: Run) -> dict:
    """Return the figures of one run, read from agentsla's API."""
    findings = httpx.get(f"{api}/api/v1/findings", params={"window": "1h"}, timeout=30).json()
    tasks = [httpx.get(f"{api}/api/v1/tasks/{call.task_id}", timeout=10).json()
             for call in run.calls]
    models = [span for call in run.calls for span in spans_of(api, call.task_id)
              if span["hop_kind"] == "model"]
    ghosts = [f for f in findings["findings"] if f["type"] == "ghost_work"]
    outcomes: dict[str, int] = {}
    for task in tasks:
        outcomes[task["outcome"]] = outcomes.get(task["outcome"], 0) + 1
    return {
        "mode": run.mode,
        "requests": len(run.calls),
        "answered_504": sum(call.status == 504 for call in run.calls),
        "longest_task_ms": round(max(task["duration_ms"] for task in tasks)),
        "model_attempts": len(models),
        "timed_out_attempts": sum(span["error_type"] == "timeout" for span in models),
        "worst_case_ms": max(worst_case_ms(span) for span in models),
        "expired_messages_dropped": run.dropped(),
        "ghost_seconds": round(sum(f["evidence"]["seconds_after"] for f in ghosts), 1),
        "outcomes": outcomes,
        "findings": sorted({f["type"] for f in findings["findings"]}),
    }


ROWS = [("requests", "requests to the gateway"),
        ("answered_504", "answered 504"),
        ("longest_task_ms", "longest task at the gateway (ms; budget 3000)"),
        ("model_attempts", "model attempts"),
        ("timed_out_attempts", "attempts that timed out"),
        ("worst_case_ms", "worst timeout x attempts left (ms)"),
        ("expired_messages_dropped", "expired queue messages dropped"),
        ("ghost_seconds", "seconds of work after the caller gave up"),
        ("outcomes", "outcomes (agentsla)"),
        ("findings", "findings (agentsla)")]


def _cell(value: object) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{key} {count}" for key, count in sorted(value.items()))
    if isinstance(value, list):
        return ", ".join(f"`{item}`" for item in value) or "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


def table(before: dict, after: dict) -> str:
    """Return the before/after figures as a Markdown table."""
    lines = ["| | without agentsla-budget | with agentsla-budget |", "|---|---|---|"]
    lines += [f"| {label} | {_cell(before[key])} | {_cell(after[key])} |" for key, label in ROWS]
    return "\n".join(lines)
