"""Scenario presets: a healthy platform, six real incidents, and each incident's remedy (`_fixed`).

A scenario is a `Profile`: the platform's configuration (budgets, pools, timeouts, retries,
breakers), the behaviour of its dependencies (model latency, 429s, a hanging database) and the
task mix. `parse_schedule` turns "baseline:120,model_long_tail:300" into segments.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from agentsla.errors import AgentslaError


@dataclass(frozen=True)
class TaskType:
    """A kind of task: its script (agent behaviour), share of traffic, budget and pool."""

    name: str
    script: str  # support | orders | research | conversation | runaway
    weight: float
    budget_s: float = 60.0
    pool: str = "agent-tasks"


@dataclass(frozen=True)
class Profile:
    """Everything that makes one scenario: platform config, dependency behaviour, task mix."""

    name: str
    description: str
    planted: tuple[str, ...] = ()
    incidental: tuple[str, ...] = ()
    rate: float = 1.0
    rate_growth: float = 1.0  # the rate ramps linearly to rate x rate_growth by the segment's end
    task_types: tuple[TaskType, ...] = (TaskType("support_chat", "support", 0.7),
                                        TaskType("order_status", "orders", 0.3))
    pools: dict[str, tuple[int, int]] = field(default_factory=lambda: {"agent-tasks": (16, 100)})
    scheduler_timeout_s: float | None = None  # None: fitted to the remaining budget
    budget_aware: bool = True  # agent and clients cut their timeouts to the remaining budget
    loop_limit: int = 8
    # model client
    read_timeout_s: float = 15.0
    connect_timeout_s: float = 2.0
    retry_max: int = 1
    retry_on: tuple[str, ...] = ("connection_error", "rate_limited", "server_error")
    backoff_s: float = 0.5
    model_breaker: bool = False
    backup_on: tuple[str, ...] = ()  # failure reasons that fail over to the backup model
    # model behaviour
    conn_error_p: float = 0.015
    hang_p: float = 0.0
    slow_p: float = 0.0
    rate_limit_p: tuple[tuple[float, float], ...] = ((0.0, 0.0),)  # (segment fraction, p)
    backup_rate_limit_p: tuple[tuple[float, float], ...] = ((0.0, 0.0),)
    context_cap: int | None = None  # tokens the agent compacts history to, None: grows
    # tools
    db_timeout_s: float = 5.0  # 0: no timeout
    db_hang_p: float = 0.0
    poll_interval_s: float | None = None  # research tasks: None means event-driven waits
    runaway_p: float = 0.0
    loop_guard: bool = True  # repeated identical tool calls are detected and stopped
    replay_p: float = 0.0  # a step replays its side-effecting tool under the same key


BASE = Profile(name="baseline", description="Healthy traffic; rare connection errors are "
               "recovered by one retry.")

_LONG_TAIL = replace(
    BASE, name="model_long_tail",
    description="Model p99 jumps to 120 s; 45 s read timeout x 3 attempts under a 60 s gateway "
                "and a 30 s scheduler: 504s while workers keep waiting, pools fill, queue grows.",
    planted=("budget_inversion", "retry_amplification", "ghost_work", "saturation"),
    incidental=("stream_stall",),
    pools={"agent-tasks": (7, 40)}, scheduler_timeout_s=30.0, budget_aware=False,
    read_timeout_s=45.0, connect_timeout_s=10.0, retry_max=2,
    retry_on=("connection_error", "timeout"), backoff_s=1.0, hang_p=0.035, slow_p=0.01)

_LONG_TAIL_FIXED = replace(
    _LONG_TAIL, name="model_long_tail_fixed",
    description="Remedy: 8 s read timeout, one retry on connection errors only, budgets that "
                "fit, fail over to the backup model on a timeout.",
    planted=(), incidental=("stream_stall",), scheduler_timeout_s=None, budget_aware=True,
    read_timeout_s=8.0, connect_timeout_s=2.0, retry_max=1, retry_on=("connection_error",),
    backup_on=("timeout",))

_RESEARCH = (TaskType("quick_answer", "research", 0.7, budget_s=30.0),
             TaskType("deep_research", "research", 0.3, budget_s=120.0))

_POLLING = replace(
    BASE, name="polling_wait",
    description="The orchestrator polls its executor every 2 s; fast and slow work share one "
                "pool, so quick answers queue behind deep research.",
    planted=("wait_amplification", "saturation"), incidental=("ghost_work",), rate=0.6,
    task_types=_RESEARCH,
    pools={"agent-tasks": (10, 40)}, poll_interval_s=2.0)

_POLLING_FIXED = replace(
    _POLLING, name="polling_wait_fixed",
    description="Remedy: event-driven waits and isolated pools for quick and deep work.",
    planted=(), incidental=(), poll_interval_s=None,
    task_types=tuple(replace(t, pool=f"agent-tasks-{t.name.split('_')[0]}") for t in _RESEARCH),
    pools={"agent-tasks-quick": (6, 40), "agent-tasks-deep": (16, 40)})

_LONG_PROMPT = replace(
    BASE, name="long_prompt",
    description="Conversations grow past 8,000 input tokens; prefill slows model calls to "
                "35-50 s; the 30 s gateway answers 504 while the orchestrator keeps waiting.",
    planted=("context_growth", "ghost_work", "budget_inversion", "stream_stall"), rate=0.5,
    task_types=(TaskType("assistant_chat", "conversation", 1.0, budget_s=30.0),),
    pools={"agent-tasks": (40, 100)}, scheduler_timeout_s=300.0, budget_aware=False,
    read_timeout_s=120.0, retry_on=("connection_error",))

_LONG_PROMPT_FIXED = replace(
    _LONG_PROMPT, name="long_prompt_fixed",
    description="Remedy: history compacted to about 4,000 tokens; timeouts fitted to budgets.",
    planted=(), scheduler_timeout_s=None, budget_aware=True, read_timeout_s=20.0,
    context_cap=4000)

_TOOL = replace(
    BASE, name="tool_no_timeout",
    description="A database tool with no timeout hangs 60 s and more; after 5 failures its "
                "breaker opens and calls fail fast to a cached answer (degraded).",
    planted=("missing_timeout", "ghost_work", "saturation"),
    task_types=(TaskType("support_chat", "support", 0.4), TaskType("order_status", "orders", 0.6)),
    pools={"agent-tasks": (24, 50)}, db_timeout_s=0.0, db_hang_p=0.9)

_TOOL_FIXED = replace(
    _TOOL, name="tool_no_timeout_fixed",
    description="Remedy: a 5 s timeout on the database tool; the breaker still sheds load.",
    planted=(), db_timeout_s=5.0)

_STORM = replace(
    BASE, name="rate_limit_storm",
    description="429s retried until success (success holds, p99 climbs); then failover to a "
                "backup model that hits its own quota; a side effect replayed under one key.",
    planted=("rate_limit_masking", "retry_amplification", "false_failover",
             "duplicate_side_effect"),
    incidental=("saturation",), retry_max=4, retry_on=("connection_error", "rate_limited"), backoff_s=1.0,
    model_breaker=True, backup_on=("rate_limited", "circuit_open"),
    rate_limit_p=((0.0, 0.35), (0.5, 0.85)), backup_rate_limit_p=((0.0, 0.1), (0.5, 0.7)),
    replay_p=0.5)

_STORM_FIXED = replace(
    _STORM, name="rate_limit_storm_fixed",
    description="Remedy: client-side rate limiting keeps 429s rare, the backup has headroom, "
                "steps are checkpointed so side effects are not replayed.",
    planted=(), incidental=(), retry_max=2, rate_limit_p=((0.0, 0.02),), backup_rate_limit_p=((0.0, 0.0),),
    replay_p=0.0)

_RUNAWAY = replace(
    BASE, name="runaway_loop",
    description="An agent keeps calling the same tool past its loop limit (error loop_limit).",
    planted=("runaway_loop",), task_types=(TaskType("kb_research", "runaway", 1.0),),
    runaway_p=0.35, loop_guard=False)

_RUNAWAY_FIXED = replace(
    _RUNAWAY, name="runaway_loop_fixed",
    description="Remedy: repeated identical tool calls are detected after 3 and the model is "
                "told to answer from what it has.",
    planted=(), loop_guard=True)

SCENARIOS: dict[str, Profile] = {p.name: p for p in (
    BASE, _LONG_TAIL, _LONG_TAIL_FIXED, _POLLING, _POLLING_FIXED, _LONG_PROMPT,
    _LONG_PROMPT_FIXED, _TOOL, _TOOL_FIXED, _STORM, _STORM_FIXED, _RUNAWAY, _RUNAWAY_FIXED)}

@dataclass(frozen=True)
class Segment:
    """One scenario played for a number of virtual seconds (None: until the task count)."""

    profile: Profile
    duration_s: float | None


def parse_schedule(text: str, duration_s: float | None = None) -> list[Segment]:
    """Parse `name` or `name:seconds,name:seconds`; a bare name lasts `duration_s`."""
    segments = []
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        name, _, seconds = part.partition(":")
        if name not in SCENARIOS:
            raise AgentslaError(f"unknown scenario {name!r}; choose from "
                                f"{', '.join(sorted(SCENARIOS))}")
        try:
            length = float(seconds) if seconds else duration_s
        except ValueError:
            raise AgentslaError(f"bad duration {seconds!r} for scenario {name}") from None
        if length is not None and length <= 0:
            raise AgentslaError(f"scenario {name}: duration must be positive")
        segments.append(Segment(SCENARIOS[name], length))
    if not segments:
        raise AgentslaError("empty schedule")
    return segments


def scale_schedule(segments: list[Segment], total_s: float) -> list[Segment]:
    """Stretch or shrink every segment so the schedule lasts total_s virtual seconds."""
    current = sum(s.duration_s or 0.0 for s in segments)
    factor = total_s / current if current else 1.0
    return [replace(s, duration_s=(s.duration_s or 0.0) * factor) for s in segments]
