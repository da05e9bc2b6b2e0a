"""Processing: OTLP spans normalized to span contract v1 (vocabularies, inference, limits)."""
