"""Span contract v1: the vocabulary agentsla normalizes every instrumentation into.

See docs/span-contract.md for the attribute table and the mapping from the OpenTelemetry GenAI
conventions and OpenInference.
"""

HOP_KINDS = ("gateway", "scheduler", "queue", "agent", "model", "tool", "cache", "storage", "other")

#: Outcomes of a finished task, in the order the partition of rates is reported.
FINISHED_OUTCOMES = ("success", "degraded", "failed", "budget_exhausted", "rejected", "lost",
                     "cancelled")
OUTCOMES = FINISHED_OUTCOMES + ("in_progress",)
#: Outcomes a root's `task.outcome` attribute may declare.
DECLARABLE_OUTCOMES = ("success", "degraded", "failed", "budget_exhausted", "rejected", "cancelled")
#: Outcomes whose first failing hop is reported.
BLAMED_OUTCOMES = ("failed", "degraded", "budget_exhausted", "rejected")

ERROR_TYPES = ("timeout", "rate_limited", "circuit_open", "connection_error", "budget_exhausted",
               "server_error", "invalid_response", "context_overflow", "loop_limit", "rejected",
               "cancelled")

FALLBACK_KINDS = ("partial_result", "cached", "backup_model", "rule_based", "default_value",
                  "error_message")

CIRCUIT_STATES = ("closed", "open", "half_open")

FINDING_TYPES = ("budget_inversion", "retry_amplification", "ghost_work", "missing_timeout",
                 "wait_amplification", "context_growth", "rate_limit_masking", "false_failover",
                 "runaway_loop", "duplicate_side_effect", "stream_stall", "saturation")
