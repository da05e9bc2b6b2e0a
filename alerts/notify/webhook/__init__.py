"""Generic webhook: Alertmanager webhook v4 payload, signed per Standard Webhooks."""
