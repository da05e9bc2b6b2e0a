"""The collector, as stages: receivers/ → processing/ → tasks/ (materialization) → store/ (schema, writer)."""
