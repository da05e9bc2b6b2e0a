"""Webhook: v4 payload, Standard Webhooks signature, stable id across retries, classification."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from notifykit import alert, notification

from agentsla.alerts.notify.webhook.config import WebhookConfig
from agentsla.alerts.notify.webhook.notifier import WebhookNotifier, sign, verify

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def test_signature_matches_the_standard_webhooks_example():
    # the example from the Standard Webhooks spec / svix test vectors
    body = b'{"test": 2432232314}'
    assert sign(WebhookConfig("http://x", SECRET).key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
                body) == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def _send(hook, n, **config):
    async def go():
        async with httpx.AsyncClient() as client:
            notifier = WebhookNotifier(WebhookConfig(hook.url, SECRET, **config), client)
            return await notifier.notify(n)
    return asyncio.run(go())


def test_delivers_a_signed_v4_payload(hook):
    assert _send(hook, notification()) == (False, None)
    [delivery] = hook.deliveries
    assert verify(SECRET, delivery.headers, delivery.body)
    assert delivery.headers["webhook-id"] == "msg_1"
    payload = delivery.json
    assert {"version", "groupKey", "status", "receiver", "groupLabels", "commonLabels",
            "commonAnnotations", "externalURL", "alerts", "truncatedAlerts"} <= set(payload)
    assert payload["alerts"][0]["annotations"]["first_failing_hop"] == "tool search (timeout)"
    # a tampered body fails verification
    assert not verify(SECRET, delivery.headers, delivery.body + b" ")


def test_same_id_on_every_retry(hook):
    hook.fail_next = 2
    results = [_send(hook, notification(nid="msg_same")) for _ in range(3)]
    assert results == [(True, "webhook answered HTTP 503: ok")] * 2 + [(False, None)]
    assert {d.headers["webhook-id"] for d in hook.deliveries} == {"msg_same"}


@pytest.mark.parametrize("status, retryable", [(500, True), (502, True), (429, True),
                                               (400, False), (404, False), (410, False)])
def test_status_classification(hook, status, retryable):
    hook.fail_next, hook.fail_status = 1, status
    ok, error = _send(hook, notification())
    assert ok is retryable and f"HTTP {status}" in error


def test_connection_refused_is_retryable():
    from serverproc import free_port

    class Down:
        url = f"http://127.0.0.1:{free_port()}"
    retryable, error = _send(Down, notification())
    assert retryable and "cannot reach webhook" in error


def test_max_alerts_truncates(hook):
    _send(hook, notification(*(alert(hop=f"h{i}") for i in range(5))), max_alerts=2)
    payload = hook.deliveries[0].json
    assert len(payload["alerts"]) == 2 and payload["truncatedAlerts"] == 3
