"""`agentsla alerts`: check and test rule files, list alerts, manage silences.

    agentsla alerts check FILE...        validate rule, routing and rule-test files (exit 1 on error)
    agentsla alerts test FILE...         run promtool-shaped rule unit tests (exit 1 on failure)
    agentsla alerts list [--json]        current alerts from the API
    agentsla alerts silence add|list|expire
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Mapping

import httpx

from agentsla.commands._flags import add_setting_flags, config_from_args
from agentsla.errors import AgentslaError

_CLIENT_SETTINGS = ["api", "api_token"]


def add_parser(subparsers) -> None:
    """Add `agentsla alerts` and its subcommands."""
    parser = subparsers.add_parser(
        "alerts", help="Check and test alert rules, list alerts, manage silences.",
        description="Work with agentsla's alerts (see docs/alerts.md).")
    sub = parser.add_subparsers(dest="alerts_command", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="Validate rule, routing and rule-test files.",
                           description="Validate files with line-accurate errors; the kind is "
                                       "told by the top-level keys (groups, route/receivers, "
                                       "tests). Exits 1 if any file has an error.")
    check.add_argument("files", nargs="+", metavar="FILE")
    check.set_defaults(run=run_check)
    test = sub.add_parser("test", help="Run rule unit tests (promtool-shaped).",
                          description="Run rule unit tests: input series in a+bxn notation, "
                                      "eval times and expected alerts. Exits 1 on a failure.")
    test.add_argument("files", nargs="+", metavar="FILE")
    test.set_defaults(run=run_test)
    listing = sub.add_parser("list", help="List current alerts from the API.")
    listing.add_argument("--json", action="store_true", help="Print the API's answer as JSON.")
    listing.add_argument("--state", choices=["pending", "firing", "resolved"],
                         help="Only alerts in this state.")
    add_setting_flags(listing, _CLIENT_SETTINGS)
    listing.set_defaults(run=run_list)
    _add_silence(sub)


def _add_silence(sub) -> None:
    silence = sub.add_parser("silence", help="Add, list or expire silences.")
    actions = silence.add_subparsers(dest="silence_command", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="Silence alerts matching every --matcher.")
    add.add_argument("--matcher", action="append", required=True, metavar="LABEL=VALUE",
                     help='A matcher such as severity=P1 or alertname=~"Tool.*" (repeatable).')
    add.add_argument("--author", required=True, help="Who silences (createdBy).")
    add.add_argument("--comment", required=True, help="Why.")
    add.add_argument("--duration", default="2h", help="How long, e.g. 30m, 2h. Default 2h.")
    add.add_argument("--json", action="store_true", help="Print the API's answer as JSON.")
    listing = actions.add_parser("list", help="List silences.")
    listing.add_argument("--json", action="store_true", help="Print the API's answer as JSON.")
    expire = actions.add_parser("expire", help="End a silence now.")
    expire.add_argument("id", metavar="ID")
    expire.add_argument("--json", action="store_true", help="Print the API's answer as JSON.")
    for parser, fn in ((add, run_silence_add), (listing, run_silence_list), (expire, run_silence_expire)):
        add_setting_flags(parser, _CLIENT_SETTINGS)
        parser.set_defaults(run=fn)


# --- check and test ------------------------------------------------------------------------

def check_file(path: str) -> tuple[str, list[str]]:
    """Validate one file; return (what it held, error messages)."""
    from agentsla import yamlsrc
    from agentsla.alerts.config import ROUTING_KEYS, load_routing_file
    from agentsla.alerts.rules.groups import parse_rule_text
    from agentsla.yamlsrc import SourceError

    try:
        text = Path(path).read_text()
        doc = yamlsrc.load(text, path)
    except OSError as exc:
        return "", [f"{path}: cannot read: {exc.strerror}"]
    except SourceError as exc:
        return "", [exc.message]
    if isinstance(doc, dict) and "groups" in doc:
        groups, errors = parse_rule_text(text, path)
        return f"{sum(len(g.rules) for g in groups)} rules", [e.message for e in errors]
    if isinstance(doc, dict) and any(k in doc for k in ROUTING_KEYS):
        try:
            routing = load_routing_file(path)
        except SourceError as exc:
            return "", [exc.message]
        return f"routing with {len(routing.receivers)} receivers", []
    if isinstance(doc, dict) and "tests" in doc:
        return _check_test_file(path, doc)
    return "", [f"{path}:1: expected a rule file (groups:), a routing file (route:, receivers:) "
                "or a rule test file (tests:)"]


def _check_test_file(path: str, doc: dict) -> tuple[str, list[str]]:
    from agentsla.alerts.rules.groups import load_rule_file
    from agentsla.yamlsrc import SourceError

    errors = []
    for name in doc.get("rule_files") or []:
        try:
            load_rule_file(Path(path).parent / name)
        except SourceError as exc:
            errors.append(exc.message)
    return f"{len(doc['tests'])} rule tests", errors


def run_check(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Check every file; print each error; exit 1 if any."""
    failed = False
    for path in args.files:
        what, errors = check_file(path)
        for error in errors:
            print(error, file=sys.stderr)
        if errors:
            failed = True
            print(f"{path}: FAILED ({len(errors)} error{'s' if len(errors) > 1 else ''})")
        else:
            print(f"{path}: OK ({what})")
    return 1 if failed else 0


def run_test(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Run rule unit tests; print diffs of failures; exit 1 if any failed."""
    from agentsla.alerts.rules.ruletest import run_file
    from agentsla.yamlsrc import SourceError

    failed = False
    for path in args.files:
        try:
            checked, failures = run_file(path)
        except (SourceError, OSError) as exc:
            print(getattr(exc, "message", None) or f"{path}: {exc}", file=sys.stderr)
            failed = True
            continue
        for failure in failures:
            print(f"FAILED {failure.where}\n{failure.message}", file=sys.stderr)
        failed = failed or bool(failures)
        status = "FAILED" if failures else "SUCCESS"
        print(f"{path}: {status} ({checked - len(failures)}/{checked} expectations met)")
    return 1 if failed else 0


# --- API clients ---------------------------------------------------------------------------

def _call(args, environ, method: str, path: str, body: Any = None) -> Any:
    config = config_from_args(args, environ)
    headers = {"Authorization": f"Bearer {config.server.api_token}"} if config.server.api_token else {}
    url = config.client.api.rstrip("/") + path
    try:
        response = httpx.request(method, url, json=body, headers=headers, timeout=30)
    except httpx.TransportError as exc:
        raise AgentslaError(f"cannot reach the agentsla API at {config.client.api}: {exc}; "
                            "is `agentsla serve` running?") from None
    try:
        data = response.json()
    except ValueError:
        raise AgentslaError(f"{path} answered HTTP {response.status_code} without JSON") from None
    if response.status_code >= 400:
        raise AgentslaError(f"{data.get('error', 'error')} (HTTP {response.status_code})")
    return data


def run_list(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Print current alerts."""
    data = _call(args, environ, "GET", "/api/v1/alerts")
    alerts = [a for a in data["alerts"] if not args.state or a["state"] == args.state]
    if args.json:
        print(json.dumps({**data, "alerts": alerts}, indent=2))
        return 0
    if not alerts:
        print("no alerts")
    for a in alerts:
        labels = ", ".join(f"{k}={v}" for k, v in sorted(a["labels"].items())
                           if k not in ("alertname", "severity"))
        flags = " [silenced]" if a.get("silenced") else (" [inhibited]" if a.get("inhibited") else "")
        print(f"{a['state']:<8} {a['labels'].get('severity', ''):<3} {a['labels'].get('alertname')}"
              f" {{{labels}}} value={a['value']:.4g}{flags}")
        if a["annotations"].get("summary"):
            print(f"         {a['annotations']['summary']}")
    return 0


def run_silence_add(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Create a silence and print its id."""
    data = _call(args, environ, "POST", "/api/v1/silences",
                 {"matchers": args.matcher, "createdBy": args.author, "comment": args.comment,
                  "duration": args.duration})
    print(json.dumps(data, indent=2) if args.json else data["silenceID"])
    return 0


def run_silence_list(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Print the silences."""
    data = _call(args, environ, "GET", "/api/v1/silences")
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    if not data["silences"]:
        print("no silences")
    for s in data["silences"]:
        print(f"{s['id']}  {s['status']['state']:<8} {', '.join(s['matchers'])}  "
              f"by {s['createdBy']}: {s['comment']}")
    return 0


def run_silence_expire(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Expire a silence."""
    data = _call(args, environ, "DELETE", f"/api/v1/silences/{args.id}")
    print(json.dumps(data, indent=2) if args.json else f"expired {args.id}")
    return 0
