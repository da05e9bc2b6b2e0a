"""Agent-platform traffic and incident scenarios, exported as real OTLP."""
