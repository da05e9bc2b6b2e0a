"""Config loading: precedence, parsing, and errors that name the key, value and source."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentsla.config import load_config, parse_bytes, parse_duration
from agentsla.errors import ConfigError


@pytest.mark.parametrize("text,seconds", [
    ("90", 90.0),          # plain seconds
    ("500ms", 0.5),        # milliseconds
    ("15m", 900.0),        # minutes
    ("1h30m", 5400.0),     # compound
    ("30d", 2_592_000.0),  # days
    (2.5, 2.5),            # numbers from YAML
])
def test_parse_duration(text, seconds) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text,size", [("1048576", 1048576), ("20MiB", 20 * 1024**2),
                                       ("512kb", 512_000), (64, 64)])
def test_parse_bytes(text, size) -> None:
    assert parse_bytes(text) == size


def test_precedence_default_file_env_flag(tmp_path: Path) -> None:
    config_file = tmp_path / "agentsla.yaml"
    config_file.write_text("api_port: 9001\notlp_http_port: 9002\nretention: 7d\n")
    env = {"AGENTSLA_API_PORT": "9003"}
    config = load_config({"otlp_http_port": "9004"}, env, config_file)
    assert config.server.api_port == 9003          # env beats file
    assert config.server.otlp_http_port == 9004    # flag beats file
    assert config.tasks.retention == 7 * 86400     # file beats default
    assert config.server.otlp_grpc_port == 4317    # default


@pytest.mark.parametrize("overrides,env,fragment", [
    ({"api_port": "70000"}, {}, "flag --api-port"),                 # out of range, named by flag
    ({}, {"AGENTSLA_RETENTION": "soon"}, "AGENTSLA_RETENTION"),     # bad duration, named by env
    ({}, {"AGENTSLA_MAX_BODY_BYTES": "huge"}, "'huge'"),            # the bad value is quoted
])
def test_errors_name_key_value_and_source(overrides, env, fragment) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(overrides, env)
    assert fragment in error.value.message


def test_config_file_sections_and_unknown_keys(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("task_budgets: {chat: 60s}\nslos:\n  - {task_type: chat, objective: 0.99}\n")
    config = load_config({}, {}, good)
    assert config.tasks.budget_ms_for("chat") == 60_000
    assert config.slo_for("chat").objective == 0.99
    assert config.slo_for("other").objective == 0.999
    typo = tmp_path / "typo.yaml"
    typo.write_text("api_prot: 1\n")
    with pytest.raises(ConfigError, match="api_prot"):
        load_config({}, {}, typo)
