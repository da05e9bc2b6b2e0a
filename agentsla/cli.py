"""The `agentsla` command: one subcommand per module in agentsla/commands."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from typing import Sequence

from agentsla import __version__, commands
from agentsla.errors import AgentslaError


def build_parser() -> argparse.ArgumentParser:
    """Build the parser; each agentsla.commands module adds its subcommand via add_parser()."""
    parser = argparse.ArgumentParser(
        prog="agentsla",
        description="Observability and SLAs for AI-agent platforms: OTLP in; per-task outcome, "
                    "first failing hop, budgets, findings and alerts out.",
    )
    parser.add_argument("--version", action="version", version=f"agentsla {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"agentsla.commands.{info.name}")
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; user errors print one line to stderr and exit 2, never a traceback."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args, dict(os.environ)) or 0)
    except AgentslaError as exc:
        print(f"agentsla {args.command}: error: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
