"""Rules: rule files, the expression language, the metrics it names, and evaluation (Prometheus rules/)."""
