"""Integrations with httpx, requests, openai and ASGI servers; each imports its client itself."""
