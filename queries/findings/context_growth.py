"""Context growth: input tokens climbing call after call within a task; long prompts timing out.

A task's model calls, in start order, grow when no call has fewer input tokens than the one
before and at least `context_growth_min_steps` calls have more. A short conversation (as few as
`context_multiply_min_calls` calls) whose prompt multiplies while the model slows down with it
is the steep kind. Separately, a model whose timed-out calls had much longer prompts than its
other calls is blamed on prompt length.
"""

from __future__ import annotations

from agentsla.queries.findings import evidence
from agentsla.queries.findings._finding import dur, hop_label, make_finding
from agentsla.queries.store import ReadStore

TYPE = "context_growth"


#: Evidence of each growth rule (the question returns the columns of both).
_GROWTH_EVIDENCE = {
    "growing_context": ("tasks", "calls_per_task", "first_tokens", "final_tokens",
                        "max_final_tokens", "tokens_per_step", "timeouts_or_overflows"),
    "multiplying_context": ("tasks", "calls_per_task", "first_tokens", "final_tokens",
                            "token_factor", "token_factor_per_call", "first_latency_ms",
                            "final_latency_ms", "latency_factor", "ms_per_1k_tokens",
                            "timeouts_or_overflows"),
}


def growing_contexts(store: ReadStore, params) -> list[dict]:
    """Answer: which task types have model calls whose prompts grow step by step past the limit,
    or multiply over a short conversation while the model slows down?

    Columns: task_type, rule ('growing_context' or 'multiplying_context'), hop_kind, hop_name
    (most used model), tasks, calls_per_task, first_tokens, final_tokens, max_final_tokens,
    tokens_per_step, token_factor, token_factor_per_call, first_latency_ms, final_latency_ms,
    latency_factor, ms_per_1k_tokens, timeouts_or_overflows, examples (the last call of each
    task), first_ns, last_ns (medians over the tasks).
    """
    return evidence.ask(store, "growing_contexts", params)


def long_prompts_timing_out(store: ReadStore, params) -> list[dict]:
    """Answer: which models time out on prompts much longer than those of their other calls?

    Columns: hop_kind, hop_name, calls, timeouts, timed_out_median_tokens,
    other_median_tokens, ms_per_1k_tokens, latency_prompt_corr, examples, first_ns, last_ns.
    """
    return evidence.ask(store, "long_prompts_timing_out", params)


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find growing contexts per task type and prompt-length timeouts per model."""
    found = []
    for row in growing_contexts(store, params):
        severity = "warning" if row["timeouts_or_overflows"] else "info"
        found.append(make_finding(TYPE, row["rule"], row, severity, _growth_hint(row),
                                  _GROWTH_EVIDENCE[row["rule"]]))
    for row in long_prompts_timing_out(store, params):
        slope = row["ms_per_1k_tokens"]
        per_k = f"; latency grows {dur(slope)} per 1k tokens" if slope and slope > 0 else ""
        hint = (f"{hop_label(row)}: {row['timeouts']} call(s) timed out with a median prompt of "
                f"{row['timed_out_median_tokens']:.0f} tokens vs {row['other_median_tokens']:.0f} "
                f"for the others{per_k}; cap the prompt or scale the timeout with its length")
        found.append(make_finding(TYPE, "long_prompts_time_out", row, "warning", hint))
    return found


def _growth_hint(row: dict) -> str:
    tasks = row["task_type"] or "tasks"
    if row["rule"] == "growing_context":
        return (f"{tasks}: input tokens grow ~{row['tokens_per_step']:.0f} per model call, from "
                f"{row['first_tokens']:.0f} to {row['final_tokens']:.0f} (median; max "
                f"{row['max_final_tokens']}) over ~{row['calls_per_task']:.0f} calls; summarize "
                f"or trim the history and drop stale tool output")
    return (f"{tasks}: the prompt grew {row['token_factor']:.1f}× over "
            f"~{row['calls_per_task']:.0f} model calls, {row['token_factor_per_call']:.1f}× per "
            f"call ({row['first_tokens']:.0f} → {row['final_tokens']:.0f} input tokens, median) "
            f"and {hop_label(row)} slowed {row['latency_factor']:.1f}× with it "
            f"({dur(row['first_latency_ms'])} → {dur(row['final_latency_ms'])}); send only what "
            f"the next step needs: summarize tool output instead of appending it")
