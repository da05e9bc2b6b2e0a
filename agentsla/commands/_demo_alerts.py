"""The demo's alert receiver: a webhook on loopback that logs and prints every notification.

`agentsla demo` writes `DATA_DIR/demo-config.yaml` and `DATA_DIR/demo-rules.yaml` (the demo's
rule pack, agentsla/commands/_demo_plan.py): P0 goes to the receiver `demo-page`, P1 to
`demo-chat`, P2 to `demo-digest` (also a Markdown digest file); each posts to this webhook at
/page, /chat or /digest. Each notification is appended as one JSON line to
`DATA_DIR/notifications.jsonl` and summarized as one console line: tier, channel, alert name,
firing/resolved, first failing hop, an example task id.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

import yaml

from agentsla.commands._demo_plan import DEMO_RULES, demo_alerts
from agentsla.config import FILE_SECTIONS, SETTINGS_BY_NAME
from agentsla.errors import AgentslaError

NOTIFICATIONS = "notifications.jsonl"
CONFIG = "demo-config.yaml"
RULES = "demo-rules.yaml"
DIGEST = "p2-digest.md"
CHANNELS = ("page", "chat", "digest")
_ROUTING_KEYS = ("route", "receivers", "routing_file")


def summarize(payload: dict, channel: str = "") -> str:
    """One line: tier, channel, alert name, status, first failing hop and an example task."""
    alerts = payload.get("alerts") or []
    status = payload.get("status") or "?"
    # The newest alert of the group leads: a notification goes out because something changed.
    lead = max((a for a in alerts if a.get("status") == status),
               key=lambda a: a.get("endsAt" if status == "resolved" else "startsAt") or "",
               default=alerts[0] if alerts else {})
    labels = {**(payload.get("commonLabels") or {}), **(lead.get("labels") or {})}
    notes = lead.get("annotations") or {}
    tier = labels.get("severity") or labels.get("tier") or "?"
    name = labels.get("alertname") or (payload.get("groupLabels") or {}).get("alertname") or "?"
    scope = ", ".join(f"{k}={labels[k]}" for k in ("task_type", "provider", "hop_name", "model")
                      if labels.get(k))
    task = (notes.get("example_task_ids") or "").split(",")[0].strip()
    line = f"{tier} {channel + ' ' if channel else ''}{name} {status.upper()}"
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

    `on_note(channel, payload, received)` is called with each new notification (from the
    server's thread); the channel is the last part of the URL path (page, chat, digest).
    """

    def __init__(self, path: Path, on_note: Callable[[str, dict, float], None]) -> None:
        self.path, self.on_note = Path(path), on_note
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
                sink.record(self.path.rstrip("/").rsplit("/", 1)[-1], payload,
                            self.headers.get("webhook-id"))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="demo-alerts",
                                        daemon=True)

    @property
    def url(self) -> str:
        """The webhook's base URL; the demo config adds /page, /chat or /digest."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "NotificationSink":
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def record(self, channel: str, payload: dict, notification_id: str | None) -> None:
        """Append the notification to the file and pass it on (once per webhook-id)."""
        received = time.time()
        with self._lock:
            if notification_id:
                if notification_id in self._seen:  # a retry of a delivery we already took
                    return
                self._seen.add(notification_id)
            line = json.dumps({"received_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                               "received_unix": received, "channel": channel,
                               "webhook_id": notification_id, **payload},
                              separators=(",", ":"))
            with open(self.path, "a", encoding="utf-8") as out:
                out.write(line + "\n")
            self.count += 1
        try:
            self.on_note(channel, payload, received)
        except Exception:  # noqa: BLE001 - a display problem must not fail the delivery
            pass


def write_demo_config(data_dir: Path, webhook_url: str, user_config: str | None,
                      dashboard_url: str | None) -> tuple[Path, str | None]:
    """Write DATA_DIR/demo-config.yaml (and demo-rules.yaml); return its path and a note.

    Without `user_config`: the demo's `alerts:` (its rules, short timers, a receiver per tier).
    With one: the user's file, plus the demo's `alerts:` keys it does not set, when its
    `alerts:` sets no routing of its own (`route`, `receivers`, `routing_file`); if it does,
    its file is used as it is and the demo's receivers get nothing.
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
        return Path(user_config), (f"routing from {user_config} (the demo's receivers are not "
                                   "used)")
    data_dir = Path(data_dir)
    rules = data_dir / RULES
    rules.write_text("# Written by `agentsla demo`: its rule pack (docs/simulator.md).\n"
                     + yaml.safe_dump(DEMO_RULES, sort_keys=False))
    mine = demo_alerts(str(rules), webhook_url, str(data_dir / DIGEST))
    config = {**user, "alerts": {**mine, **alerts}}
    note = f"disabled by {user_config}" if alerts.get("enabled") is False else None
    if dashboard_url and "dashboard_url" not in config:
        config["dashboard_url"] = dashboard_url
    path = data_dir / CONFIG
    path.write_text("# Written by `agentsla demo`; rewritten on every run.\n"
                    + yaml.safe_dump(config, sort_keys=False))
    return path, note
