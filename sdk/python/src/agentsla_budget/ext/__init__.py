"""Integrations with HTTP clients, the openai client and ASGI servers (each imports its client lazily)."""
