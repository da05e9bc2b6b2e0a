"""agentsla-budget: one time budget per task, carried to every hop, in agentsla's span contract."""

from agentsla_budget.budget import (Budget, BudgetExhausted, attempts_that_fit, current, deadline,
                                    expired, remaining_ms, task, timeout_for)
from agentsla_budget.hop import Hop, hop
from agentsla_budget.messages import (MessageExpired, admit, consume, extract_message,
                                      inject_message)
from agentsla_budget.processor import BudgetSpanProcessor
from agentsla_budget.propagation import BudgetPropagator
from agentsla_budget.retry import RetryPolicy, call_with_retries, transient
from agentsla_budget.wire import HEADER

__all__ = [
    "HEADER", "Budget", "BudgetExhausted", "BudgetPropagator", "BudgetSpanProcessor", "Hop",
    "MessageExpired", "RetryPolicy", "admit", "attempts_that_fit", "call_with_retries", "consume",
    "current", "deadline", "expired", "extract_message", "hop", "inject_message", "remaining_ms",
    "task", "timeout_for", "transient",
]
