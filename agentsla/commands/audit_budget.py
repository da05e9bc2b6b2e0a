"""`agentsla audit-budget CHAIN.yaml`: check a declared timeout chain before it causes an outage."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Mapping

from agentsla.budget_audit import RULES, audit, load_chain, report


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add `audit-budget` with the chain file and --json."""
    parser = sub.add_parser(
        "audit-budget", help="check a declared timeout chain against the budget rules",
        description="Read a timeout chain (hops from the outside in, with their timeouts and "
                    "retry policies; see docs/findings.md) and report every hop without a "
                    "timeout, every inner worst case that does not fit what its caller has "
                    "left, calls whose timeouts sum past the limit, and retried timeouts, with "
                    "the arithmetic. Exit 0 when clean, 1 on violations, 2 on a malformed file.")
    parser.add_argument("chain", metavar="CHAIN.yaml", help="the timeout chain to audit")
    parser.add_argument("--json", action="store_true", help="print the audit as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Audit the chain; print the violations; return 1 if there are any."""
    chain = load_chain(args.chain)
    violations = audit(chain)
    if args.json:
        print(json.dumps(report(chain, violations), indent=2))
        return 1 if violations else 0
    out = sys.stdout
    for hop in report(chain, violations)["hops"]:
        calls = f" ×{hop['expected_calls']} per task" if hop["expected_calls"] > 1 else ""
        print(f"  {hop['name']:<12} worst case {hop['worst_case'] or 'unbounded'}{calls}", file=out)
    if not violations:
        print(f"{chain.path}: OK, every worst case fits", file=out)
        return 0
    print(f"{chain.path}: {len(violations)} violation(s)", file=out)
    for v in violations:
        print(f"{chain.path}:{v.line}: [{RULES[v.rule]}] {v.message}", file=out)
    return 1
