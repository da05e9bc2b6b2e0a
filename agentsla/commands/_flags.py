"""Command-line flags generated from the settings table, so help, env and file stay in step."""

from __future__ import annotations

import argparse
from typing import Iterable, Mapping

from agentsla.config import (SETTINGS_BY_NAME, Config, load_config, parse_bytes, parse_duration,
                             parse_int, parse_port)

_METAVARS = {parse_port: "PORT", parse_bytes: "SIZE", parse_duration: "DURATION", parse_int: "N"}
#: Settings that come with `api`: how a client verifies an https API and proves who it is.
_API_TLS = ("api_ca_file", "api_cert_file", "api_key_file")


def add_setting_flags(parser: argparse.ArgumentParser, names: Iterable[str]) -> None:
    """Add `--config` and one flag per named setting, with its default and env var in the help."""
    parser.add_argument("--config", metavar="FILE",
                        help="YAML config file (env AGENTSLA_CONFIG); see docs/configuration.md")
    names = list(names)
    if "api" in names:
        names += [n for n in _API_TLS if n not in names]
    for name in names:
        setting = SETTINGS_BY_NAME[name]
        # argparse %-formats help text: a literal % in a setting's help must be doubled.
        text = f"{setting.help} Default {setting.default!r}; env {setting.env_var}."
        parser.add_argument(setting.flag, dest=name, default=None,
                            metavar=_METAVARS.get(setting.parse, name.split("_")[-1].upper()),
                            help=text.replace("%", "%%"))


def config_from_args(args: argparse.Namespace, environ: Mapping[str, str]) -> Config:
    """Load the Config with the flags given on the command line taking precedence."""
    overrides = {name: getattr(args, name) for name in SETTINGS_BY_NAME if hasattr(args, name)}
    return load_config(overrides, environ, getattr(args, "config", None))
