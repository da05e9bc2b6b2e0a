"""AlertService: evaluation, routing and delivery inside `agentsla serve`.

    service = AlertService(config, connect, data_dir, dashboard_url)
    await service.start()          # background loops and the enrichment worker
    app.routes.extend(service.routes())
    await service.reload()         # SIGHUP and POST /-/reload: rule and routing files again
    await service.stop()

`tick(now)` runs one round by hand (tests use it with a compressed clock): evaluate the due
rule groups, record transitions, route into groups, flush due groups, deliver the outbox, push
to Alertmanager, enrich the incidents. In the running service the enrichment has its own
thread (alerts/enrichment.py) and budget, so evaluation never waits for it.

Threads: a round (evaluation, SQLite writes, dispatch) runs in a worker thread; the event loop
only awaits it and sends HTTP. Readers (the API) see `view`, an immutable copy published at the
end of each round, never the dicts a round is changing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import httpx
from starlette.routing import Route

from agentsla.alerts.config import AlertsConfig, load_rule_groups, parse_alerts_config
from agentsla.alerts.cursors import Cursors
from agentsla.alerts.enrichment import Enricher
from agentsla.alerts.routing.dispatch import Dispatcher
from agentsla.alerts.rules.evaluator import Alert, Evaluator, State
from agentsla.alerts.incidents.store import IncidentStore
from agentsla.alerts.incidents.tracker import IncidentTracker
from agentsla.alerts.lease import Lease, Unshared
from agentsla.alerts.routing.inhibit import Inhibitor
from agentsla.alerts.rules.source import MetricSource
from agentsla.alerts.routing.nflog import NotificationLog
from agentsla.alerts.notify.alertmanager.notifier import AlertmanagerPusher
from agentsla.alerts.notify.pipeline import Deliverer, notify_pipeline
from agentsla.alerts.notify.receivers import build_integrations
from agentsla.alerts.routing.silence import Silences
from agentsla.alerts.state import FILENAME, Store
from agentsla.config import Config
from agentsla.queries.store import ReadStore

log = logging.getLogger("agentsla.alerts")
TICK_S = 1.0
NFLOG_RETENTION_S = 5 * 86400.0
#: Longest stop() waits for a running query after interrupting it.
STOP_WAIT_S = 30.0


class _Muters:
    """Silences and inhibitions behind one Muter."""

    def __init__(self, *muters) -> None:
        self.muters = muters

    def mutes(self, labels: dict[str, str], now: float) -> bool:
        """Tell whether any muter mutes the labels."""
        return any(m.mutes(labels, now) for m in self.muters)


@dataclass(frozen=True)
class View:
    """What readers see: alerts, rules and groups as the last finished round left them."""

    alerts: tuple[Alert, ...] = ()
    rules: tuple[dict, ...] = ()
    groups: tuple[dict, ...] = ()


@dataclass(frozen=True)
class ReloadResult:
    """The outcome of the last reload of the rule and routing files."""

    ok: bool
    at: float
    error: str | None = None
    rules: int = 0

    def to_json(self) -> dict:
        """Serialize for the API."""
        return {"status": "success" if self.ok else "error", "at": self.at,
                "error": self.error, "rules": self.rules}


class AlertService:
    """Rules, state machine, routing, notifiers and the /api/v1/alerts and silences routes."""

    def __init__(self, config: Config, connect: Callable[[], ReadStore],
                 data_dir: Path, dashboard_url: str | None = None, *,
                 clock: Callable[[], float] = time.time,
                 client: httpx.AsyncClient | None = None,
                 lease: Lease | Unshared = Unshared()) -> None:
        self.config, self.clock, self.dashboard_url = config, clock, dashboard_url
        self.lease = lease  # one evaluator among the processes over one store
        self.cursors = Cursors(connect)
        self.watching_since_ns = int(clock() * 1e9)  # the dead-man's switch waits a full window
        self.store = Store(Path(data_dir) / FILENAME)
        self.silences = Silences(self.store)
        self.nflog = NotificationLog(self.store)
        self._own_client = client is None
        self.client = client or httpx.AsyncClient()
        self.delivery_errors: dict[str, str | None] = {}
        self.view = View()
        self._apply(parse_alerts_config(config.alerts))
        self.evaluator.restore(self.store.load_alert_state())
        self._publish()
        self.enricher = Enricher(lambda now, cur, deadline: self.incidents.enrich(now, cur, deadline),
                                 self.cursors, config.server.enrichment_budget, clock)
        self.last_reload: ReloadResult | None = None
        self._round_lock: asyncio.Lock | None = None
        self._stopping: asyncio.Event | None = None
        self._tasks: list[asyncio.Task] = []
        self._reloads: set[asyncio.Task] = set()
        self._last_prune = 0.0

    def _apply(self, settings: AlertsConfig) -> None:
        """Build every part that depends on the rule and routing files (start and reload)."""
        routing = settings.routing
        assert routing is not None
        evaluator = Evaluator(load_rule_groups(settings, self.config), settings.evaluation_interval_s,
                              settings.resolved_retention_s, self.dashboard_url)
        inhibitor = Inhibitor(routing.inhibit_rules, self._firing_labels)
        integrations = build_integrations(routing.receivers, self.client)
        # nothing above can fail half-way through the swap below: a bad file stops here
        self.settings, self.evaluator, self.inhibitor = settings, evaluator, inhibitor
        self.dispatcher = Dispatcher(routing.route, integrations,
                                     notify_pipeline(_Muters(self.silences, inhibitor), self.nflog),
                                     external_url=self.dashboard_url or "")
        self.deliverer = Deliverer(self.nflog, {i.key: i for group in integrations.values()
                                                for i in group}, settings.retrier,
                                   settings.max_age_s, self.delivery_errors.__setitem__)
        self.pusher = AlertmanagerPusher(list(settings.alertmanagers), self.client,
                                         settings.alertmanager_resend_delay_s,
                                         settings.evaluation_interval_s)
        self.incidents = IncidentTracker(IncidentStore(self.store), settings.incidents,
                                         self.config, _rule_windows(evaluator), inhibitor=inhibitor)

    # --- running ---------------------------------------------------------------------------

    def _lock(self) -> asyncio.Lock:
        if self._round_lock is None:  # created in the running loop, not in __init__
            self._round_lock = asyncio.Lock()
        return self._round_lock

    async def start(self) -> None:
        """Start the evaluation and delivery loops and the enrichment worker (unless disabled)."""
        if not self.settings.enabled or self._tasks:
            return
        self._stopping = asyncio.Event()
        self._tasks = [asyncio.create_task(self._loop(self._round), name="alerts-eval"),
                       asyncio.create_task(self._loop(self._deliver), name="alerts-deliver")]
        self.enricher.start()

    async def stop(self) -> None:
        """Stop the loops, interrupt running queries and wait for them, save state, close."""
        # Cancelling a task does not stop the thread it awaits, so the evaluation loop is not
        # cancelled: its running queries are interrupted and it ends after its round, before
        # the database closes. Delivery holds no cursor and is cancelled.
        # An interrupt sent just before a query starts is lost, so the queries are interrupted
        # again until no cursor is open (wait_idle) before anything waits for the loop.
        if self._stopping is not None:
            self._stopping.set()
        self.cursors.interrupt_all()
        for task in self._tasks[1:]:
            task.cancel()
        idle = await asyncio.to_thread(self.cursors.wait_idle, STOP_WAIT_S)
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.to_thread(self.enricher.stop)
        if not (idle and await asyncio.to_thread(self.cursors.wait_idle, STOP_WAIT_S)):
            log.error("an alert query still runs after %.0fs; stopping anyway", STOP_WAIT_S)
        self._tasks = []
        await asyncio.to_thread(self.store.save_alert_state, self.evaluator.snapshot(), self.clock())
        try:
            await asyncio.to_thread(self.lease.release, self.clock())
        except Exception as exc:  # noqa: BLE001 - the lease then lapses after its ttl
            log.warning("could not release the alert lease: %s", exc)
        if self._own_client:
            await self.client.aclose()
        self.store.close()

    async def _loop(self, step) -> None:
        assert self._stopping is not None
        while not self._stopping.is_set():
            try:
                await step(self.clock())
            except Exception:  # noqa: BLE001 - log and carry on: alerting must not die
                if not self.cursors.stopping:
                    log.exception("alert loop failed; retrying")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), TICK_S)

    async def tick(self, now: float | None = None) -> None:
        """Run one full round at `now`: evaluate, dispatch, deliver, push, enrich."""
        now = self.clock() if now is None else now
        await self._round(now)
        await self._deliver(now)
        await asyncio.to_thread(self.enricher.run_once, now)

    async def _round(self, now: float) -> None:
        async with self._lock():
            if not await asyncio.to_thread(self.lease.holds, now):
                return  # another process evaluates: this one only answers the API
            alerts = await asyncio.to_thread(self._evaluate, now)
            await self.pusher.push(alerts, now)

    async def _deliver(self, now: float) -> None:
        await self.deliverer.deliver(now)

    def _evaluate(self, now: float) -> list[Alert]:
        before = {a.fingerprint: a.state for a in self.evaluator.alerts()}
        with self.cursors.cursor() as cur:
            query = MetricSource(cur, self.config, self.watching_since_ns)
            self.evaluator.eval(now, query)
            alerts = self._publish()
            self._record(before, alerts, now)
            self.store.save_alert_state(self.evaluator.snapshot(), now)
            self.incidents.observe(now, alerts, query)  # open, join, resolve
        self.dispatcher.ingest(alerts, now)
        self.dispatcher.tick(now)
        self.view = replace(self.view, groups=tuple(self.dispatcher.describe()))
        if now - self._last_prune > 3600:
            self.nflog.prune(now, NFLOG_RETENTION_S)
            self._last_prune = now
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

    def _publish(self) -> list[Alert]:
        """Publish copies of the alerts and rules for readers; return the alert copies."""
        alerts = self.evaluator.copies()
        self.view = replace(self.view, alerts=tuple(alerts),
                            rules=tuple(r.describe() for r in self.evaluator.rules))
        return alerts

    def _firing_labels(self) -> list[dict[str, str]]:
        return [a.labels for a in self.view.alerts if a.state == State.FIRING]

    # --- reloading ---------------------------------------------------------------------------

    async def reload(self) -> ReloadResult:
        """Read the rule and routing files again; a bad file keeps the running config."""
        async with self._lock():  # between rounds: never while a round uses the parts
            try:
                settings = await asyncio.to_thread(parse_alerts_config, self.config.alerts)
                state = self.evaluator.snapshot()
                await asyncio.to_thread(self._apply, settings)
            except Exception as exc:  # noqa: BLE001 - any bad file: say why, keep running
                self.last_reload = ReloadResult(False, self.clock(), f"{type(exc).__name__}: {exc}")
                log.error("reload failed, keeping the running rules and routing: %s", exc)
                return self.last_reload
            self.evaluator.restore(state)  # alerts of unchanged rules keep their state
            self._publish()
        self.last_reload = ReloadResult(True, self.clock(), rules=len(self.evaluator.rules))
        log.warning("reloaded the rule and routing files: %d rules", self.last_reload.rules)
        return self.last_reload

    def reload_soon(self) -> None:
        """Schedule a reload (SIGHUP's handler; the task is kept until it is done)."""
        task = asyncio.get_running_loop().create_task(self.reload(), name="alerts-reload")
        self._reloads.add(task)
        task.add_done_callback(self._reloads.discard)

    # --- reading -----------------------------------------------------------------------------

    def current(self, now: float | None = None) -> list[dict]:
        """Every pending, firing and retained resolved alert, with silenced/inhibited flags."""
        now = self.clock() if now is None else now
        out = []
        for alert in self.view.alerts:
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
