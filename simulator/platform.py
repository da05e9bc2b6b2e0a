"""The platform around the agent: gateway, queue, scheduler and worker pools, per task."""

from __future__ import annotations

import random

from opentelemetry.trace import SpanKind

from agentsla.simulator.agent import run_agent
from agentsla.simulator.builder import Builder
from agentsla.simulator.model import TaskPlan
from agentsla.simulator.scenarios import Profile, TaskType
from agentsla.simulator.world import World

TENANTS = (("acme", 0.4), ("globex", 0.3), ("initech", 0.2), ("umbrella", 0.1))
GATEWAY_ROUTE = "/v1/tasks"
#: How a scheduler failure reaches the client: (HTTP status, gateway error.type).
_GATEWAY_ERRORS = {"timeout": (504, "timeout"), "budget_exhausted": (504, "budget_exhausted")}


def _choose(rng: random.Random, items: tuple) -> object:
    return rng.choices([i[0] if isinstance(i, tuple) else i for i in items],
                       weights=[i[1] if isinstance(i, tuple) else i.weight for i in items])[0]


def plan_task(index: int, arrival: float, profile: Profile, world: World, seed: object,
              ids: random.Random, segment: tuple[float, float | None]) -> TaskPlan:
    """Plan every span of the task arriving at `arrival` (virtual seconds since the anchor)."""
    rng = random.Random(f"{seed}/task/{index}")
    task_type: TaskType = _choose(rng, profile.task_types)
    task = TaskPlan(index=index, task_id=f"task-{ids.getrandbits(48):012x}",
                    trace_id=ids.getrandbits(128) or 1, scenario=profile.name,
                    task_type=task_type.name, tenant=_choose(rng, TENANTS),
                    budget_s=task_type.budget_s)
    b = Builder(task, profile, world, rng, ids, segment[0], segment[1])
    budget_ms = round(task.budget_s * 1000)
    root = b.span(None, f"POST {GATEWAY_ROUTE}", "gateway", arrival, span_kind=SpanKind.SERVER,
                  **{"task.id": task.task_id, "task.type": task.task_type,
                     "tenant.id": task.tenant, "budget.total_ms": budget_ms,
                     "hop.timeout_ms": budget_ms, "http.request.method": "POST",
                     "http.route": GATEWAY_ROUTE, "url.path": GATEWAY_ROUTE})
    workers, capacity = profile.pools[task_type.pool]
    pool = world.pool(task_type.pool, workers, capacity)
    queue_attrs = {"messaging.system": "rabbitmq", "messaging.destination.name": pool.name}
    enqueue = arrival + b.u(0.002, 0.006)
    if pool.is_full(enqueue):
        queue = b.span(root, f"queue {pool.name}", "queue", enqueue, span_kind=SpanKind.PRODUCER,
                       **queue_attrs, **{"messaging.operation.type": "send"})
        b.fail(queue, enqueue + b.u(0.001, 0.003), "rejected", f"queue {pool.name} is full")
        b.fail(root, queue.end + b.u(0.001, 0.002), "rejected", "queue full", http_status=503)
        task.findings.add("saturation")
        return task
    dequeue = pool.acquire(enqueue) + b.u(0.001, 0.004)
    pool.admitted(dequeue)
    queue = b.span(root, f"queue {pool.name}", "queue", enqueue, span_kind=SpanKind.CONSUMER,
                   **queue_attrs, **{"messaging.operation.type": "receive"})
    queue.end = dequeue
    if dequeue - enqueue > 5.0:
        task.findings.add("saturation")
    pool.release(_schedule(b, root, dequeue, task_type))
    _respond(b, root)
    if any(s.end > root.end for s in task.spans):
        task.findings.add("ghost_work")
    return task


def _schedule(b: Builder, root, start: float, task_type: TaskType) -> float:
    """Plan the scheduler span and the worker's agent; return when the worker is free again."""
    prof = b.profile
    fitted = prof.scheduler_timeout_s is None
    timeout = b.remaining(start) - 0.5 if fitted else prof.scheduler_timeout_s
    sched = b.span(root, "schedule task", "scheduler", start,
                   **{"hop.timeout_ms": max(0, round(timeout * 1000))})
    if fitted and timeout < 1.0:  # a budget-aware scheduler drops work whose client gave up
        sched.attrs["budget.exhausted"] = True
        b.fail(sched, start + b.u(0.001, 0.003), "budget_exhausted", "deadline already passed",
               ("DeadlineExceeded", "task budget exhausted before dispatch"))
        return sched.end
    agent = run_agent(b, sched, start + b.u(0.002, 0.008), task_type.script)
    if agent.end + 0.001 > start + timeout:
        b.fail(sched, start + timeout, "timeout", f"worker did not answer within {timeout:.0f}s",
               ("TimeoutError", "scheduler gave up waiting for the worker"))
    elif agent.error:
        b.fail(sched, agent.end + 0.001, agent.error, f"worker failed: {agent.error}")
    else:
        sched.end = agent.end + 0.001
    return agent.end + 0.005


def _respond(b: Builder, root) -> None:
    """End the gateway span: the scheduler's answer, or 504 when the gateway's timeout fires."""
    sched = root.children[-1]
    answer = sched.end + 0.001
    gateway_deadline = root.start + b.task.budget_s
    if answer > gateway_deadline:
        b.fail(root, gateway_deadline + 0.001, "timeout", "gateway timeout", http_status=504)
    elif sched.error:
        status, reason = _GATEWAY_ERRORS.get(sched.error, (500, "server_error"))
        b.fail(root, answer, reason, f"upstream failed: {sched.error}", http_status=status)
    else:
        root.end = answer
        root.attrs["http.response.status_code"] = 200
