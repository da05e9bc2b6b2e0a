"""The notification pipeline, shaped like Alertmanager's notify/notify.go.

Stages share one signature, `exec(ctx, alerts) -> alerts`, and compose with MultiStage. For
each integration of a group's receiver: MuteStage (silences and inhibitions, both Muters) →
DedupStage (consults the nflog) → LogStage (records the decision and queues the notification
in the outbox). The Deliverer then sends the outbox with the shared Retrier's backoff;
integrations only format and send.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Callable, Iterable, Protocol

from agentsla.alerts.routing.nflog import Entry, NotificationLog
from agentsla.alerts.notify import build_notification
from agentsla.alerts.notify.receivers import Integration
from agentsla.alerts.notify.retry import Retrier

log = logging.getLogger("agentsla.alerts.notify")


@dataclass(frozen=True)
class Context:
    """What a stage knows about the flush it is part of."""

    now: float
    integration: Integration
    group_key: str
    group_labels: dict[str, str]
    repeat_interval_s: float
    external_url: str = ""


class Stage(Protocol):
    """One step of the pipeline."""

    def exec(self, ctx: Context, alerts: list) -> list:
        """Return the alerts that go on (an empty list stops the pipeline)."""


class Muter(Protocol):
    """Silences and inhibitions."""

    def mutes(self, labels: dict[str, str], now: float) -> bool:
        """Tell whether an alert with these labels is muted now."""


class MultiStage:
    """Run stages in order, stopping when one passes on nothing."""

    def __init__(self, stages: Iterable[Stage]) -> None:
        self.stages = list(stages)

    def exec(self, ctx: Context, alerts: list) -> list:
        """Run every stage."""
        for stage in self.stages:
            if not alerts:
                return []
            alerts = stage.exec(ctx, alerts)
        return alerts


class MuteStage:
    """Filter out muted alerts; forget muted ones in the nflog so they re-notify when unmuted."""

    def __init__(self, muter: Muter, nflog: NotificationLog) -> None:
        self.muter, self.nflog = muter, nflog

    def exec(self, ctx: Context, alerts: list) -> list:
        """Drop the muted alerts."""
        kept, muted = [], set()
        for alert in alerts:
            if self.muter.mutes(alert.labels, ctx.now):
                muted.add(alert.fingerprint)
            else:
                kept.append(alert)
        if muted:
            self.nflog.forget_firing(ctx.integration.key, ctx.group_key, muted)
        return kept


def needs_update(entry: Entry | None, firing: set[str], resolved: set[str], now: float,
                 repeat_interval_s: float, send_resolved: bool) -> bool:
    """Tell whether a group's state must be notified (Alertmanager's DedupStage.needsUpdate)."""
    if entry is None:
        return bool(firing)  # never notified: only if something fires
    if not firing <= entry.firing:
        return True  # a new firing alert
    if not firing:
        # all resolved: tell only a receiver that was told something fired
        return bool(entry.firing)
    if send_resolved and not resolved <= entry.resolved:
        return True
    return entry.at <= now - repeat_interval_s


class DedupStage:
    """Pass the alerts on only if the nflog says the receiver's view is out of date."""

    def __init__(self, nflog: NotificationLog) -> None:
        self.nflog = nflog

    def exec(self, ctx: Context, alerts: list) -> list:
        """Return the alerts, or nothing when nothing changed and repeat_interval has not passed."""
        firing = {a.fingerprint for a in alerts if a.state.value == "firing"}
        resolved = {a.fingerprint for a in alerts if a.state.value == "resolved"}
        entry = self.nflog.entry(ctx.integration.key, ctx.group_key)
        if not needs_update(entry, firing, resolved, ctx.now, ctx.repeat_interval_s,
                            ctx.integration.send_resolved):
            return []
        return alerts


class LogStage:
    """Record the decision in the nflog and queue the notification (one transaction)."""

    def __init__(self, nflog: NotificationLog) -> None:
        self.nflog = nflog

    def exec(self, ctx: Context, alerts: list) -> list:
        """Queue a notification of the alerts (resolved ones only if the integration wants them)."""
        firing = {a.fingerprint for a in alerts if a.state.value == "firing"}
        resolved = {a.fingerprint for a in alerts if a.state.value == "resolved"}
        shown = [a for a in alerts if a.state.value == "firing" or ctx.integration.send_resolved]
        notification = build_notification(ctx.integration.receiver, ctx.integration.key,
                                          ctx.group_key, ctx.group_labels, shown, ctx.now,
                                          ctx.external_url)
        self.nflog.log(ctx.integration.key, ctx.group_key, firing, resolved, ctx.now, notification)
        return alerts


def notify_pipeline(muter: Muter, nflog: NotificationLog) -> MultiStage:
    """The standard pipeline: mute, dedup, log."""
    return MultiStage([MuteStage(muter, nflog), DedupStage(nflog), LogStage(nflog)])


class Deliverer:
    """Send the outbox: each integration's oldest notification first, with backoff."""

    def __init__(self, nflog: NotificationLog, integrations: dict[str, Integration],
                 retrier: Retrier, max_age_s: float = 86400.0,
                 on_result: Callable[[str, str | None], None] | None = None) -> None:
        self.nflog, self.integrations, self.retrier = nflog, integrations, retrier
        self.max_age_s = max_age_s
        self.on_result = on_result

    async def deliver(self, now: float) -> int:
        """Send each integration's due notifications in order; return how many were delivered.

        An integration's queue stops at its first failure (order is kept); integrations are
        sent to concurrently, so one that is down delays no other. The outbox (SQLite) is read
        and written in worker threads, never on the event loop.
        """
        keys = sorted({p.integration for p in await asyncio.to_thread(self.nflog.heads, now)})
        return sum(await asyncio.gather(*(self._drain(k, now) for k in keys)))

    async def _drain(self, key: str, now: float) -> int:
        sent = 0
        while (pending := await asyncio.to_thread(self.nflog.head, key, now)) is not None:
            outcome = await self._one(pending, now)
            if outcome is None:
                break
            sent += outcome
        return sent

    async def _one(self, pending, now: float) -> int | None:
        integration = self.integrations.get(pending.integration)
        if integration is None:
            await asyncio.to_thread(self.nflog.mark_failed, pending.seq, "failed",
                                    "integration no longer configured")
            return 0
        if now - pending.created_at > self.max_age_s:
            await asyncio.to_thread(self.nflog.mark_failed, pending.seq, "expired",
                                    f"undelivered after {self.max_age_s:g}s")
            log.error("dropping notification %s to %s: too old", pending.id, pending.integration)
            return 0
        try:
            retryable, error = await integration.notifier.notify(pending.notification)
        except Exception as exc:  # a notifier bug must not stop the others
            retryable, error = False, f"{type(exc).__name__}: {exc}"
        if self.on_result:
            self.on_result(pending.integration, error)
        if error is None:
            await asyncio.to_thread(self.nflog.mark_sent, pending.seq, now)
            return 1
        if retryable:
            # jittered backoff, never sooner than the receiver's Retry-After
            delay = self.retrier.delay(pending.attempts + 1, error, now)
            await asyncio.to_thread(self.nflog.mark_retry, pending.seq, now + delay, error)
            log.warning("notification %s to %s failed (retry in %.0fs): %s", pending.id,
                        pending.integration, delay, error)
            return None
        await asyncio.to_thread(self.nflog.mark_failed, pending.seq, "failed", error)
        log.error("notification %s to %s failed permanently: %s", pending.id,
                  pending.integration, error)
        return 0
