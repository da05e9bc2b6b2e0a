"""Alertmanager push: send every firing and recently resolved alert to POST /api/v2/alerts."""
