"""Agent-platform traffic and incident scenarios, exported as real OTLP.

`run(schedule, seed=..., tasks=..., duration=..., exporter=... or endpoint=..., speed=...,
truth_path=...) -> Summary` is the API; `agentsla simulate` and `agentsla demo` wrap it.
"""

from agentsla.simulator.runner import Summary, run
from agentsla.simulator.scenarios import SCENARIOS, Segment, parse_schedule

__all__ = ["SCENARIOS", "Segment", "Summary", "parse_schedule", "run"]
