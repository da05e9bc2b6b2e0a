"""Incidents: lifecycle from P0/P1 alerts, timeline signals, impact, and timeline exports."""
