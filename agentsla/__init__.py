"""agentsla: observability and SLAs for AI-agent platforms."""

__version__ = "0.1.0"
