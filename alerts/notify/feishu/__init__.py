"""Feishu / Lark custom bot: signed interactive cards."""
