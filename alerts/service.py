"""AlertService: evaluation, routing and delivery inside `agentsla serve`.

    service = AlertService(config, connect, data_dir, dashboard_url)
    await service.start()          # background loops
    app.routes.extend(service.routes())
    await service.stop()

`tick(now)` runs one round by hand (tests use it with a compressed clock): evaluate the due
rule groups, record transitions, route into groups, flush due groups, deliver the outbox and
push to Alertmanager.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from pathlib import Path
from typing import Callable

import duckdb
import httpx
from starlette.routing import Route

from agentsla.alerts.config import AlertsConfig, load_rule_groups, parse_alerts_config
from agentsla.alerts.routing.dispatch import Dispatcher
from agentsla.alerts.rules.evaluator import Alert, Evaluator, State
from agentsla.alerts.incidents.store import IncidentStore
from agentsla.alerts.incidents.tracker import IncidentTracker
from agentsla.alerts.routing.inhibit import Inhibitor
from agentsla.alerts.rules.source import MetricSource
from agentsla.alerts.routing.nflog import NotificationLog
from agentsla.alerts.notify.alertmanager.notifier import AlertmanagerPusher
from agentsla.alerts.notify.pipeline import Deliverer, notify_pipeline
from agentsla.alerts.notify.receivers import build_integrations
from agentsla.alerts.routing.silence import Silences
from agentsla.alerts.state import FILENAME, Store
from agentsla.config import Config

log = logging.getLogger("agentsla.alerts")
TICK_S = 1.0
NFLOG_RETENTION_S = 5 * 86400.0


class _Muters:
    """Silences and inhibitions behind one Muter."""

    def __init__(self, *muters) -> None:
        self.muters = muters

    def mutes(self, labels: dict[str, str], now: float) -> bool:
        """Tell whether any muter mutes the labels."""
        return any(m.mutes(labels, now) for m in self.muters)


class AlertService:
    """Rules, state machine, routing, notifiers and the /api/v1/alerts and silences routes."""

    def __init__(self, config: Config, connect: Callable[[], duckdb.DuckDBPyConnection],
                 data_dir: Path, dashboard_url: str | None = None, *,
                 clock: Callable[[], float] = time.time,
                 client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.settings: AlertsConfig = parse_alerts_config(config.alerts)
        self.connect, self.clock = connect, clock
        self.watching_since_ns = int(clock() * 1e9)  # the dead-man's switch waits a full window
        self.dashboard_url = dashboard_url
        self.store = Store(Path(data_dir) / FILENAME)
        self.evaluator = Evaluator(load_rule_groups(self.settings, config),
                                   self.settings.evaluation_interval_s,
                                   self.settings.resolved_retention_s, dashboard_url)
        self.evaluator.restore(self.store.load_alert_state())
        self.silences = Silences(self.store)
        routing = self.settings.routing
        assert routing is not None
        self.inhibitor = Inhibitor(routing.inhibit_rules, self._firing_labels)
        self.nflog = NotificationLog(self.store)
        self._own_client = client is None
        self.client = client or httpx.AsyncClient()
        integrations = build_integrations(routing.receivers, self.client)
        self.dispatcher = Dispatcher(routing.route, integrations,
                                     notify_pipeline(_Muters(self.silences, self.inhibitor), self.nflog),
                                     external_url=dashboard_url or "")
        self.delivery_errors: dict[str, str | None] = {}
        self.deliverer = Deliverer(self.nflog, {i.key: i for group in integrations.values()
                                                for i in group}, self.settings.retrier,
                                   self.settings.max_age_s, self.delivery_errors.__setitem__)
        self.pusher = AlertmanagerPusher(list(self.settings.alertmanagers), self.client,
                                         self.settings.alertmanager_resend_delay_s,
                                         self.settings.evaluation_interval_s)
        self.incidents = IncidentTracker(IncidentStore(self.store), self.settings.incidents,
                                         config, _rule_windows(self.evaluator),
                                         inhibitor=self.inhibitor)
        self._tasks: list[asyncio.Task] = []
        self._last_prune = 0.0

    # --- running ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the evaluation and delivery loops (no-op when alerts.enabled is false)."""
        if not self.settings.enabled or self._tasks:
            return
        self._tasks = [asyncio.create_task(self._loop(self._round), name="alerts-eval"),
                       asyncio.create_task(self._loop(self._deliver), name="alerts-deliver")]

    async def stop(self) -> None:
        """Stop the loops, save state and close the store and HTTP client."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        self.store.save_alert_state(self.evaluator.snapshot(), self.clock())
        if self._own_client:
            await self.client.aclose()
        self.store.close()

    async def _loop(self, step) -> None:
        while True:
            try:
                await step(self.clock())
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - log and carry on: alerting must not die
                log.exception("alert loop failed; retrying")
            await asyncio.sleep(TICK_S)

    async def tick(self, now: float | None = None) -> None:
        """Run one full round at `now`: evaluate, dispatch, deliver, push."""
        now = self.clock() if now is None else now
        await self._round(now)
        await self._deliver(now)

    async def _round(self, now: float) -> None:
        alerts = await asyncio.to_thread(self._evaluate, now)
        self.dispatcher.ingest(alerts, now)
        self.dispatcher.tick(now)
        await self.pusher.push(alerts, now)
        if now - self._last_prune > 3600:
            self.nflog.prune(now, NFLOG_RETENTION_S)
            self._last_prune = now

    async def _deliver(self, now: float) -> None:
        await self.deliverer.deliver(now)

    def _evaluate(self, now: float) -> list[Alert]:
        before = {a.fingerprint: a.state for a in self.evaluator.alerts()}
        cur = self.connect()
        try:
            query = MetricSource(cur, self.config, self.watching_since_ns)
            alerts = self.evaluator.eval(now, query)
            self._record(before, alerts, now)
            self.store.save_alert_state(self.evaluator.snapshot(), now)
            self.incidents.observe(now, alerts, query)  # open, join, resolve; timeline signals
        finally:
            cur.close()
        return alerts

    def _record(self, before: dict[str, State], alerts: list[Alert], now: float) -> None:
        rows = []
        after = {a.fingerprint: a for a in alerts}
        for fp, alert in after.items():
            old = before.get(fp, State.INACTIVE)
            if old != alert.state:
                rows.append(_history_row(now, alert, old, alert.state))
        for fp, state in before.items():
            if fp not in after and state == State.PENDING:
                rows.append((now, fp, "", None, state.value, State.INACTIVE.value, None, "{}", "{}"))
        if rows:
            self.store.add_history(rows, self.settings.history_retention_s, now)

    def _firing_labels(self) -> list[dict[str, str]]:
        return [a.labels for a in self.evaluator.alerts() if a.state == State.FIRING]

    # --- reading -----------------------------------------------------------------------------

    def current(self, now: float | None = None) -> list[dict]:
        """Every pending, firing and retained resolved alert, with silenced/inhibited flags."""
        now = self.clock() if now is None else now
        out = []
        for alert in self.evaluator.alerts():
            data = alert.to_json()
            data["silenced"] = self.silences.mutes(alert.labels, now)
            data["inhibited"] = alert.state == State.FIRING and self.inhibitor.mutes(alert.labels, now)
            out.append(data)
        return sorted(out, key=lambda a: (a["state"] != "firing", a["labels"].get("severity", ""),
                                          a["labels"].get("alertname", "")))

    def routes(self) -> list[Route]:
        """The Starlette routes: /api/v1/alerts, /api/v1/silences[/{id}], /api/v1/incidents/..."""
        from agentsla.api.alert_routes import alert_routes

        return alert_routes(self)


def _rule_windows(evaluator: Evaluator) -> dict[str, float]:
    """Each alert name's longest selector window (where an incident looks for its onset)."""
    windows: dict[str, float] = {}
    for rule in evaluator.rules:
        window = rule.rule.expr.selector.window_s
        windows[rule.rule.name] = max(windows.get(rule.rule.name, 0.0), window)
    return windows


def _history_row(now: float, alert: Alert, old: State, new: State) -> tuple:
    return (now, alert.fingerprint, alert.name, alert.labels.get("severity"), old.value,
            new.value, alert.value, json.dumps(alert.labels), json.dumps(alert.annotations))
