"""OTLP receivers, decoding, normalization to span contract v1, the writer and task materialization."""
