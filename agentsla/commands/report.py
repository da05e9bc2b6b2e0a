"""`agentsla report`: an SLA summary (rates, root causes, worst hops, SLO burn) from the query API."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Mapping

from rich.console import Console
from rich.table import Table

from agentsla.client import ApiClient
from agentsla.commands._flags import add_setting_flags, config_from_args
from agentsla.queries._sql import DIMENSIONS

_RATES = (("success", "success"), ("degraded", "degraded"), ("failed", "failed"),
          ("budget_exhausted", "budget"), ("rejected", "rejected"), ("lost", "lost"))


def add_parser(subparsers) -> None:
    """Add `agentsla report` to the CLI."""
    parser = subparsers.add_parser(
        "report", help="Print task SLAs, top root causes, worst hops and SLO burn.",
        description="Summarize a time window from the query API of a running `agentsla serve`.")
    parser.add_argument("--window", default=None, help="Window ending now (or at --to), e.g. "
                        "15m, 1h, 7d. Default 1h.")
    parser.add_argument("--from", dest="from_", metavar="TIME",
                        help="Window start: RFC 3339 or unix seconds (instead of --window).")
    parser.add_argument("--to", metavar="TIME", help="Window end: RFC 3339 or unix seconds.")
    parser.add_argument("--group-by", choices=DIMENSIONS, default="task_type",
                        help="Break the SLA table down by this dimension (default task_type).")
    parser.add_argument("--task-type", help="Only tasks of this type.")
    parser.add_argument("--top", type=int, default=5, help="Rows of root causes and hops (5).")
    parser.add_argument("--json", action="store_true", help="Print the data as JSON.")
    add_setting_flags(parser, ["api"])
    parser.set_defaults(run=run)


def collect(client: ApiClient, args: argparse.Namespace) -> dict[str, Any]:
    """Fetch everything the report shows for the window the arguments name."""
    window = {"window": args.window, "from": args.from_, "to": args.to}
    scope = {**window, "task_type": args.task_type}
    return {
        "sla": client.sla(**scope, group_by=args.group_by),
        "root_causes": client.root_causes(**scope, limit=args.top),
        "hops": client.hops(**scope),
        "slo": client.slo(to=args.to, task_type=args.task_type),
    }


def run(args: argparse.Namespace, environ: Mapping[str, str], client: ApiClient | None = None,
        console: Console | None = None) -> int:
    """Print the report (tables, or JSON with --json); 0 on success."""
    if client is None:
        client = ApiClient.from_config(config_from_args(args, environ))
    with client:
        data = collect(client, args)
    if args.json:
        print(json.dumps(data, indent=2), file=sys.stdout)
        return 0
    render(data, console or Console(), args.group_by, args.top)
    return 0


def pct(value: float | None) -> str:
    """Format a ratio as a percentage (— for none)."""
    return "—" if value is None else f"{value * 100:.1f}%"


def duration(ms: float | None) -> str:
    """Format milliseconds as ms below a second, else seconds."""
    if ms is None:
        return "—"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def render(data: Mapping[str, Any], console: Console, group_by: str, top: int = 5) -> None:
    """Print the report's tables."""
    window = data["sla"]["window"]
    console.print(f"[bold]agentsla report[/bold]  {window['from']} → {window['to']}")
    console.print(_sla_table(data["sla"], group_by))
    console.print(_latency_table(data["sla"], group_by))
    console.print(_root_cause_table(data["root_causes"]))
    console.print(_hop_table(data["hops"]["hops"], top))
    console.print(_slo_table(data["slo"]["slos"]))


def _sla_rows(sla: Mapping[str, Any], group_by: str) -> list[tuple[str, Mapping[str, Any]]]:
    groups = [("(none)" if g[group_by] is None else str(g[group_by]), g)
              for g in sla.get("groups") or []]
    return [("all", sla["totals"])] + groups


def _table(title: str, headers: tuple[str, ...]) -> Table:
    table = Table(title=title)
    for i, header in enumerate(headers):
        table.add_column(header, justify="left" if i == 0 else "right",
                         overflow="fold" if i == 0 else "ellipsis")
    return table


def _sla_table(sla: Mapping[str, Any], group_by: str) -> Table:
    table = _table("Task outcomes (rates over finished tasks; cancelled excluded)",
                   (group_by, "finished", *(label for _, label in _RATES), "gateway ok"))
    for name, row in _sla_rows(sla, group_by):
        table.add_row(name, str(row["finished"]), *(pct(row[f"{key}_rate"]) for key, _ in _RATES),
                      pct(row["gateway_success_rate"]))
    return table


def _latency_table(sla: Mapping[str, Any], group_by: str) -> Table:
    table = _table("Task latency and budget use",
                   (group_by, "running", "cancelled", "p50", "p95", "p99", "budget p95"))
    for name, row in _sla_rows(sla, group_by):
        table.add_row(name, str(row["in_progress"]), str(row["cancelled"]),
                      duration(row["latency_p50_ms"]), duration(row["latency_p95_ms"]),
                      duration(row["latency_p99_ms"]), pct(row["budget_used_p95"]))
    return table


def _root_cause_table(causes: Mapping[str, Any]) -> Table:
    table = _table(f"Top root causes: first failing hop of {causes['blamed_tasks']} "
                   "failed, degraded, budget-exhausted or rejected tasks",
                   ("hop", "reason", "tasks", "share", "s lost", "example"))
    for row in causes["root_causes"]:
        hop = f"{row['ffh_kind'] or '?'}:{row['ffh_name'] or '?'}"
        table.add_row(hop, row["ffh_reason"] or "?", str(row["tasks"]), pct(row["share"]),
                      f"{row['seconds_lost']:.1f}", (row["example_task_ids"] or [""])[0])
    return table


def _hop_table(hops: list[dict], top: int) -> Table:
    table = _table("Worst hops (by error rate)",
                   ("hop", "calls", "tries/call", "errors", "timeouts", "429s", "p95", "p99"))
    worst = sorted(hops, key=lambda h: (-(h["error_rate"] or 0), -h["calls"]))[:top]
    for h in worst:
        table.add_row(f"{h['hop_kind']}:{h['hop_name']}", str(h["calls"]),
                      f"{h['attempts_per_call']:.2f}", pct(h["error_rate"]),
                      pct(h["timeout_rate"]), pct(h["rate_limited_rate"]),
                      duration(h["latency_p95_ms"]), duration(h["latency_p99_ms"]))
    return table


def _slo_table(slos: list[dict]) -> Table:
    table = _table("SLOs (burn 1 = spending the error budget exactly over the period)",
                   ("task type", "objective", "budget left", "5m", "1h", "6h", "1d", "3d"))
    for s in slos:
        burns = [_burn(s["burn_rates"].get(w)) for w in ("5m", "1h", "6h", "1d", "3d")]
        table.add_row(s["task_type"] or "(none)", pct(s["objective"]),
                      pct(s["error_budget_remaining"]), *burns)
    return table


def _burn(value: float | None) -> str:
    if value is None:
        return "—"
    text = f"{value:.1f}×"
    return f"[red]{text}[/red]" if value >= 14.4 else f"[yellow]{text}[/yellow]" if value >= 1 else text
