"""`agentsla incidents`: list, show, acknowledge, annotate and export incidents through the API.

    agentsla incidents list [--state open|resolved] [--json]
    agentsla incidents show ID [--json]
    agentsla incidents ack ID --author ana
    agentsla incidents note ID --kind change --author ana --text "rolled back deploy 4711"
    agentsla incidents export ID --format md -o postmortem.md
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Mapping

from agentsla.client import ApiClient
from agentsla.contract import FailingHop, hop_label
from agentsla.commands._flags import add_setting_flags, config_from_args

_CLIENT_SETTINGS = ["api", "api_token"]
FORMATS = ("json", "csv", "md", "html")


def add_parser(subparsers) -> None:
    """Add `agentsla incidents` and its subcommands."""
    parser = subparsers.add_parser(
        "incidents", help="List, show, acknowledge, annotate and export incidents.",
        description="Work with the incidents the alert service opened (see docs/incidents.md).")
    sub = parser.add_subparsers(dest="incidents_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="List incidents, newest first.")
    listing.add_argument("--state", choices=["open", "resolved"], help="Only in this state.")
    listing.add_argument("--from", dest="from_", metavar="TIME", help="RFC 3339 or unix seconds.")
    listing.add_argument("--to", metavar="TIME", help="RFC 3339 or unix seconds.")
    show = sub.add_parser("show", help="Show one incident and its timeline.")
    ack = sub.add_parser("ack", help="Acknowledge an incident.")
    ack.add_argument("--author", required=True, help="Who acknowledges.")
    note = sub.add_parser("note", help="Add a note, a change marker or a mitigation.")
    note.add_argument("--kind", choices=["note", "change", "mitigated"], default="note",
                      help="note (default), change (a deploy, model switch, config change) "
                           "or mitigated.")
    note.add_argument("--author", required=True, help="Who writes.")
    note.add_argument("--text", required=True, help="What happened.")
    note.add_argument("--at", metavar="TIME", help="When (RFC 3339 or unix seconds); default now.")
    export = sub.add_parser("export", help="Export an incident: json, csv, md (post-mortem), html.")
    export.add_argument("--format", choices=FORMATS, default="md", help="Default md.")
    export.add_argument("-o", "--output", metavar="FILE",
                        help="Write to FILE (default: standard output).")
    for action, fn in ((listing, run_list), (show, run_show), (ack, run_ack), (note, run_note),
                       (export, run_export)):
        if action is not listing:
            action.add_argument("id", metavar="ID", help="The incident id (INC-...).")
        if action is not export:
            action.add_argument("--json", action="store_true", help="Print the API's answer as JSON.")
        add_setting_flags(action, _CLIENT_SETTINGS)
        action.set_defaults(run=fn)


def _client(args: argparse.Namespace, environ: Mapping[str, str]) -> ApiClient:
    return ApiClient.from_config(config_from_args(args, environ))


def _when(at: float | None) -> str:
    return "-" if at is None else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at))


def _mins(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 60:.1f}m"


def run_list(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Print incidents."""
    with _client(args, environ) as client:
        data = client.incidents(state=args.state, **{"from": args.from_, "to": args.to})
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    if not data["incidents"]:
        print("no incidents")
    for inc in data["incidents"]:
        print(f"{inc['id']}  {inc['state']:<8} {inc['severity']}  detected {_when(inc['detected_at'])}"
              f"  TTD {_mins(inc['time_to_detect_s'])} TTA {_mins(inc['time_to_acknowledge_s'])}"
              f" TTR {_mins(inc['time_to_resolve_s'])}  {inc['title']}")
    return 0


def run_show(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Print one incident: lifecycle, impact and timeline."""
    with _client(args, environ) as client:
        doc = client.incident(args.id)
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    inc = doc["incident"]
    print(f"{inc['id']}: {inc['title']}\n  state {inc['state']}, severity {inc['severity']}, "
          "first failing hop " + hop_label(FailingHop.from_json(inc.get("first_failing_hop")),
                                           share=inc.get("first_failing_hop_share")))
    for name in ("started", "detected", "acknowledged", "mitigated", "resolved"):
        print(f"  {name:<13}{_when(inc.get(f'{name}_at'))}")
    tasks = (doc.get("impact") or {}).get("tasks")
    if tasks:
        print("  impact       " + ", ".join(f"{k} {v}" for k, v in tasks.items() if v))
    print("timeline:")
    for entry in doc["timeline"]:
        print(f"  {entry['time']}  {entry['kind']:<19} {entry['title']}")
    return 0


def run_ack(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Acknowledge an incident."""
    with _client(args, environ) as client:
        data = client.ack_incident(args.id, args.author, source="cli")
    print(json.dumps(data, indent=2) if args.json else
          f"acknowledged {args.id} at {_when(data['incident']['acknowledged_at'])}")
    return 0


def run_note(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Add a note, change marker or mitigation to an incident."""
    extra = {"at": args.at} if args.at else {}
    with _client(args, environ) as client:
        data = client.note_incident(args.id, args.kind, args.author, args.text, source="cli",
                                    **extra)
    print(json.dumps(data, indent=2) if args.json else f"added {args.kind} to {args.id}")
    return 0


def run_export(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Write an incident export to a file or standard output."""
    with _client(args, environ) as client:
        text = client.incident_export(args.id, args.format)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output} ({args.format}, {len(text.encode())} bytes)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
