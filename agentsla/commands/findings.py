"""`agentsla findings`: the timeout-budget findings of a window, from the query API."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Mapping

from rich.console import Console
from rich.table import Table

from agentsla.client import ApiClient
from agentsla.commands._flags import add_setting_flags, config_from_args
from agentsla.contract import FINDING_TYPES

_STYLES = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def add_parser(subparsers) -> None:
    """Add `agentsla findings` to the CLI."""
    parser = subparsers.add_parser(
        "findings", help="List timeout-budget findings (inversions, retries, ghost work, ...).",
        description="List the findings whose evidence ended in a time window, most severe "
                    "first, with the numbers and a hint for the fix (see docs/findings.md).")
    parser.add_argument("--window", default=None,
                        help="Window ending now (or at --to), e.g. 15m, 1h, 7d. Default 1h.")
    parser.add_argument("--from", dest="from_", metavar="TIME",
                        help="Window start: RFC 3339 or unix seconds (instead of --window).")
    parser.add_argument("--to", metavar="TIME", help="Window end: RFC 3339 or unix seconds.")
    parser.add_argument("--kind", choices=FINDING_TYPES, metavar="TYPE",
                        help="Only findings of this type: " + ", ".join(FINDING_TYPES) + ".")
    parser.add_argument("--task", metavar="TASK_ID",
                        help="What is wrong with this task: what its own spans show, and the "
                             "findings of a window as long as --window around it that name it.")
    parser.add_argument("--trace", metavar="TRACE_ID",
                        help="As --task, for the task(s) holding this trace.")
    parser.add_argument("--json", action="store_true", help="Print the API's answer as JSON.")
    add_setting_flags(parser, ["api"])
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, environ: Mapping[str, str], client: ApiClient | None = None,
        console: Console | None = None) -> int:
    """Fetch and print the findings; 0 on success (findings are data, not failure)."""
    if client is None:
        client = ApiClient.from_config(config_from_args(args, environ))
    with client:
        answer = client.findings(window=args.window, to=args.to, kind=args.kind,
                                 task_id=args.task, trace_id=args.trace,
                                 **{"from": args.from_})
    if args.json:
        print(json.dumps(answer, indent=2), file=sys.stdout)
        return 0
    render(answer, console or Console())
    return 0


def evidence_summary(evidence: Mapping[str, Any], most: int = 5) -> str:
    """Summarize a finding's evidence as `name=value` pairs, durations in seconds."""
    parts = []
    for name, value in list(evidence.items())[:most]:
        if value is None:
            continue
        if name.endswith("_ms") and isinstance(value, (int, float)):
            text = f"{value:.0f}ms" if abs(value) < 1000 else f"{_number(value / 1000)}s"
            parts.append(f"{name[:-3]}={text}")
        else:
            parts.append(f"{name}={_number(value)}")
    return ", ".join(parts)


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"
    return str(value)


def render(answer: Mapping[str, Any], console: Console) -> None:
    """Print the findings as a table (type, severity, hop, evidence, hint)."""
    window = answer.get("window") or {}
    found = answer.get("findings") or []
    title = f"Findings {window.get('from', '?')} → {window.get('to', '?')}"
    asked = answer.get("task_id") or answer.get("trace_id")
    if asked:
        title = f"Findings of {'task' if answer.get('task_id') else 'trace'} {asked}"
    if not found:
        console.print(f"{title}: none.")
        return
    table = Table(title=title, show_lines=True)
    for column in ("type", "severity", "hop", "evidence", "hint"):
        table.add_column(column, overflow="fold")
    for f in found:
        hop = f.get("hop") or {}
        where = f"{hop.get('kind')} {hop.get('name')}" if hop else (f.get("task_type") or "—")
        severity = f.get("severity", "")
        table.add_row(f"{f.get('type')}\n({f.get('rule')})",
                      f"[{_STYLES.get(severity, '')}]{severity}[/]", where,
                      evidence_summary(f.get("evidence") or {}), f.get("hint", ""))
    console.print(table)
