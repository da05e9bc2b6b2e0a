"""Finding thresholds: one table of documented defaults, merged with the config file's `findings:`.

Every threshold is chosen so that healthy traffic (timeouts that fit, connection errors recovered
by one retry, fast tools) stays quiet. docs/findings.md lists them all (a test keeps it in step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from agentsla.config import parse_duration
from agentsla.errors import ConfigError


@dataclass(frozen=True)
class Threshold:
    """One threshold: its name, default, the finding it tunes and the help shown in the docs."""

    name: str
    default: float
    finding: str
    help: str


THRESHOLDS: tuple[Threshold, ...] = (
    Threshold("budget_inversion_min_share", 0.05, "budget_inversion",
              "Share of a hop's calls whose worst case exceeded the budget left, before "
              "reporting."),
    Threshold("missing_timeout_long_ms", 30_000, "missing_timeout",
              "A call without timeout that ran longer than this is reported."),
    Threshold("missing_timeout_p50_factor", 10.0, "missing_timeout",
              "... or one that ran longer than this many times the hop's median."),
    Threshold("missing_timeout_floor_ms", 5_000, "missing_timeout",
              "... and longer than this (so fast hops with jitter stay quiet)."),
    Threshold("missing_timeout_critical_factor", 4.0, "missing_timeout",
              "A call without timeout that ran this many times missing_timeout_long_ms makes "
              "the finding critical (as does a task that ended badly)."),
    Threshold("retry_attempts_per_call", 1.5, "retry_amplification",
              "Mean attempts per logical call of a hop at or above which it is reported."),
    Threshold("retry_critical_factor", 2.0, "retry_amplification",
              "Mean attempts per call at this many times retry_attempts_per_call make the "
              "finding critical."),
    Threshold("retry_min_calls", 10, "retry_amplification",
              "Logical calls of a hop needed before its mean attempts are judged."),
    Threshold("retried_timeouts_min", 1, "retry_amplification",
              "Timed-out attempts followed by another attempt, before reporting."),
    Threshold("retry_storm_min_retries", 20, "retry_amplification",
              "Retries of one hop within one minute that make a storm ..."),
    Threshold("retry_storm_share", 0.5, "retry_amplification",
              "... when at least this share of that minute's attempts were retries."),
    Threshold("ghost_work_grace_ms", 1_000, "ghost_work",
              "A span counts as ghost work when it ended this long after the root ended "
              "or the deadline passed."),
    Threshold("ghost_work_critical_s", 300, "ghost_work",
              "Ghost seconds of one hop at which the finding is critical."),
    Threshold("duplicate_lookback_s", 86_400, "duplicate_side_effect",
              "How far before the window an earlier execution of a key is looked for (an "
              "idempotency key is commonly honoured for 24 h; a longer reach reads more spans)."),
    Threshold("wait_min_gap_ms", 500, "wait_amplification",
              "Idle gaps between a parent's children shorter than this are ignored."),
    Threshold("wait_idle_share", 0.5, "wait_amplification",
              "Share of a parent's duration spent idle between children, before reporting ..."),
    Threshold("wait_min_idle_ms", 5_000, "wait_amplification",
              "... when the parent was idle at least this long."),
    Threshold("polling_min_gaps", 4, "wait_amplification",
              "Intervals between one parent's same-name children (model calls excepted) "
              "needed to call them a poll loop ..."),
    Threshold("polling_max_cv", 0.2, "wait_amplification",
              "... when the intervals' coefficient of variation (stddev / mean) is at most this."),
    Threshold("polling_late_ms", 1_000, "wait_amplification",
              "Median lateness of a poll loop (the awaited job's end to the end of the poll that "
              "saw it; the interval when the job is not in the trace) at which it is a warning, "
              "else info."),
    Threshold("context_growth_min_steps", 4, "context_growth",
              "Consecutive model calls of a task whose input tokens grew, before reporting ..."),
    Threshold("context_growth_final_tokens", 8_000, "context_growth",
              "... when the last call's input tokens exceed this."),
    Threshold("context_multiply_min_calls", 3, "context_growth",
              "Model calls of a task, never shrinking, enough to call a multiplying prompt ..."),
    Threshold("context_multiply_factor", 1.6, "context_growth",
              "... when the input tokens grew at least this many times per call (geometric mean "
              "of last / first) ..."),
    Threshold("context_multiply_min_tokens", 4_000, "context_growth",
              "... and at least this many ..."),
    Threshold("context_multiply_latency_factor", 1.5, "context_growth",
              "... while the last call took at least this many times as long as the first."),
    Threshold("context_timeout_prompt_ratio", 2.0, "context_growth",
              "Median prompt of a model's timed-out calls over that of its other calls, at or "
              "above which long prompts are blamed for the timeouts ..."),
    Threshold("context_timeout_duration_quantile", 0.9, "context_growth",
              "... when the timed-out calls' median duration reaches this quantile of the "
              "other calls' durations: calls a deadline cut short (a remaining budget, a "
              "cancelled task) ran shorter than their peers, and their prompts are not to "
              "blame (0: as long as the fastest of them)."),
    Threshold("rate_limit_min_absorbed", 5, "rate_limit_masking",
              "429s absorbed by retries (the call then succeeded), before reporting."),
    Threshold("rate_limit_min_share", 0.05, "rate_limit_masking",
              "... and at least this share of the hop's logical calls absorbed one: a rare 429 "
              "that a retry absorbs is retrying working, not a storm hidden by retries."),
    Threshold("rate_limit_p99_ratio", 2.0, "rate_limit_masking",
              "p99 of calls that absorbed 429s over p99 of the others at which it is critical."),
    Threshold("false_failover_min_failures", 2, "false_failover",
              "Failed failovers to one backup, before reporting ..."),
    Threshold("false_failover_min_share", 0.1, "false_failover",
              "... when at least this share of the failovers to it failed."),
    Threshold("false_failover_critical_share", 0.5, "false_failover",
              "Share of the failovers to one backup that failed at which it is critical."),
    Threshold("stream_stall_ttft_ms", 10_000, "stream_stall",
              "Time to first token above which a streamed model call stalled."),
    Threshold("stream_stall_min_calls", 3, "stream_stall",
              "Stalled calls of one model, before reporting ..."),
    Threshold("stream_stall_min_share", 0.05, "stream_stall",
              "... when at least this share of its streamed calls stalled."),
    Threshold("saturation_wait_growth", 3.0, "saturation",
              "p90 queue wait in the last quarter of the evidence over the first quarter, at or "
              "above which waits are rising ..."),
    Threshold("saturation_min_wait_ms", 1_000, "saturation",
              "... when the last quarter's p90 wait is at least this long."),
    Threshold("saturation_budget_share", 0.2, "saturation",
              "... and at least this share of those tasks' budget (when they carry one)."),
    Threshold("saturation_min_early_waits", 3, "saturation",
              "Queue waits in the first quarter of the evidence needed to compare against."),
    Threshold("saturation_min_rejections", 5, "saturation",
              "Rejected tasks at one hop, before reporting ..."),
    Threshold("saturation_rejection_share", 0.01, "saturation",
              "... when they are at least this share of the tasks finished in the window."),
    Threshold("saturation_rejection_critical_share", 0.05, "saturation",
              "Share of the finished tasks rejected at one hop at which it is critical."),
)

DEFAULT_THRESHOLDS: Mapping[str, float] = {t.name: t.default for t in THRESHOLDS}


def _parse_value(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ConfigError(f"findings.{name}: bad value {value!r}: expected a number")
    if isinstance(value, str) and name.endswith(("_ms", "_s")):
        # Durations may be written as in the rest of the config file: 30s, 500ms, 2m.
        try:
            seconds = parse_duration(value)
        except ValueError as exc:
            raise ConfigError(f"findings.{name}: bad value {value!r}: {exc}") from None
        return seconds * 1000.0 if name.endswith("_ms") else seconds
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"findings.{name}: bad value {value!r}: expected a number") from None
    if number < 0:
        raise ConfigError(f"findings.{name}: bad value {value!r}: must not be negative")
    if name.endswith("_quantile") and number > 1:
        raise ConfigError(f"findings.{name}: bad value {value!r}: a quantile is at most 1")
    return number


def resolve_thresholds(overrides: Mapping[str, Any] | None) -> dict[str, float]:
    """Merge the config file's `findings:` overrides onto the defaults; unknown keys are errors."""
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(DEFAULT_THRESHOLDS))
    if unknown:
        raise ConfigError(f"findings: unknown threshold(s) {', '.join(unknown)}; "
                          "see docs/findings.md for the list")
    merged = dict(DEFAULT_THRESHOLDS)
    merged.update({name: _parse_value(name, value) for name, value in overrides.items()})
    return merged
