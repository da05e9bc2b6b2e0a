"""`agentsla simulate`: an agent platform with real incident scenarios, exporting real OTLP."""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
from dataclasses import asdict
from typing import Mapping

from agentsla.errors import AgentslaError

HELP = "Play agent-platform traffic and incidents, exporting OTLP through the OpenTelemetry SDK."


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add the `simulate` subcommand."""
    parser = subparsers.add_parser("simulate", help=HELP, description=HELP + " See "
                                   "docs/simulator.md for the scenarios and the truth format.")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--scenario", default="baseline", metavar="NAME",
                      help="Scenario to play (default baseline); --list shows them all.")
    what.add_argument("--schedule", metavar="SPEC",
                      help='Scenarios in turn, e.g. "baseline:120,model_long_tail:300,baseline:60" '
                           "(virtual seconds).")
    parser.add_argument("--list", action="store_true", help="List the scenarios and exit.")
    add_run_flags(parser)
    parser.add_argument("--tasks", type=int, metavar="N", help="Stop after N tasks.")
    parser.add_argument("--rate", type=float, metavar="PER_S",
                        help="Tasks per virtual second (default: the scenario's own rate).")
    parser.add_argument("--truth", metavar="FILE", help="Write the ground truth as JSON lines.")
    parser.add_argument("--vocabulary", choices=("agentsla", "genai", "openinference"),
                        default="agentsla",
                        help="Span attributes: agentsla's span contract (default), only the "
                             "OpenTelemetry GenAI conventions, or OpenInference's.")
    parser.add_argument("--anchor", choices=("start", "end"), default="start",
                        help="Virtual time 0 is now (start), or the run ends now (end: data "
                             "never lies in the future at --speed > 1).")
    parser.add_argument("--json", action="store_true", help="Print the summary as JSON.")
    parser.add_argument("--quiet", action="store_true", help="No live progress display.")
    parser.set_defaults(run=run)


def add_run_flags(parser: argparse.ArgumentParser, speed_default: float = 1.0) -> None:
    """Flags shared with `agentsla demo`: pacing, seed, and where to export."""
    parser.add_argument("--duration", type=float, metavar="SECONDS",
                        help="Virtual seconds to play (a schedule is scaled to it).")
    parser.add_argument("--speed", type=float, default=None, metavar="N",
                        help=f"Virtual seconds per wall second (default {speed_default:g}; 0 = as fast "
                             "as possible).")
    parser.add_argument("--fast", action="store_true", help="Same as --speed 0.")
    parser.add_argument("--seed", type=int, help="Seed: the same seed plays the same tasks, ids "
                                                 "and outcomes (default: random, printed).")
    parser.add_argument("--endpoint", metavar="URL",
                        help="OTLP endpoint (default OTEL_EXPORTER_OTLP_ENDPOINT, else "
                             "http://127.0.0.1:4318, or :4317 for grpc).")
    parser.add_argument("--protocol", choices=("http", "grpc"), default="http",
                        help="OTLP over HTTP/protobuf (default) or gRPC.")
    parser.add_argument("--header", action="append", default=[], metavar="K=V",
                        help="Header sent with every export, e.g. 'Authorization=Bearer t'; "
                             "repeatable.")


def parse_headers(items: list[str]) -> dict[str, str]:
    """Turn ['K=V', ...] into a dict; a malformed item is a user error."""
    headers = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise AgentslaError(f"bad --header {item!r}; expected KEY=VALUE")
        headers[key.strip()] = value.strip()
    return headers


def speed_of(args: argparse.Namespace, default: float) -> float:
    """The pacing the flags ask for."""
    speed = 0.0 if args.fast else (default if args.speed is None else args.speed)
    if speed < 0:
        raise AgentslaError("--speed must not be negative")
    return speed


def _list() -> int:
    from agentsla.simulator.scenarios import SCENARIOS
    for profile in SCENARIOS.values():
        planted = ", ".join(profile.planted) or "none"
        print(f"{profile.name}\n    {profile.description}\n    plants: {planted}")
    return 0


def run(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Play the scenario or schedule and print a summary."""
    if args.list:
        return _list()
    from agentsla.simulator import run as simulate
    from agentsla.simulator.progress import Progress, stop_on_signals

    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    if args.tasks is None and args.duration is None and not args.schedule:
        raise AgentslaError("give --duration SECONDS or --tasks N")
    options = dict(seed=seed, tasks=args.tasks, duration=args.duration, rate=args.rate,
                   endpoint=args.endpoint, protocol=args.protocol,
                   headers=parse_headers(args.header), environ=environ,
                   speed=speed_of(args, 1.0), truth_path=args.truth, anchor=args.anchor,
                   vocabulary=args.vocabulary)
    show = not args.quiet and not args.json and sys.stderr.isatty()
    with stop_on_signals(threading.Event()) as stop:
        if show:
            with Progress(title=f"agentsla simulate (seed {seed})") as progress:
                summary = simulate(args.schedule or args.scenario, stop=stop,
                                   on_task=progress.update, **options)
        else:
            summary = simulate(args.schedule or args.scenario, stop=stop, **options)
    if args.json:
        data = asdict(summary)
        data.pop("truth")
        print(json.dumps(data, indent=2))
    else:
        state = "interrupted" if summary.interrupted else "done"
        print(f"{state}: seed {seed}, {summary.tasks} tasks, {summary.spans} spans, "
              f"{summary.virtual_seconds:.0f} virtual s in {summary.wall_seconds:.1f} s; "
              + ", ".join(f"{k} {v}" for k, v in sorted(summary.outcomes.items())))
    return 0
