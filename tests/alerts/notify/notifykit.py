"""Notifications to feed notifiers in tests."""

from __future__ import annotations

from agentsla.alerts.rules.evaluator import Alert, State
from agentsla.alerts.notify import build_notification
from agentsla.contract import FailingHop


def alert(name="ToolErrorRateHigh", hop="search", value=0.2, state=State.FIRING, t=1_700_000_000.0,
          severity="P1") -> Alert:
    """A firing (or resolved) alert with the annotations every alert carries."""
    return Alert({"alertname": name, "severity": severity, "hop_name": hop},
                 {"summary": f"Tool {hop} fails {value:.0%} of calls",
                  "first_failing_hop": f"tool {hop} (timeout)",
                  "example_trace_ids": "4bf92f3577b34da6a3ce929d0e0e4736"},
                 state, value, t, fired_at=t, resolved_at=t + 60 if state == State.RESOLVED else None,
                 generator_url="http://dash/alerts?alertname=" + name,
                 context={"first_failing_hop": FailingHop("tool", hop, "timeout").to_json(),
                          "example_task_ids": ["t1"],
                          "example_trace_ids": ["4bf92f3577b34da6a3ce929d0e0e4736"]})


def notification(*alerts, receiver="r", key="{}:{alertname=\"ToolErrorRateHigh\"}", nid="msg_1") -> dict:
    """A notification of the alerts, as the pipeline queues it."""
    n = build_notification(receiver, f"{receiver}/x[0]", key, {"alertname": "ToolErrorRateHigh"},
                           alerts or [alert()], 1_700_000_100.0, "http://dash")
    n["id"] = nid
    return n
