"""Fixtures of the agentsla-budget tests: an in-memory span pipeline and a slow local server."""

from __future__ import annotations

from typing import Iterator

import pytest
from budgetkit import SlowServer, Spans, slow_server, span_pipeline


@pytest.fixture
def spans() -> Iterator[Spans]:
    """A tracer provider with the budget processor, keeping ended spans in memory."""
    pipeline = span_pipeline()
    yield pipeline
    pipeline.provider.shutdown()


@pytest.fixture
def remote() -> Iterator[SlowServer]:
    """A real http.server on loopback that records what each request carried."""
    with slow_server() as running:
        yield running
