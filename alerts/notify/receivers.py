"""Receivers: parse `receivers:` and build their notifiers, in one place (as Alertmanager's
config/receiver/receiver.go does)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import httpx

from agentsla.alerts.notify.digest import config as digest_config
from agentsla.alerts.notify.dingtalk import config as dingtalk_config
from agentsla.alerts.notify.dingtalk.notifier import DingTalkNotifier
from agentsla.alerts.notify.digest.notifier import DigestNotifier
from agentsla.alerts.notify.email import config as email_config
from agentsla.alerts.notify.email.notifier import EmailNotifier
from agentsla.alerts.notify.feishu import config as feishu_config
from agentsla.alerts.notify.feishu.notifier import FeishuNotifier
from agentsla.alerts.notify.pagerduty import config as pagerduty_config
from agentsla.alerts.notify.pagerduty.notifier import PagerDutyNotifier
from agentsla.alerts.notify.slack import config as slack_config
from agentsla.alerts.notify.slack.notifier import SlackNotifier
from agentsla.alerts.notify.webhook import config as webhook_config
from agentsla.alerts.notify.webhook.notifier import WebhookNotifier
from agentsla.alerts.notify.wecom import config as wecom_config
from agentsla.alerts.notify.wecom.notifier import WeComNotifier
from agentsla.yamlsrc import SourceError, line_of

#: config key → (parse config, build notifier from config and the shared HTTP client)
KINDS: dict[str, tuple[Callable, Callable[[Any, httpx.AsyncClient], Any]]] = {
    "webhook_configs": (webhook_config.parse, WebhookNotifier),
    "slack_configs": (slack_config.parse, SlackNotifier),
    "dingtalk_configs": (dingtalk_config.parse, DingTalkNotifier),
    "wecom_configs": (wecom_config.parse, WeComNotifier),
    "feishu_configs": (feishu_config.parse, FeishuNotifier),
    "pagerduty_configs": (pagerduty_config.parse, PagerDutyNotifier),
    "email_configs": (email_config.parse, lambda c, _client: EmailNotifier(c)),
    "digest_configs": (digest_config.parse, lambda c, _client: DigestNotifier(c)),
}


@dataclass(frozen=True)
class ReceiverConfig:
    """A named receiver and its integrations' configs, as (kind, config) pairs."""

    name: str
    integrations: tuple[tuple[str, Any], ...] = field(default_factory=tuple)


@dataclass
class Integration:
    """A built notifier with its key (`receiver/kind[i]`), as the pipeline sees it."""

    key: str
    receiver: str
    notifier: Any

    @property
    def send_resolved(self) -> bool:
        """Whether resolved alerts are sent to it."""
        return self.notifier.send_resolved


def parse_receivers(raw: Any, source: str) -> dict[str, ReceiverConfig]:
    """Validate `receivers:` (a list of {name, <kind>_configs: [...]})."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise SourceError(source, getattr(raw, "line", 0), "receivers must be a list")
    out: dict[str, ReceiverConfig] = {}
    for i, item in enumerate(raw):
        path = f"receivers[{i}]"
        if not isinstance(item, dict) or not item.get("name"):
            raise SourceError(source, line_of(raw, i), f"{path} needs a name")
        name = str(item["name"])
        if name in out:
            raise SourceError(source, line_of(item, "name"), f"{path}.name {name!r} is defined twice")
        integrations = []
        for key, value in item.items():
            if key == "name":
                continue
            if key not in KINDS:
                raise SourceError(source, line_of(item, key), f"{path}.{key}: unknown integration; "
                                  f"expected one of {', '.join(sorted(KINDS))}")
            if not isinstance(value, list):
                raise SourceError(source, line_of(item, key), f"{path}.{key} must be a list")
            for j, sub in enumerate(value):
                integrations.append((key, KINDS[key][0](sub, source, f"{path}.{key}[{j}]")))
        out[name] = ReceiverConfig(name, tuple(integrations))
    return out


def build_integrations(receivers: dict[str, ReceiverConfig],
                       client: httpx.AsyncClient) -> dict[str, list[Integration]]:
    """Build every receiver's notifiers."""
    built: dict[str, list[Integration]] = {}
    for name, receiver in receivers.items():
        counters: dict[str, int] = {}
        built[name] = []
        for kind, config in receiver.integrations:
            index = counters.get(kind, 0)
            counters[kind] = index + 1
            key = f"{name}/{kind.removesuffix('_configs')}[{index}]"
            built[name].append(Integration(key, name, KINDS[kind][1](config, client)))
    return built
