"""Runaway loop: agents that took more steps than their `loop_limit`, or stopped on `loop_limit`.

A step is one logical model call made directly by the agent span (retries of a call are one
step); an agent that calls no model directly counts its logical child calls of any hop.
"""

from __future__ import annotations

from agentsla.queries.findings import evidence
from agentsla.queries.findings._finding import hop_label, make_finding
from agentsla.queries.store import ReadStore

TYPE = "runaway_loop"


def steps_beyond_limit(store: ReadStore, params) -> list[dict]:
    """Answer: which agents took more steps than their loop limit allows?

    Columns: hop_kind, hop_name, runs_over_limit, loop_limit, median_steps, max_steps,
    examples, first_ns, last_ns.
    """
    return evidence.ask(store, "steps_beyond_limit", params)


def loop_limit_errors(store: ReadStore, params) -> list[dict]:
    """Answer: which hops stopped with error_type loop_limit?

    Columns: hop_kind, hop_name, loop_limit_errors, tasks, loop_limit, examples, first_ns, last_ns.
    """
    return evidence.ask(store, "loop_limit_errors", params)


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find agents looping past their limit and loops stopped by it."""
    found = []
    for row in steps_beyond_limit(store, params):
        hint = (f"{hop_label(row)} took up to {row['max_steps']} steps (median "
                f"{row['median_steps']:.0f}) against a loop limit of {row['loop_limit']} in "
                f"{row['runs_over_limit']} run(s): the limit is not enforced; check it before "
                f"every model call")
        found.append(make_finding(TYPE, "steps_beyond_limit", row, "critical", hint))
    for row in loop_limit_errors(store, params):
        limit = f" of {row['loop_limit']}" if row["loop_limit"] else ""
        hint = (f"{hop_label(row)} hit its loop limit{limit} {row['loop_limit_errors']} time(s) "
                f"in {row['tasks']} task(s): the agent does not converge; add a stop condition "
                f"or detect repeated tool calls")
        found.append(make_finding(TYPE, "loop_limit_errors", row, "warning", hint))
    return found
