"""Local stand-ins for the DingTalk, WeCom and Feishu robot webhooks.

Each is a real HTTP server on loopback that checks what the vendor documents, written here from
the vendors' descriptions and not from agentsla's code: the signature (DingTalk: HMAC-SHA256
keyed with the secret over "timestamp\\nsecret", base64, in the query; Feishu: HMAC-SHA256 keyed
with "timestamp\\nsecret" over nothing, base64, in the body), a timestamp within an hour, the
message shape and the size limits. It answers as the vendor does: HTTP 200 with an error code.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

#: vendor → (code key, ok answer, rate-limited code, sign-mismatch code, bad-message code)
VENDORS = {
    "dingtalk": ("errcode", {"errcode": 0, "errmsg": "ok"}, 130101, 310000, 40035),
    "wecom": ("errcode", {"errcode": 0, "errmsg": "ok"}, 45009, None, 40008),
    "feishu": ("code", {"code": 0, "msg": "success"}, 11232, 19021, 19002),
}


def _hmac_b64(key: str, message: str) -> str:
    return base64.b64encode(hmac.new(key.encode(), message.encode(), hashlib.sha256).digest()).decode()


def _fresh(timestamp_s: float) -> bool:
    return abs(time.time() - timestamp_s) < 3600


def _dingtalk(path: str, body: dict, secret: str | None, size: int) -> str | None:
    """Return what is wrong with a DingTalk request, or None."""
    if secret:
        query = parse_qs(urlsplit(path).query)
        ts, given = (query.get("timestamp") or [""])[0], (query.get("sign") or [""])[0]
        if not ts.isdigit() or not _fresh(int(ts) / 1000):
            return "sign"
        if not hmac.compare_digest(given, _hmac_b64(secret, f"{ts}\n{secret}")):
            return "sign"
    md = body.get("markdown")
    if body.get("msgtype") != "markdown" or not isinstance(md, dict):
        return "message"
    if not str(md.get("title") or "").strip() or not str(md.get("text") or "").strip():
        return "message"
    return "message" if size > 20_000 else None  # the request as sent, in bytes


def _wecom(path: str, body: dict, secret: str | None, size: int) -> str | None:
    """Return what is wrong with a WeCom request, or None."""
    md = body.get("markdown")
    if body.get("msgtype") != "markdown" or not isinstance(md, dict):
        return "message"
    content = md.get("content")
    if not isinstance(content, str) or not content.strip():
        return "message"
    return "message" if len(content.encode()) > 4096 else None


def _feishu(path: str, body: dict, secret: str | None, size: int) -> str | None:
    """Return what is wrong with a Feishu request, or None."""
    if secret:
        ts = str(body.get("timestamp") or "")
        if not ts.isdigit() or not _fresh(int(ts)):
            return "sign"
        if not hmac.compare_digest(str(body.get("sign") or ""), _hmac_b64(f"{ts}\n{secret}", "")):
            return "sign"
    card = body.get("card")
    if body.get("msg_type") != "interactive" or not isinstance(card, dict):
        return "message"
    title = ((card.get("header") or {}).get("title") or {}).get("content")
    texts = [e.get("text", {}).get("content") for e in card.get("elements") or []
             if e.get("tag") == "div" and e.get("text", {}).get("tag") == "lark_md"]
    if not title or not texts or not all(isinstance(t, str) and t for t in texts):
        return "message"
    return "message" if size > 20 * 1024 else None


_CHECKS = {"dingtalk": _dingtalk, "wecom": _wecom, "feishu": _feishu}


class RobotServer:
    """A vendor's robot webhook: verifies, records accepted messages, answers in its codes.

    `too_fast` answers that many requests with the vendor's rate-limit code; `http_status`
    (when set) answers every request with that HTTP status instead.
    """

    def __init__(self, vendor: str, secret: str | None = None) -> None:
        self.vendor, self.secret = vendor, secret
        self.accepted: list[dict] = []
        self.rejected: list[tuple[str, bytes]] = []
        self.too_fast = 0
        self.http_status: int | None = None
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                status, answer = outer._answer(self.path, raw)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/robot/send?access_token=tok"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def _answer(self, path: str, raw: bytes) -> tuple[int, dict]:
        key, ok, limited, bad_sign, bad_message = VENDORS[self.vendor]
        with self.lock:
            if self.http_status is not None:
                return self.http_status, {key: -1, "errmsg": "http error on purpose"}
            if self.too_fast > 0:
                self.too_fast -= 1
                return 200, {key: limited, "errmsg": "send too fast"}
            try:
                body = json.loads(raw)
                problem = _CHECKS[self.vendor](path, body, self.secret, len(raw)) \
                    if isinstance(body, dict) else "message"
            except ValueError:
                problem = "message"
            if problem:
                self.rejected.append((problem, raw))
                code = bad_sign if problem == "sign" else bad_message
                return 200, {key: code, "errmsg": f"{problem} rejected"}
            self.accepted.append(body)
            return 200, ok

    def __enter__(self) -> "RobotServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
