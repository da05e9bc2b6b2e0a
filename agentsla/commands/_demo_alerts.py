"""The demo's alert receiver: a webhook on loopback that logs and prints every notification.

`agentsla demo` writes `DATA_DIR/demo-config.yaml` routing every alert (default rule pack and
SLO burn-rate rules) to one webhook receiver served here, in the demo process. Each
notification is appended as one JSON line to `DATA_DIR/notifications.jsonl` and summarized as
one console line: tier, alert name, firing/resolved, first failing hop, an example task id.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

import yaml

from agentsla.config import FILE_SECTIONS, SETTINGS_BY_NAME
from agentsla.errors import AgentslaError

NOTIFICATIONS = "notifications.jsonl"
CONFIG = "demo-config.yaml"
RECEIVER = "demo-console"
_ROUTING_KEYS = ("route", "receivers", "routing_file")

# Short timers so alerts show up while an incident plays (the server's defaults are 10s,
# 30s and 5m). Only in the config the demo writes.
DEMO_ALERTS: dict[str, Any] = {
    "evaluation_interval": "5s",
    "route": {"receiver": RECEIVER, "group_by": ["alertname", "severity"],
              "group_wait": "5s", "group_interval": "30s", "repeat_interval": "1h"},
}


def summarize(payload: dict) -> str:
    """One line: tier, alert name, status, first failing hop and an example task id."""
    alerts = payload.get("alerts") or []
    status = payload.get("status") or "?"
    lead = next((a for a in alerts if a.get("status") == status), alerts[0] if alerts else {})
    labels = {**(payload.get("commonLabels") or {}), **(lead.get("labels") or {})}
    notes = lead.get("annotations") or {}
    tier = labels.get("severity") or labels.get("tier") or "?"
    name = labels.get("alertname") or (payload.get("groupLabels") or {}).get("alertname") or "?"
    scope = ", ".join(f"{k}={labels[k]}" for k in ("task_type", "provider", "hop_name", "model")
                      if labels.get(k))
    task = (notes.get("example_task_ids") or "").split(",")[0].strip()
    line = f"{tier} {name} {status.upper()}"
    if scope:
        line += f" [{scope}]"
    if len(alerts) > 1:
        line += f" (+{len(alerts) - 1} more)"
    line += f"  first failing hop: {notes.get('first_failing_hop') or 'unknown'}"
    if task:
        line += f"  e.g. task {task}"
    return line


class NotificationSink:
    """A threaded HTTP server on 127.0.0.1 that records webhook notifications.

    `emit(line)` is called with each notification's summary (from the server's thread).
    """

    def __init__(self, path: Path, emit: Callable[[str], None]) -> None:
        self.path, self.emit = Path(path), emit
        self.count = 0
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                """Stay quiet: the summary line is the log."""

            def do_POST(self) -> None:  # noqa: N802
                """Record one notification and answer 200 (400 if it is not JSON)."""
                try:
                    body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    payload = json.loads(body)
                    if not isinstance(payload, dict):
                        raise ValueError("not an object")
                except (ValueError, OSError):
                    self.send_response(400)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                sink.record(payload, self.headers.get("webhook-id"))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="demo-alerts",
                                        daemon=True)

    @property
    def url(self) -> str:
        """The webhook URL the demo config points at."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/notify"

    def start(self) -> "NotificationSink":
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def record(self, payload: dict, notification_id: str | None) -> None:
        """Append the notification to the file and emit its summary (once per webhook-id)."""
        with self._lock:
            if notification_id:
                if notification_id in self._seen:  # a retry of a delivery we already took
                    return
                self._seen.add(notification_id)
            line = json.dumps({"received_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                               "webhook_id": notification_id, **payload},
                              separators=(",", ":"))
            with open(self.path, "a", encoding="utf-8") as out:
                out.write(line + "\n")
            self.count += 1
            summary = summarize(payload)
        try:
            self.emit(summary)
        except Exception:  # noqa: BLE001 - a display problem must not fail the delivery
            pass


def write_demo_config(data_dir: Path, webhook_url: str, user_config: str | None,
                      dashboard_url: str | None) -> tuple[Path, str | None]:
    """Write DATA_DIR/demo-config.yaml; return its path and a note for the user (or None).

    Without `user_config`: the demo's `alerts:` (short timers, everything to the webhook).
    With one: the user's file, plus the demo's receiver and timers when its `alerts:` sets no
    routing of its own (`route`, `receivers`, `routing_file`); if it does, its routing is kept
    and the demo's receiver gets nothing.
    """
    user: dict[str, Any] = {}
    if user_config:
        try:
            user = yaml.safe_load(Path(user_config).read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise AgentslaError(f"--config {user_config}: {exc}") from None
        if not isinstance(user, dict):
            raise AgentslaError(f"--config {user_config}: expected a mapping at the top level")
        unknown = set(user) - set(SETTINGS_BY_NAME) - set(FILE_SECTIONS)
        if unknown:  # let the server report it with the usual message
            return Path(user_config), None
    alerts = user.get("alerts") or {}
    if not isinstance(alerts, dict):
        return Path(user_config), None  # the server reports the error
    if any(key in alerts for key in _ROUTING_KEYS):
        return Path(user_config), (f"routing from {user_config} (the demo's receiver is not "
                                   "used)")
    receivers = [{"name": RECEIVER, "webhook_configs": [{"url": webhook_url}]}]
    config = {**user, "alerts": {**DEMO_ALERTS, "receivers": receivers, **alerts}}
    note = f"disabled by {user_config}" if alerts.get("enabled") is False else None
    if dashboard_url and "dashboard_url" not in config:
        config["dashboard_url"] = dashboard_url
    path = Path(data_dir) / CONFIG
    path.write_text("# Written by `agentsla demo`; rewritten on every run.\n"
                    + yaml.safe_dump(config, sort_keys=False))
    return path, note
