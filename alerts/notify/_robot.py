"""What the chat robots (DingTalk, WeCom, Feishu) share: their config, the markdown they are
sent, and the answer they give.

The robots answer HTTP 200 with a JSON code (`errcode`, or `code` for Feishu): 0 is delivered,
a "too frequent" code is retryable, not before a minute (their limits are counted per minute:
about 20 messages for DingTalk and WeCom, 100 for Feishu), and any other code is the message's
own fault. Non-2xx answers go through the shared Retrier (a 429's Retry-After is kept).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from urllib.parse import quote

import httpx

from agentsla.alerts.notify import cut, hop_text, take_fitting, title
from agentsla.alerts.notify._config import Section
from agentsla.alerts.notify.retry import Failure, Retrier

KEYS = {"url", "max_alerts_shown", "send_resolved", "timeout"}
MAX_LINE = 400
#: The Retry-After a "too frequent" answer stands for: the robots' limits are per minute.
RATE_LIMIT_RETRY_AFTER = "60"
MAX_TASK_LINKS = 3


@dataclass(frozen=True)
class RobotConfig:
    """A robot's webhook URL, its signing secret (where the service signs) and how much to show."""

    url: str
    secret: str | None = None
    max_alerts_shown: int = 5
    send_resolved: bool = True
    timeout_s: float = 10.0


def parse_robot(raw, source: str, path: str, signs: bool) -> RobotConfig:
    """Validate one robot item: `url` (required), `secret` where the service signs."""
    s = Section(raw, source, path, KEYS | ({"secret"} if signs else set()))
    shown = s.int("max_alerts_shown", 5)
    if shown < 1:
        raise s.error("max_alerts_shown", "must be at least 1")
    secret = s.str("secret")
    if secret is not None and not secret.strip():
        raise s.error("secret", "is empty; leave it out when the robot does not sign")
    return RobotConfig(s.url("url"), secret, shown, s.bool("send_resolved", True),
                       s.duration("timeout", 10.0))


def render_markdown(notification: dict, max_shown: int, max_bytes: int) -> tuple[str, str]:
    """The message's title and markdown text, the top offenders first, under max_bytes (UTF-8)."""
    head = f"### {_text(title(notification))}"
    link = next((a["generatorURL"] for a in notification["alerts"] if a["generatorURL"]), "")
    footer = [f"[Open in agentsla]({link})"] if link else []
    lines = [head]
    dashboard = notification.get("externalURL") or ""
    shown = take_fitting(lines, ("- " + _line(a, dashboard) for a in notification["alerts"]),
                         footer, max_shown,
                         lambda text: _size(text + ["…and 9999 more"]) <= max_bytes)
    more = len(notification["alerts"]) - shown
    if more > 0:
        lines.append(f"…and {more} more")
    return title(notification), "\n".join(lines + footer)


def _line(alert: dict, dashboard: str) -> str:
    skip = {"alertname", "severity", "scope", "slo", "slo_window", "burn_factor"}
    scope = ", ".join(f"{k}={v}" for k, v in alert["labels"].items() if k not in skip) or "all"
    summary = alert["annotations"].get("summary") or ""
    value = alert.get("value")
    parts = [f"**{alert['status'].upper()}** {scope}" + (f": {summary}" if summary else "")]
    if value is not None:
        parts.append(f"value {value:.4g}")
    parts.append(f"first failing hop: {hop_text(alert)}")
    text = cut(_text(" | ".join(parts)), MAX_LINE)
    tasks = ((alert.get("context") or {}).get("example_task_ids") or [])[:MAX_TASK_LINKS]
    if tasks and dashboard:
        text += " | tasks: " + ", ".join(
            f"[{_text(t)[:40]}]({dashboard.rstrip('/')}/tasks?task={quote(str(t))})" for t in tasks)
    return text


def _text(value: str) -> str:
    # One line, no HTML: the robots render <font>/<at> tags, which span text must not inject.
    return html.escape(" ".join(str(value).split()), quote=False)


def _size(lines: list[str]) -> int:
    return len("\n".join(lines).encode())


async def post_robot(client: httpx.AsyncClient, url: str, message: dict, what: str,
                     timeout: float, code_key: str,
                     too_frequent: frozenset[int]) -> tuple[bool, str | None]:
    """POST a robot message and classify the answer: HTTP status first, then the JSON code."""
    try:
        # UTF-8, not \u escapes: the size limits count bytes, and CJK text would triple
        body = json.dumps(message, ensure_ascii=False).encode()
        response = await client.post(url, content=body, timeout=timeout,
                                     headers={"content-type": "application/json; charset=utf-8"})
    except Exception as exc:  # classified, never raised: the retry stage decides
        return Retrier.from_exception(exc, what)
    retryable, error = Retrier.check(response.status_code, response.text, what,
                                     response.headers.get("retry-after"))
    if error is not None:
        return retryable, error
    try:
        answer = response.json()
        code = answer.get(code_key)
    except (ValueError, AttributeError):
        # not the robot's JSON (a proxy's page?): the message may not have arrived, so retry
        return True, f"{what} answered HTTP {response.status_code} without its JSON: " \
                     f"{response.text[:200]}"
    if code == 0:
        return False, None
    message_text = answer.get("errmsg") or answer.get("msg") or ""
    if code in too_frequent:
        return True, Failure(f"{what} is rate limiting: {code_key} {code}: {message_text}",
                             RATE_LIMIT_RETRY_AFTER)
    return False, f"{what} refused the message: {code_key} {code}: {message_text}"
