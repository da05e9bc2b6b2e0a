"""Slack-compatible incoming webhook: readable text, top offenders, under Slack's limits."""
