"""`agentsla dashboard`: run the Streamlit dashboard, a client of the query API."""

from __future__ import annotations

import argparse
import ipaddress
import signal
import subprocess
import sys
from pathlib import Path
from typing import Mapping

from agentsla.commands._flags import add_setting_flags, config_from_args
from agentsla.config import parse_port
from agentsla.errors import ConfigError


def _app_path() -> Path:
    """Locate dashboard/app.py in the installed package (editable or not)."""
    from agentsla import dashboard

    return Path(dashboard.__file__).resolve().parent / "app.py"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add `dashboard` with --port, --host and the client's --api."""
    parser = sub.add_parser(
        "dashboard", help="run the web dashboard (Streamlit) against the query API",
        description="Serve the agentsla dashboard (Streamlit + Plotly) on --host:--port. It "
                    "reads only the query API given by --api (env AGENTSLA_API); set "
                    "AGENTSLA_API_TOKEN when the API needs a bearer token. Bound beyond "
                    "loopback it refuses to start without a login (dashboard_password).")
    parser.add_argument("--port", default="8501", metavar="PORT",
                        help="Port the dashboard listens on. Default 8501.")
    parser.add_argument("--host", dest="dashboard_host", default="127.0.0.1", metavar="HOST",
                        help="Address the dashboard binds to. Default 127.0.0.1.")
    add_setting_flags(parser, ["api", "dashboard_password"])
    parser.set_defaults(run=run)


def streamlit_command(app: Path, host: str, port: int) -> list[str]:
    """Build the `python -m streamlit run` command line for the dashboard."""
    return [sys.executable, "-m", "streamlit", "run", str(app),
            "--server.port", str(port), "--server.address", host,
            "--server.headless", "true", "--browser.gatherUsageStats", "false",
            "--global.developmentMode", "false"]


def is_loopback(host: str) -> bool:
    """Tell whether a bind address reaches only this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve beyond loopback


def check_login(host: str, password: str) -> None:
    """Refuse to serve beyond loopback without a login configured."""
    if not password and not is_loopback(host):
        raise ConfigError(f"the dashboard would listen on {host}, beyond loopback, without a "
                          "login: set dashboard_password (--dashboard-password or "
                          "AGENTSLA_DASHBOARD_PASSWORD), or bind to 127.0.0.1")


def run(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Start Streamlit with the API address in its environment and wait for it to exit."""
    config = config_from_args(args, environ)
    try:
        port = parse_port(args.port)
    except ValueError as exc:
        raise ConfigError(f"flag --port: bad value {args.port!r}: {exc}") from None
    check_login(args.dashboard_host, config.client.dashboard_password)
    env = {**environ, "AGENTSLA_API": config.client.api}
    if config.server.api_token:
        env["AGENTSLA_API_TOKEN"] = config.server.api_token
    if config.client.dashboard_password:
        env["AGENTSLA_DASHBOARD_PASSWORD"] = config.client.dashboard_password
    for name in ("api_ca_file", "api_cert_file", "api_key_file"):  # an https API's TLS files
        if getattr(config.client, name):
            env[f"AGENTSLA_{name.upper()}"] = getattr(config.client, name)
    print(f"agentsla dashboard  http://{args.dashboard_host}:{port}  API {config.client.api}",
          flush=True)
    proc = subprocess.Popen(streamlit_command(_app_path(), args.dashboard_host, port), env=env)
    # SIGTERM to `agentsla dashboard` stops Streamlit too, rather than orphaning it
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait(10)
        return 130
