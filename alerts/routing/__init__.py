"""Routing: the route tree, grouping, inhibition, silences and the notification log (Alertmanager)."""
