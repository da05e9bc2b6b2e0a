"""Context growth: input tokens climbing call after call within a task; long prompts timing out.

A task's model calls, in start order, grow when no call has fewer input tokens than the one
before and at least `context_growth_min_steps` calls have more. Separately, a model whose
timed-out calls had much longer prompts than its other calls is blamed on prompt length.
"""

from __future__ import annotations

from agentsla.queries.findings._finding import dur, hop_label, make_finding
from agentsla.queries.store import ReadStore

TYPE = "context_growth"


def growing_contexts(store: ReadStore, params) -> list[dict]:
    """Answer: which task types have model calls whose prompts grow step by step past the limit?

    Columns: task_type, hop_kind, hop_name (most used model), tasks, calls_per_task,
    first_tokens, final_tokens, max_final_tokens, tokens_per_step, timeouts_or_overflows,
    examples (the last call of each task), first_ns, last_ns.
    """
    return store.rows("findings/growing_contexts", params)


def long_prompts_timing_out(store: ReadStore, params) -> list[dict]:
    """Answer: which models time out on prompts much longer than those of their other calls?

    Columns: hop_kind, hop_name, calls, timeouts, timed_out_median_tokens,
    other_median_tokens, ms_per_1k_tokens, latency_prompt_corr, examples, first_ns, last_ns.
    """
    return store.rows("findings/long_prompts_timing_out", params)


def detect(store: ReadStore, params, th) -> list[dict]:
    """Find growing contexts per task type and prompt-length timeouts per model."""
    found = []
    for row in growing_contexts(store, params):
        severity = "warning" if row["timeouts_or_overflows"] else "info"
        hint = (f"{row['task_type'] or 'tasks'}: input tokens grow ~{row['tokens_per_step']:.0f} "
                f"per model call, from {row['first_tokens']:.0f} to {row['final_tokens']:.0f} "
                f"(median; max {row['max_final_tokens']}) over ~{row['calls_per_task']:.0f} "
                f"calls; summarize or trim the history and drop stale tool output")
        found.append(make_finding(TYPE, "growing_context", row, severity, hint))
    for row in long_prompts_timing_out(store, params):
        slope = row["ms_per_1k_tokens"]
        per_k = f"; latency grows {dur(slope)} per 1k tokens" if slope else ""
        hint = (f"{hop_label(row)}: {row['timeouts']} call(s) timed out with a median prompt of "
                f"{row['timed_out_median_tokens']:.0f} tokens vs {row['other_median_tokens']:.0f} "
                f"for the others{per_k}; cap the prompt or scale the timeout with its length")
        found.append(make_finding(TYPE, "long_prompts_time_out", row, "warning", hint))
    return found
