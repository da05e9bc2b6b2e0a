"""The live demo's story: a healthy platform, five incidents at announced times, the alerts each
one should raise, and the demo's rule pack with windows short enough to fire within a phase.

The incidents are sharper variants of the simulator's scenarios (docs/simulator.md), so each one
shows within about a minute of wall-clock time; the healthy platform has no failures at all, so
every alert the demo raises belongs to an incident.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from agentsla.simulator import SCENARIOS, Segment
from agentsla.simulator.scenarios import BASE, Profile, TaskType

#: Wall-clock seconds the live schedule lasts by default; `--duration` stretches or shrinks it.
DEFAULT_LIVE_S = 420.0
#: Below this the phases are too short for every alert to fire (the demo says so).
MIN_LIVE_S = 300.0
#: Virtual seconds of healthy history sent (fast) before the live traffic.
DEFAULT_HISTORY_S = 3 * 3600.0
#: Tokens per minute the demo's quota allows gpt-4o (healthy use is about a third of it).
GPT4O_QUOTA = 1_000_000

HEALTHY = replace(BASE, name="healthy", conn_error_p=0.0,
                  description="Healthy traffic, no failures at all.")
_SUPPORT = (TaskType("support_chat", "support", 1.0),)
_ORDERS = (TaskType("order_status", "orders", 1.0),)

LONG_TAIL = replace(
    SCENARIOS["model_long_tail"], name="demo_model_long_tail", task_types=_SUPPORT,
    conn_error_p=0.0, hang_p=0.25, pools={"agent-tasks": (7, 10)},
    description="support_chat: a quarter of gpt-4o calls hang; the 30 s scheduler gives up "
                "while workers keep waiting (45 s read timeout x 3 attempts).")
TOOL = replace(
    SCENARIOS["tool_no_timeout"], name="demo_tool_no_timeout", task_types=_ORDERS,
    conn_error_p=0.0, pools={"agent-tasks": (24, 10)},  # a short queue: rejections, not a long tail
    description="order_status: query_orders_db has no timeout and hangs; after 5 failures its "
                "breaker opens and calls fail fast to a cached answer; workers fill, the queue rejects.")
STORM = replace(
    SCENARIOS["rate_limit_storm"], name="demo_rate_limit_storm", conn_error_p=0.0,
    rate_limit_p=((0.0, 0.4),), backup_rate_limit_p=((0.0, 0.0),),
    description="40 % of gpt-4o calls answer 429; retries and the backup model hide it: tasks "
                "succeed, slower.")
BACKLOG = replace(
    HEALTHY, name="queue_backlog", pools={"agent-tasks": (4, 400)}, rate=1.2, planted=("saturation",),
    description="Only 4 workers left: tasks wait in the queue longer and longer, then finish.")
CAPACITY = replace(
    HEALTHY, name="capacity_trend", rate_growth=5.0, pools={"agent-tasks": (48, 400)},
    description="Traffic grows 5x in a few minutes; capacity holds, but gpt-4o's token quota "
                "is predicted to run out.")


@dataclass(frozen=True)
class Phase:
    """One part of the live schedule: what plays, what the audience is told, what should fire."""

    profile: Profile
    share: float  # of the live duration
    says: str
    expect: tuple[tuple[str, str], ...] = ()  # (tier, alert name)

    @property
    def incident(self) -> bool:
        """Tell whether this phase is an incident (it should raise alerts)."""
        return bool(self.expect)


PHASES: tuple[Phase, ...] = (
    Phase(HEALTHY, 0.08, "healthy traffic"),
    # Before the outages: their full pools make queue waits of their own.
    Phase(BACKLOG, 0.11, BACKLOG.description, (("P1", "QueueWaitHigh"),)),
    # Early: its hung calls end 60-180 s later, so its tool errors trail into the next phases.
    Phase(TOOL, 0.18, TOOL.description, (("P0", "SLOErrorBudgetBurn"),
                                         ("P1", "ToolErrorRateHigh"))),
    Phase(LONG_TAIL, 0.15, LONG_TAIL.description, (("P0", "SLOErrorBudgetBurn"),)),
    Phase(STORM, 0.11, STORM.description, (("P1", "ModelRateLimited"),)),
    Phase(CAPACITY, 0.24, CAPACITY.description, (("P2", "TokenQuotaPredicted"),)),
    Phase(HEALTHY, 0.13, "recovery: healthy traffic, the incidents resolve"),
)


@dataclass(frozen=True)
class Slot:
    """A phase placed on the live clock: start and length in seconds after the live start."""

    phase: Phase
    start_s: float
    seconds: float


def live_slots(duration_s: float) -> list[Slot]:
    """Place the phases over `duration_s` wall-clock seconds."""
    total = sum(p.share for p in PHASES)
    slots, start = [], 0.0
    for phase in PHASES:
        seconds = duration_s * phase.share / total
        slots.append(Slot(phase, start, seconds))
        start += seconds
    return slots


def segments(slots: list[Slot]) -> list[Segment]:
    """The simulator segments of the live schedule."""
    return [Segment(s.phase.profile, s.seconds) for s in slots]


def _rule(name: str, expr: str, tier: str, summary: str, for_: str = "10s",
          min_tasks: int = 5, **labels: str) -> dict:
    # keep_firing_for: a lull between failures of one incident does not resolve and re-page.
    return {"alert": name, "expr": expr, "for": for_, "keep_firing_for": "30s",
            "min_tasks": min_tasks, "labels": {"severity": tier, **labels},
            "annotations": {"summary": summary}}


#: The demo's rules: the default pack's ideas with 15 s-1 m windows, 10 s `for` and 30 s
#: `keep_firing_for`.
DEMO_RULES: dict = {"groups": [{"name": "agentsla-demo", "rules": [
    _rule("SLOErrorBudgetBurn",
          "slo_burn_rate by (task_type) [1m] > 14.4 and slo_burn_rate by (task_type) [15s] > 14.4",
          "P0", "{{ $labels.task_type }} tasks burn the error budget {{ $value | humanize }}x "
          "(over 14.4x in 1m/15s)", for_="0s", min_tasks=2, slo_window="1m/15s", burn_factor="14.4"),
    # 15 %: the stray late errors of hung calls ending after the incident do not re-alert.
    _rule("ToolErrorRateHigh", 'hop_error_rate{hop_kind="tool"} by (hop_name) [30s] > 0.15',
          "P1", "Tool {{ $labels.hop_name }} fails {{ $value | percent }} of calls (threshold 15%)",
          min_tasks=2, scope="hop"),
    _rule("ModelRateLimited",
          'hop_rate_limited_rate{hop_kind="model"} by (hop_name) [30s] > 0.2', "P1",
          "{{ $labels.hop_name }} answers 429 to {{ $value | percent }} of calls (threshold 20%)",
          min_tasks=10, scope="hop"),
    _rule("QueueWaitHigh", "queue_wait_p95_seconds [30s] > 5", "P1",
          "p95 queue wait is {{ $value | seconds }} (threshold 5s)", min_tasks=10,
          scope="queue"),
    _rule("TokenQuotaPredicted",
          # Half the quota already used: a recovery after an outage climbs too, from near zero.
          "predict_linear(token_quota_ratio by (model) [20s], 2m) >= 1 "
          "and token_quota_ratio by (model) [20s] > 0.5", "P2",
          "{{ $labels.model }} is predicted to reach its token quota within 2 minutes "
          "({{ $value | percent }} of quota)", for_="15s", min_tasks=0, scope="model"),
]}]}


def demo_alerts(rules_path: str, sink_url: str, digest_path: str) -> dict[str, Any]:
    """The `alerts:` section the demo runs with: its rules, one route per tier, short timers.

    P0 pages, P1 goes to chat, P2 to a digest (a Markdown file) on a 1-minute period; every
    receiver also posts to the demo's own webhook (`sink_url` + /page, /chat, /digest).
    """
    fast = {"group_wait": "1s", "group_interval": "10s", "repeat_interval": "1h"}
    hook = [{"name": f"demo-{name}", "webhook_configs": [{"url": f"{sink_url}/{name}"}]}
            for name in ("page", "chat", "digest")]
    hook[2]["digest_configs"] = [{"path": digest_path}]
    return {
        "evaluation_interval": "5s",
        "default_rules": False, "slo_rules": False, "rule_files": [rules_path],
        "quotas": {"tokens_per_minute": {"gpt-4o": GPT4O_QUOTA}},
        "incidents": {"quiet_period": "15s", "snapshot_interval": "15s",
                      "snapshot_window": "1m"},
        "route": {"receiver": "demo-chat", "group_by": ["alertname", "severity"], **fast,
                  "routes": [
                      {"matchers": ['severity="P0"'], "receiver": "demo-page"},
                      {"matchers": ['severity="P2"'], "receiver": "demo-digest",
                       "group_by": ["severity"], "group_wait": "10s",
                       "group_interval": "1m", "repeat_interval": "1h"}]},
        "receivers": hook,
    }
