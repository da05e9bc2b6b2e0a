"""Subcommands of the `agentsla` CLI: each module defines add_parser(subparsers)."""
