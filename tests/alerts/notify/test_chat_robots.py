"""DingTalk, WeCom and Feishu receivers against local robots that verify the vendors' signing,
shapes and size limits: content, signatures, rate limits, refusals, grouping, config errors."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from notifykit import alert, notification
from robotkit import RobotServer

from agentsla.alerts.config import parse_routing
from agentsla.alerts.notify.pipeline import Deliverer, notify_pipeline
from agentsla.alerts.notify.receivers import build_integrations
from agentsla.alerts.notify.retry import Retrier
from agentsla.alerts.routing.dispatch import Dispatcher
from agentsla.alerts.routing.nflog import NotificationLog
from agentsla.alerts.rules.evaluator import State
from agentsla.alerts.state import Store
from agentsla.cli import main
from agentsla.contract import FailingHop
from agentsla.yamlsrc import SourceError

VENDORS = ("dingtalk", "wecom", "feishu")
SIGNING = ("dingtalk", "feishu")
SECRET = "SEC0123456789abcdef-local-test-secret"


def _routing(vendor: str, url: str, secret: str | None = None, shown: int = 5, **route):
    item = {"url": url, "max_alerts_shown": shown, **({"secret": secret} if secret else {})}
    return parse_routing({"route": {"receiver": "chat", **route},
                          "receivers": [{"name": "chat", f"{vendor}_configs": [item]}]}, "test")


def _send(vendor: str, url: str, note: dict, secret: str | None = None, shown: int = 5):
    async def go():
        async with httpx.AsyncClient() as client:
            [integration] = build_integrations(_routing(vendor, url, secret, shown).receivers,
                                               client)["chat"]
            return await integration.notifier.notify(note)
    return asyncio.run(go())


def _text(vendor: str, body: dict) -> str:
    if vendor == "feishu":
        return body["card"]["elements"][0]["text"]["content"]
    return body["markdown"]["text" if vendor == "dingtalk" else "content"]


def _rate_limited_alert():
    a = alert(hop="search (v2)", value=0.2)
    a.context["first_failing_hop_share"] = 0.53
    a.context["first_failing_hop"] = FailingHop("model", "gpt-4o (eu)", "rate_limited").to_json()
    return a


@pytest.mark.parametrize("vendor", VENDORS)
def test_message_names_hop_rate_and_example_tasks(vendor):
    secret = SECRET if vendor in SIGNING else None
    with RobotServer(vendor, secret) as robot:
        result = _send(vendor, robot.url, notification(_rate_limited_alert()), secret)
    assert result == (False, None) and robot.rejected == []
    [body] = robot.accepted
    text = _text(vendor, body)
    assert text.splitlines()[0] == "### [FIRING:1] ToolErrorRateHigh P1"
    line = text.splitlines()[1]
    assert line.startswith("- **FIRING** hop_name=search (v2): Tool search (v2) fails 20% of calls")
    assert "| value 0.2 |" in line
    assert "first failing hop: model gpt-4o (eu) (rate_limited), 53% of blamed tasks" in line
    assert line.endswith("| tasks: [t1](http://dash/tasks?task=t1)")
    assert text.endswith("[Open in agentsla](http://dash/alerts?alertname=ToolErrorRateHigh)")
    if vendor == "dingtalk":
        assert body["markdown"]["title"] == "[FIRING:1] ToolErrorRateHigh P1"
    if vendor == "feishu":
        assert body["card"]["header"]["title"]["content"] == "[FIRING:1] ToolErrorRateHigh P1"
        assert body["card"]["header"]["template"] == "red"


@pytest.mark.parametrize("vendor", SIGNING)
def test_a_wrong_secret_is_refused_and_not_retried(vendor):
    with RobotServer(vendor, SECRET) as robot:
        retryable, error = _send(vendor, robot.url, notification(), "SECsomething-else")
    assert robot.accepted == [] and [p for p, _ in robot.rejected] == ["sign"]
    assert retryable is False and "refused the message" in error


@pytest.mark.parametrize("vendor, code", [("dingtalk", 130101), ("wecom", 45009),
                                          ("feishu", 11232)])
def test_too_frequent_is_retryable_then_delivered(vendor, code):
    with RobotServer(vendor) as robot:
        robot.too_fast = 1
        retryable, error = _send(vendor, robot.url, notification())
        assert retryable is True and "rate limiting: " in error and str(code) in error
        assert error.retry_after == "60"  # the robots count per minute: not sooner
        assert _send(vendor, robot.url, notification()) == (False, None)
    assert len(robot.accepted) == 1


@pytest.mark.parametrize("vendor", VENDORS)
@pytest.mark.parametrize("status, retryable", [(429, True), (503, True), (400, False)])
def test_http_statuses_are_classified(vendor, status, retryable):
    with RobotServer(vendor) as robot:
        robot.http_status = status
        got, error = _send(vendor, robot.url, notification())
    assert got is retryable and f"HTTP {status}" in error


@pytest.mark.parametrize("vendor", VENDORS)
def test_many_large_alerts_stay_under_the_size_limit(vendor):
    # multi-byte text: WeCom counts 4096 *bytes*, not characters
    alerts = []
    for i in range(60):
        a = alert(hop=f"工具{i}", value=i / 100)
        a.annotations["summary"] = "检索超时 " * 300
        alerts.append(a)
    with RobotServer(vendor) as robot:  # the robot refuses anything over its limit
        assert _send(vendor, robot.url, notification(*alerts), shown=100) == (False, None)
    text = _text(vendor, robot.accepted[0])
    assert "…and " in text and " more" in text
    if vendor == "wecom":
        assert len(text.encode()) <= 4096
    else:  # lines of ~1,000 bytes fill the 18,000 bytes kept for the text, then stop
        assert 16_000 < len(text.encode()) <= 18_000


@pytest.mark.parametrize("vendor", VENDORS)
def test_span_text_cannot_inject_tags(vendor):
    a = alert(hop="x")
    a.annotations["summary"] = '<font color="warning">@all</font>\nsecond line'
    with RobotServer(vendor) as robot:
        _send(vendor, robot.url, notification(a))
    text = _text(vendor, robot.accepted[0])
    assert "<font" not in text and "&lt;font" in text and "second line" in text.splitlines()[1]


@pytest.mark.parametrize("vendor", VENDORS)
def test_one_message_per_group_per_interval(vendor, tmp_path):
    """Alerts of one group arriving over several rounds are sent together, then at most once
    per group_interval, through the real dispatcher, notification log and deliverer."""
    store = Store(tmp_path / "alerts.sqlite")
    try:
        with RobotServer(vendor) as robot:
            async def go():
                async with httpx.AsyncClient() as client:
                    routing = _routing(vendor, robot.url, group_by=["alertname"],
                                       group_wait="30s", group_interval="5m")
                    nflog = NotificationLog(store)
                    integrations = build_integrations(routing.receivers, client)
                    dispatcher = Dispatcher(routing.route, integrations,
                                            notify_pipeline(_NoMute(), nflog), "http://dash")
                    deliverer = Deliverer(nflog, {i.key: i for i in integrations["chat"]},
                                          Retrier(jitter=0))
                    firing = []
                    for t in range(0, 600, 10):  # a new failing hop every 20 s for 10 minutes
                        if t % 20 == 0 and len(firing) < 10:
                            firing.append(alert(hop=f"tool{t}", t=1_700_000_000.0 + t))
                        dispatcher.ingest(firing, t)
                        dispatcher.tick(t)
                        await deliverer.deliver(t)
            asyncio.run(go())
        # flushes at 30 s (group_wait) and 330 s (group_interval); nothing new after 180 s
        counts = [len(_text(vendor, b).splitlines()) for b in robot.accepted]
        assert len(robot.accepted) == 2
        assert "[FIRING:2]" in _text(vendor, robot.accepted[0])   # tool0 and tool20 by 30 s
        assert "[FIRING:10]" in _text(vendor, robot.accepted[1])
        assert counts[1] > counts[0]
    finally:
        store.close()


class _NoMute:
    def mutes(self, labels, now):
        return False


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_receiver_without_url_is_refused_by_alerts_check(vendor, tmp_path, capsys):
    path = tmp_path / "routing.yaml"
    path.write_text("route:\n  receiver: chat\nreceivers:\n  - name: chat\n"
                    f"    {vendor}_configs:\n      - send_resolved: false\n")
    assert main(["alerts", "check", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:" in err and f"receivers[0].{vendor}_configs[0].url: is required" in err


@pytest.mark.parametrize("raw, message", [
    ({"wecom_configs": [{"url": "http://x", "secret": "s"}]}, "wecom_configs[0].secret: unknown key"),
    ({"dingtalk_configs": [{"url": "ftp://x"}]}, "is not an http(s) URL"),
    ({"feishu_configs": [{"url": "http://x", "secret": " "}]}, "feishu_configs[0].secret: is empty"),
    ({"dingtalk_configs": [{"url": "http://x", "max_alerts_shown": 0}]}, "must be at least 1"),
])
def test_config_errors_name_the_key(raw, message):
    with pytest.raises(SourceError, match=message.replace("[", r"\[").replace("]", r"\]")
                       .replace("(", r"\(").replace(")", r"\)")):
        parse_routing({"route": {"receiver": "chat"}, "receivers": [{"name": "chat", **raw}]}, "t")


def test_resolved_card_is_green():
    with RobotServer("feishu") as robot:
        _send("feishu", robot.url, notification(alert(state=State.RESOLVED)))
    assert robot.accepted[0]["card"]["header"]["template"] == "green"


def test_the_incidents_dominant_hop_is_named_when_it_differs():
    a = _rate_limited_alert()
    a.context["incident"] = {"id": "INC-1", "first_failing_hop_share": 0.61,
                             "first_failing_hop": FailingHop("tool", "db", "timeout").to_json()}
    same = _rate_limited_alert()
    same.context["incident"] = {"id": "INC-1", "first_failing_hop_share": 0.53,
                                "first_failing_hop": same.context["first_failing_hop"]}
    with RobotServer("wecom") as robot:
        _send("wecom", robot.url, notification(a))
        _send("wecom", robot.url, notification(same))
    differs, agrees = (_text("wecom", b).splitlines()[1] for b in robot.accepted)
    assert ("first failing hop: model gpt-4o (eu) (rate_limited), 53% of blamed tasks; "
            "incident INC-1: tool db (timeout), 61% of blamed tasks |") in differs
    assert "incident INC-1" not in agrees
