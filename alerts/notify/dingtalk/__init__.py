"""DingTalk custom robot: signed markdown messages, grouped like every receiver."""
