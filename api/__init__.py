"""The HTTP API on :8710: one router for the query, alert and incident routes, and /metrics."""
