"""The live demo on the wall clock: healthy history first (fast), then the story's phases at
speed 1, each announced, and every alert's time from its first failing span measured.

The first failing span of a phase is the simulator's own record (the earliest failing span of
that phase's tasks, as it was sent), not a reading of the server: the server's incident page
computes its time to detect from the spans it stored, so the two can be compared.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Callable

import httpx

from agentsla.commands._demo_plan import HEALTHY, Slot
from agentsla.simulator import Segment, run as simulate

MEASURED = "demo-alerts.jsonl"
#: Seconds from the first failing span (or the start of a trend) to the notification, per tier:
#: the product's page goal for P0, the demo's own for chat and the digest.
GOALS = {"P0": 20.0, "P1": 90.0, "P2": 180.0}
#: Stop catching up on history once it ends this close to the wall clock.
_CATCH_UP_S = 2.0

Say = Callable[[str, str], None]  # (text, rich style)


def send_history(seconds: float, options: dict, on_task) -> int:
    """Send `seconds` of healthy traffic ending now, as fast as possible; return the tasks sent.

    Sending takes time, so the history is followed by shorter catch-ups until it ends within
    a couple of seconds of the wall clock: no gap in the charts and alert windows.
    """
    sent, length = 0, seconds
    for part in range(4):
        started = time.time()
        seed = f"{options['seed']}/history/{part}"  # ids of their own, apart from the live part
        summary = simulate([Segment(HEALTHY, length)], **{**options, "seed": seed}, speed=0.0,
                           anchor="end", on_task=on_task)
        sent += summary.tasks
        if summary.interrupted:
            break
        length = time.time() - started
        if length < _CATCH_UP_S:
            break
    return sent


class Announcer(threading.Thread):
    """Prints each phase as it starts: what happens and which alert should fire."""

    def __init__(self, slots: list[Slot], start: float, say: Say, stop: threading.Event) -> None:
        super().__init__(name="demo-announcer", daemon=True)
        self.slots, self.start_at, self.say, self.stop = slots, start, say, stop

    def run(self) -> None:
        """Wait for each phase's start time, then announce it."""
        for slot in self.slots:
            if self.stop.wait(max(0.0, self.start_at + slot.start_s - time.time())):
                return
            expect = ", ".join(f"{tier} {name} ({route_of(tier)})"
                               for tier, name in slot.phase.expect) or "nothing"
            self.say(f"▶ {slot.phase.profile.name} for {slot.seconds:.0f} s: {slot.phase.says}; "
                     f"should fire: {expect}", "bold cyan")


def route_of(tier: str) -> str:
    """Name the receiver the demo routes a tier to."""
    return {"P0": "page", "P1": "chat", "P2": "digest"}.get(tier, "chat")


class Scorer:
    """Measures each newly firing alert against the first failing span of its phase."""

    def __init__(self, slots: list[Slot], start: float, path: Path, say: Say) -> None:
        self.slots, self.start, self.path, self.say = slots, start, Path(path), say
        self.first_failed: dict[str, float] = {}  # scenario -> unix seconds
        self._seen: set[tuple] = set()
        self._lock = threading.Lock()

    def failed(self, scenario: str, unix_ns: int) -> None:
        """Note a failing span as the simulator sends it (the first per scenario counts)."""
        self.first_failed.setdefault(scenario, unix_ns / 1e9)

    def notified(self, payload: dict, received: float) -> None:
        """Measure every alert this notification announces as newly firing."""
        for alert in payload.get("alerts") or []:
            key = (alert.get("fingerprint"), alert.get("startsAt"))
            with self._lock:
                if alert.get("status") != "firing" or key in self._seen:
                    continue
                again = any(fp == key[0] for fp, _ in self._seen)
                self._seen.add(key)
            record = {**self.measure(alert.get("labels") or {}, received), "again": again}
            with self._lock, open(self.path, "a", encoding="utf-8") as out:
                out.write(json.dumps(record) + "\n")
            if record.get("seconds") is not None:
                late = record["seconds"] > record["goal_s"] and not again
                self.say(_line(record), "bold yellow" if late else "bold")

    def measure(self, labels: dict, received: float) -> dict:
        """Describe one alert: tier, name, scope, its phase and the time from its onset."""
        tier, name = labels.get("severity", "?"), labels.get("alertname", "?")
        record = {"tier": tier, "alertname": name, "labels": labels, "received_at": received,
                  "live_start": self.start, "phase": None, "onset": None, "onset_at": None,
                  "seconds": None, "goal_s": GOALS.get(tier)}
        slot = self._slot_of(tier, name, labels.get("task_type"), received)
        if slot is None:
            return record
        failed = self.first_failed.get(slot.phase.profile.name)
        onset = failed if failed is not None and failed <= received else (
            self.start + slot.start_s)
        record.update(phase=slot.phase.profile.name, onset_at=onset,
                      onset="its first failing span" if onset == failed else
                      f"{slot.phase.profile.name} began", seconds=round(received - onset, 1))
        return record

    def _slot_of(self, tier: str, name: str, task_type: str | None, at: float) -> Slot | None:
        """The incident phase an alert belongs to: the latest begun one that expects it and
        plays its task type, else the latest begun one."""
        begun = [s for s in self.slots if s.phase.incident and self.start + s.start_s <= at]
        named = [s for s in begun if (tier, name) in s.phase.expect and (
            task_type is None or task_type in {t.name for t in s.phase.profile.task_types})]
        return (named or begun or [None])[-1]


def _line(record: dict) -> str:
    labels = record["labels"]
    scope = ", ".join(f"{k}={labels[k]}" for k in ("task_type", "hop_name", "model")
                      if labels.get(k))
    scope = f" [{scope}]" if scope else ""
    head = f"{record['tier']} {record['alertname']}{scope}"
    if record.get("again"):  # it resolved during the incident and fired again
        return f"{head} fired again, {record['seconds']:.1f} s after {record['onset']}"
    return (f"{head} notified {record['seconds']:.1f} s after {record['onset']} "
            f"(goal {record['goal_s']:.0f} s)")


def _incidents(api: str, since: float) -> list[dict]:
    reply = httpx.get(f"{api}/api/v1/incidents", params={"limit": 100}, timeout=10)
    reply.raise_for_status()
    return [i for i in reply.json()["incidents"] if (i.get("detected_at") or 0) >= since]


def export_incidents(api: str, data_dir: Path, since: float, say: Say,
                     stop: threading.Event, wait_s: float = 30.0) -> list[dict]:
    """Save the timeline (Markdown) of every incident opened since `since`; say where.

    Waits up to `wait_s` for the incidents still open to resolve (their quiet period).
    """
    deadline = time.monotonic() + wait_s
    try:
        incidents = _incidents(api, since)
        while any(i["state"] == "open" for i in incidents) and time.monotonic() < deadline \
                and not stop.wait(2.0):
            incidents = _incidents(api, since)
    except (httpx.HTTPError, ValueError, KeyError) as exc:
        say(f"incidents: not available ({exc})", "yellow")
        return []
    folder = Path(data_dir) / "incidents"
    folder.mkdir(exist_ok=True)
    for incident in sorted(incidents, key=lambda i: i["detected_at"]):
        try:
            timeline = httpx.get(f"{api}/api/v1/incidents/{incident['id']}/timeline",
                                 params={"format": "md"}, timeout=10)
            timeline.raise_for_status()
        except httpx.HTTPError as exc:
            say(f"incident {incident['id']}: timeline not exported ({exc})", "yellow")
            continue
        path = folder / f"{incident['id']}.md"
        path.write_text(timeline.text, encoding="utf-8")
        detect = incident.get("time_to_detect_s")
        say(f"incident {incident['id']} {incident['severity']} {incident['state']}: "
            f"time to detect {_secs(detect)}; timeline {path}", "")
    return incidents


def _secs(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1f} s"
