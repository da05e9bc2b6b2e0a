"""Alerts, as four concerns: rules/ (evaluation), routing/ (Alertmanager-like), notify/ (integrations), incidents/."""
