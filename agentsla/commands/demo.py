"""`agentsla demo`: server + simulator + dashboard in one command, playing real incidents."""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Mapping

import httpx

from agentsla.commands._demo_alerts import (DIGEST, NOTIFICATIONS, NotificationSink, summarize,
                                            write_demo_config)
from agentsla.commands._demo_plan import (DEFAULT_HISTORY_S, DEFAULT_LIVE_S, MIN_LIVE_S,
                                         live_slots, segments)
from agentsla.commands._flags import add_setting_flags, config_from_args
from agentsla.commands.simulate import add_run_flags, parse_headers, speed_of
from agentsla.errors import AgentslaError

HELP = "Run the server, the dashboard and a simulated platform that plays real incidents."
_SERVER_FLAGS = ("host", "otlp_http_port", "otlp_grpc_port", "api_port", "data_dir")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add the `demo` subcommand."""
    parser = subparsers.add_parser("demo", help=HELP, description=HELP + " Ctrl-C stops "
                                   "everything. See docs/simulator.md.")
    add_setting_flags(parser, _SERVER_FLAGS)
    parser.add_argument("--reset", action="store_true", help="Wipe the data dir first.")
    parser.add_argument("--dashboard-port", type=int, default=8501, metavar="PORT",
                        help="Dashboard port (default 8501).")
    parser.add_argument("--no-dashboard", action="store_true", help="Do not start the dashboard.")
    parser.add_argument("--history", type=float, default=DEFAULT_HISTORY_S, metavar="SECONDS",
                        help="Seconds of healthy history sent first, as fast as possible "
                             f"(default {DEFAULT_HISTORY_S:.0f}: three hours; 0: none).")
    parser.add_argument("--schedule", metavar="SPEC",
                        help="Play this scenario schedule instead of the demo's incidents "
                             "(no announcements or measurements).")
    parser.add_argument("--exit-when-done", action="store_true",
                        help="Stop everything once the schedule has played (default: keep the "
                             "server and dashboard up until Ctrl-C).")
    parser.add_argument("--startup-timeout", type=float, default=60.0, metavar="SECONDS",
                        help="How long to wait for the server's /api/v1/health (default 60).")
    parser.add_argument("--server-command", help=argparse.SUPPRESS)  # tests: a stand-in server
    add_run_flags(parser, speed_default=1.0)
    # The shared flag counts virtual seconds; in the demo they are the live part's wall clock.
    parser._option_string_actions["--duration"].help = (
        f"Wall-clock seconds of live traffic after the history (default {DEFAULT_LIVE_S:.0f}; "
        f"under {MIN_LIVE_S:.0f} some incidents are too short to alert).")
    parser.set_defaults(run=run)


def _reset(data_dir: Path) -> None:
    if not data_dir.exists():
        return
    if any(data_dir.iterdir()) and not (data_dir / "agentsla.duckdb").exists():
        raise AgentslaError(f"--reset: {data_dir} does not look like an agentsla data dir "
                            "(no agentsla.duckdb); not deleting it")
    shutil.rmtree(data_dir)


def _server_command(args: argparse.Namespace, server, config: Path | None) -> list[str]:
    if args.server_command:
        base = shlex.split(args.server_command)
    elif importlib.util.find_spec("agentsla.commands.serve") is None:
        raise AgentslaError("`agentsla serve` is not available in this installation")
    else:
        base = [sys.executable, "-m", "agentsla", "serve"]
    extra = ["--config", str(config)] if config else []
    return base + extra + [
        "--data-dir", str(server.data_dir), "--host", server.host,
        "--otlp-http-port", str(server.otlp_http_port),
        "--otlp-grpc-port", str(server.otlp_grpc_port), "--api-port", str(server.api_port)]


def _start(command: list[str], log: Path) -> subprocess.Popen:
    with open(log, "ab") as out:
        # Own session: the terminal's Ctrl-C reaches only us, and we stop children in order.
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def _wait_healthy(proc: subprocess.Popen, url: str, timeout: float, log: Path,
                  stop: threading.Event) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stop.is_set():
        if proc.poll() is not None:
            tail = log.read_text(errors="replace").splitlines()[-15:]
            raise AgentslaError(f"the server exited with code {proc.returncode}; last log lines "
                                f"({log}):\n" + "\n".join(tail))
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        stop.wait(0.2)
    if not stop.is_set():
        raise AgentslaError(f"the server did not answer {url} within {timeout:.0f}s (log: {log})")


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    # Each child leads its own process group (start_new_session), so this reaches the
    # processes it started (e.g. Streamlit under `agentsla dashboard`) and nothing else.
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop_all(procs: list[subprocess.Popen]) -> None:
    """Terminate the children (newest first), wait, and kill any that linger."""
    for proc in reversed(procs):
        _signal_group(proc, signal.SIGTERM)
    for proc in reversed(procs):
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()


def _headers(args: argparse.Namespace, server) -> dict[str, str]:
    headers = parse_headers(args.header)
    if server.ingest_token and not any(k.lower() == "authorization" for k in headers):
        headers["Authorization"] = f"Bearer {server.ingest_token}"
    return headers


def _host_for_clients(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "", "::") else host


def _say(console):
    """Return say(text, style): one timestamped line above the live progress table."""
    from rich.text import Text

    def say(text: str, style: str = "") -> None:
        console.print(Text(f"{time.strftime('%H:%M:%S')} {text}", style=style), soft_wrap=True)
    return say


def _on_note(say, scorer_box: list):
    """Return the sink's callback: print the notification, then measure its new alerts."""
    def on_note(channel: str, payload: dict, received: float) -> None:
        line = summarize(payload, channel)
        say("alert " + line, "bold red" if " FIRING" in line else
            "green" if " RESOLVED" in line else "")
        if scorer_box:  # the live part has begun
            scorer_box[0].notified(payload, received)
    return on_note


def _live(args, options: dict, scorer_box: list, say, data_dir: Path, progress) -> object:
    """Play the live part: the demo's phases (announced and measured) or --schedule."""
    from agentsla.commands._demo_live import MEASURED, Announcer, Scorer
    from agentsla.simulator import run as simulate

    speed = speed_of(args, 1.0)
    # At speed 1 spans carry the wall clock; a faster replay is placed to end now.
    anchor = "start" if speed == 1.0 else "end"
    if args.schedule:
        return simulate(args.schedule, duration=args.duration, speed=speed, anchor=anchor,
                        on_task=progress.update, **options)
    duration = DEFAULT_LIVE_S if args.duration is None else args.duration
    if duration < MIN_LIVE_S:
        say(f"--duration {duration:g}: under {MIN_LIVE_S:.0f} s some incidents end before "
            "their alert fires", "yellow")
    slots = live_slots(duration)
    start = time.time()
    scorer_box.append(Scorer(slots, start, data_dir / MEASURED, say))
    Announcer(slots, start, say, options["stop"]).start()
    return simulate(segments(slots), speed=speed, anchor=anchor, on_task=progress.update,
                    on_failure=scorer_box[0].failed, **options)


def _options(args: argparse.Namespace, server, host: str, seed: int,
             environ: Mapping[str, str], stop: threading.Event) -> dict:
    """The simulator's export options: where, how, with which headers."""
    options = dict(seed=seed, endpoint=args.endpoint or f"http://{host}:{server.otlp_http_port}",
                   protocol=args.protocol, headers=_headers(args, server), environ=environ,
                   stop=stop)
    if args.protocol == "grpc" and not args.endpoint:
        options["endpoint"] = f"http://{host}:{server.otlp_grpc_port}"
    return options


def _banner(seed: int, data_dir: Path, host: str, server, api: str, dashboard: str | None,
            note: str | None) -> None:
    """Print where everything is."""
    print(f"agentsla demo (seed {seed}), data in {data_dir}\n"
          f"  OTLP/HTTP  http://{host}:{server.otlp_http_port}/v1/traces\n"
          f"  OTLP/gRPC  {host}:{server.otlp_grpc_port}\n"
          f"  API        {api}/api/v1/health\n"
          f"  dashboard  {dashboard or 'not started'}\n"
          f"  truth      {data_dir / 'demo-truth.jsonl'}\n"
          f"  alerts     {note or data_dir / NOTIFICATIONS} (P2 digest: {data_dir / DIGEST})\n"
          "Ctrl-C stops everything.", flush=True)


def _play(args: argparse.Namespace, options: dict, console, say, data_dir: Path,
          scorer_box: list) -> object:
    """Send the history, then play the live part; return the live part's summary."""
    from agentsla.commands._demo_live import send_history
    from agentsla.simulator.progress import Progress

    if args.history > 0 and not options["stop"].is_set():
        say(f"sending {args.history / 3600:g} h of healthy history (fast) ...", "bold")
        with Progress(console=console, title="history") as progress:
            sent = send_history(args.history, options, progress.update)
        say(f"history sent: {sent} tasks; live traffic from now on", "bold")
    with Progress(console=console, title=f"agentsla demo (seed {options['seed']})") as progress:
        return _live(args, {**options, "truth_path": data_dir / "demo-truth.jsonl"},
                     scorer_box, say, data_dir, progress)


def _start_server_and_dashboard(args: argparse.Namespace, server, config: Path, api: str,
                                dashboard: str | None,
                                stop: threading.Event) -> list[subprocess.Popen]:
    """Start `agentsla serve` with the demo config, wait until healthy, then the dashboard."""
    data_dir = Path(server.data_dir)
    procs = [_start(_server_command(args, server, config), data_dir / "serve.log")]
    try:
        _wait_healthy(procs[0], f"{api}/api/v1/health", args.startup_timeout,
                      data_dir / "serve.log", stop)
        if dashboard:
            procs.append(_start([sys.executable, "-m", "agentsla", "dashboard", "--port",
                                 str(args.dashboard_port), "--api", api],
                                data_dir / "dashboard.log"))
    except BaseException:
        _stop_all(procs)
        raise
    return procs


def _serve_until_stopped(server: subprocess.Popen, stop: threading.Event) -> None:
    """Keep the server running after the schedule until Ctrl-C; fail if it exits by itself."""
    while not stop.wait(1.0):
        if server.poll() is not None:
            raise AgentslaError(f"the server exited with code {server.returncode}")


def run(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Start the server (and dashboard), send history, play the incidents, stop on Ctrl-C."""
    from rich.console import Console

    from agentsla.commands._demo_live import export_incidents
    from agentsla.simulator.progress import stop_on_signals

    server = config_from_args(args, environ).server
    data_dir = Path(server.data_dir)
    if args.reset:
        _reset(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    host = _host_for_clients(server.host)
    api = f"http://{host}:{server.api_port}"
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    procs: list[subprocess.Popen] = []
    console = Console(stderr=True)
    say = _say(console)
    scorer_box: list = []  # the live part's Scorer, once it exists
    sink = NotificationSink(data_dir / NOTIFICATIONS, _on_note(say, scorer_box)).start()
    dashboard = None
    if not args.no_dashboard and importlib.util.find_spec(
            "agentsla.commands.dashboard") is not None:
        dashboard = f"http://{host}:{args.dashboard_port}"
    with stop_on_signals(threading.Event()) as stop:
        try:
            config, note = write_demo_config(data_dir, sink.url,
                                             args.config or environ.get("AGENTSLA_CONFIG"),
                                             dashboard)
            procs += _start_server_and_dashboard(args, server, config, api, dashboard, stop)
            _banner(seed, data_dir, host, server, api, dashboard, note)
            summary = _play(args, _options(args, server, host, seed, environ, stop), console,
                            say, data_dir, scorer_box)
            print(f"played {summary.tasks} tasks ({summary.spans} spans); "
                  f"{sink.count} alert notifications so far.", flush=True)
            if scorer_box and not stop.is_set():
                export_incidents(api, data_dir, scorer_box[0].start, say, stop)
            if not args.exit_when_done and not stop.is_set():
                print("Schedule finished; the server keeps running. Ctrl-C to stop.", flush=True)
                _serve_until_stopped(procs[0], stop)
        finally:
            _stop_all(procs)
            sink.stop()
    return 0
