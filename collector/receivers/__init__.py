"""Receivers: OTLP/HTTP and OTLP/gRPC, decoding, and the export step both share."""
