"""Configuration: one settings table, loaded once at the edge from defaults, file, env and flags.

Precedence, lowest first: the defaults in SETTINGS, the YAML config file (`--config`), the
environment (`AGENTSLA_<NAME>`), command-line flags. Nothing outside this module reads
`os.environ`; the loader takes the environment as a mapping so tests can inject it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Mapping

import yaml

from agentsla.collector.faults import parse_faults
from agentsla.collector.store.clickhouse.url import StoreURL, parse_store_url
from agentsla.errors import ConfigError

_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_BYTE_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2,
               "mib": 1024**2, "g": 1000**3, "gb": 1000**3, "gib": 1024**3}


def parse_duration(value: Any) -> float:
    """Parse `90`, `1.5`, `500ms`, `15m`, `30d` or `1h30m` into seconds."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 30s, 15m or 30d")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError("must not be negative")
        return float(value)
    text = str(value).strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError("expected a duration such as 30s, 15m, 1h30m or 30d")
    return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)


def parse_bytes(value: Any) -> int:
    """Parse `1048576`, `20MiB` or `512kb` into a byte count."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            raise ValueError("must not be negative")
        return value
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", str(value).lower())
    if not match or match.group(2) not in _BYTE_UNITS:
        raise ValueError("expected a size such as 1048576, 512KiB or 20MiB")
    return int(float(match.group(1)) * _BYTE_UNITS[match.group(2)])


def parse_int(value: Any) -> int:
    """Parse a non-negative integer."""
    if isinstance(value, bool):
        raise ValueError("expected a whole number")
    number = int(str(value).strip()) if not isinstance(value, int) else value
    if number < 0:
        raise ValueError("must not be negative")
    return number


def parse_port(value: Any) -> int:
    """Parse a TCP port (0 lets the OS choose)."""
    port = parse_int(value)
    if port > 65535:
        raise ValueError("a port is at most 65535")
    return port


def parse_str(value: Any) -> str:
    """Take a string as it is."""
    return "" if value is None else str(value)


TLS_LISTENERS = ("otlp_http", "otlp_grpc", "api")


def parse_listeners(value: Any) -> tuple[str, ...]:
    """Parse a comma-separated list of listener names (otlp_http, otlp_grpc, api)."""
    names = tuple(n.strip() for n in parse_str(value).split(",") if n.strip())
    unknown = [n for n in names if n not in TLS_LISTENERS]
    if unknown:
        raise ValueError(f"unknown listener {unknown[0]!r}; expected some of "
                         f"{', '.join(TLS_LISTENERS)}")
    return names


@dataclass(frozen=True)
class Setting:
    """One setting: its flat name, section, default, parser and the help shown everywhere."""

    name: str
    section: str
    default: Any
    parse: Callable[[Any], Any]
    help: str

    @property
    def env_var(self) -> str:
        """Name of the environment variable that sets it."""
        return "AGENTSLA_" + self.name.upper()

    @property
    def flag(self) -> str:
        """Name of the command-line flag that sets it."""
        return "--" + self.name.replace("_", "-")


SETTINGS: tuple[Setting, ...] = (
    Setting("host", "server", "127.0.0.1", parse_str, "Address every listener binds to."),
    Setting("otlp_http_port", "server", 4318, parse_port, "OTLP/HTTP port (POST /v1/traces)."),
    Setting("otlp_grpc_port", "server", 4317, parse_port, "OTLP/gRPC port (TraceService/Export)."),
    Setting("api_port", "server", 8710, parse_port, "Query API port (/api/v1/..., /metrics)."),
    Setting("data_dir", "server", "./agentsla-data", parse_str,
            "Folder holding the DuckDB file (agentsla.duckdb)."),
    Setting("store", "server", "duckdb", parse_store_url,
            "Where spans and tasks live: `duckdb` (the file in data_dir), "
            "`clickhouse://user:password@host:8123/database` (the OpenTelemetry Collector's "
            "clickhouseexporter table; `?table=` if not otel_traces) or `chdb:///path` "
            "(the ClickHouse engine in-process). docs/scale-out.md."),
    Setting("memory_limit", "server", "1GB", parse_str,
            "DuckDB buffer pool cap such as 2GB; larger queries spill to disk where DuckDB "
            "can, else answer 503 naming this setting ('' = DuckDB's default, 80% of RAM)."),
    Setting("ingest_token", "server", "", parse_str,
            "If set, OTLP requests must send `Authorization: Bearer <token>`."),
    Setting("api_token", "server", "", parse_str,
            "If set, API requests must send `Authorization: Bearer <token>` (/api/v1/health excepted)."),
    Setting("api_tokens_file", "server", "", parse_str,
            "YAML file mapping tenants to API tokens (`acme: [token, ...]`, `'*'` for admin "
            "tokens): a tenant token answers only its tenant's data (docs/api.md, Security)."),
    Setting("enrichment_budget", "server", 30.0, parse_duration,
            "Longest one pass of incident enrichment (snapshots, findings, impact) may run; "
            "a query still running then is interrupted and the rest waits for the next pass."),
    Setting("findings_threads", "server", 2, parse_int,
            "Detectors one findings answer runs at once, each on a cursor and snapshot of its "
            "own (DuckDB; ClickHouse spreads each statement itself): about the cores to give "
            "one answer; 0 or 1 runs them one after another. See docs/findings.md."),
    Setting("receivers", "server", 0, parse_int,
            "OTLP receiver processes (HTTP and gRPC) decoding and normalizing in front of the "
            "writer (they share the ports; 0: in the writer's process). See docs/reliability.md."),
    Setting("port_wait", "server", 20.0, parse_duration,
            "With receivers: how long a start waits for the OTLP/HTTP port while the receiver "
            "processes of a killed server still hold it (they exit by themselves)."),
    Setting("alert_lease_ttl", "server", 30.0, parse_duration,
            "How long the alert evaluator's lease in the store lasts unrenewed: `serve` "
            "processes over one store evaluate one at a time, and a follower takes over this "
            "long after the holder stopped renewing (docs/scale-out.md, The alert lease)."),
    Setting("max_connections", "server", 1000, parse_int,
            "Most concurrent HTTP connections per listener; beyond it new requests get 503."),
    Setting("keepalive_timeout", "server", 15.0, parse_duration,
            "Idle keep-alive connections are closed after this long."),
    Setting("read_timeout", "server", 30.0, parse_duration,
            "Longest a client may take to send a request's headers, and again its body; "
            "slower or silent connections are closed (a late body gets 408)."),
    Setting("tls_cert_file", "server", "", parse_str,
            "PEM certificate (chain) that turns on TLS for the listeners in tls_listeners."),
    Setting("tls_key_file", "server", "", parse_str, "PEM private key of tls_cert_file."),
    Setting("tls_client_ca_file", "server", "", parse_str,
            "If set, TLS listeners require client certificates signed by this PEM CA (mTLS)."),
    Setting("tls_listeners", "server", "otlp_http,otlp_grpc,api", parse_listeners,
            "Listeners that use TLS when tls_cert_file is set; the others stay plain."),
    Setting("max_body_bytes", "ingest", 20 * 1024**2, parse_bytes,
            "Largest OTLP request body, checked before and after decompression (413 beyond)."),
    Setting("max_spans_per_request", "ingest", 100_000, parse_int,
            "Most spans one OTLP request may carry (413 beyond)."),
    Setting("max_attributes_per_span", "ingest", 1024, parse_int,
            "Attributes kept per span; the rest are counted in `agentsla.dropped_attributes`."),
    Setting("max_attribute_value_length", "ingest", 65536, parse_int,
            "Longest string value kept; longer ones are cut and end with `...[truncated]`."),
    Setting("max_value_depth", "ingest", 32, parse_int,
            "Deepest nesting of arrays and maps inside one attribute value."),
    Setting("queue_max_bytes", "ingest", 256 * 1024**2, parse_bytes,
            "Bytes of decoded requests waiting for the writer; beyond it requests get 429."),
    Setting("commit_max_spans", "ingest", 50_000, parse_int,
            "Most spans the writer commits in one transaction (group commit)."),
    Setting("commit_linger", "ingest", 0.02, parse_duration,
            "Longest a busy writer waits for more requests before a commit: only for the "
            "clients it expects back (those its last commit answered, and those whose "
            "requests came meanwhile), while its group is under commit_max_spans; a lone "
            "client never waits, and a wait that misses makes the next ones back off "
            "(0 = commit what is queued at once)."),
    Setting("retry_after", "ingest", 1.0, parse_duration,
            "Retry-After sent with 429/503 answers."),
    Setting("submit_timeout", "ingest", 30.0, parse_duration,
            "Longest an OTLP request waits for its commit, then 503 + Retry-After "
            "(0 = no bound)."),
    Setting("writer_stall_timeout", "ingest", 30.0, parse_duration,
            "A writer busy this long on one step turns /api/v1/health to 503."),
    Setting("writer_max_restarts", "ingest", 5, parse_int,
            "Unexpected writer errors in a row it restarts after; one more exits the "
            "process with code 1."),
    Setting("fault_injection", "ingest", "", parse_faults,
            "Test only: writer faults to inject, e.g. crash@2 or stall@3 "
            "(see collector/faults.py)."),
    Setting("default_budget", "tasks", 300.0, parse_duration,
            "Budget assumed for a task that carries none, when deciding it is lost."),
    Setting("lost_grace", "tasks", 60.0, parse_duration,
            "Grace after the budget before a task whose root never arrived is declared lost."),
    Setting("root_grace", "tasks", 30.0, parse_duration,
            "Wait for the parent of a SERVER span that sent no OTLP is_remote flag before "
            "taking that span as its task's root (the upstream exports elsewhere)."),
    Setting("task_cache_spans", "tasks", 20_000, parse_int,
            "Spans of recent tasks the writer keeps in memory to re-materialize tasks cheaply "
            "(about 2 KiB each; finished tasks are evicted first)."),
    Setting("large_task_spans", "tasks", 2_000, parse_int,
            "A task still in progress with more spans than this is materialized again only "
            "when it grew by a tenth since, or large_task_refresh passed, or its root came "
            "(each materialization reads all its spans: a long agent run would otherwise cost "
            "the writer time growing with its length at every batch; docs/tasks.md)."),
    Setting("large_task_refresh", "tasks", 5.0, parse_duration,
            "The longest a large task in progress waits to be materialized again while its "
            "spans keep coming."),
    Setting("retention", "tasks", 30 * 86400.0, parse_duration,
            "Spans and tasks older than this are deleted (ClickHouse: a TTL on agentsla's "
            "tables, set by the process running shard 0; docs/scale-out.md, Retention)."),
    Setting("rollup_retention", "tasks", 400 * 86400.0, parse_duration,
            "Per-minute rollups older than this are deleted (their own clock: they answer "
            "aggregate questions long after raw spans are gone; docs/rollups.md)."),
    Setting("rollup_merge_rows", "tasks", 100_000, parse_int,
            "DuckDB store: source rows pending in `rollup_pending` (the writer appends each "
            "batch's there) at which the writer merges them into the stored rollups; readers "
            "sum the pending ones on every read (docs/rollups.md, Keeping them current)."),
    Setting("retention_interval", "tasks", 3600.0, parse_duration,
            "How often retention and the lost-task sweep run (the sweep runs at least every 10 s)."),
    Setting("evidence_interval", "tasks", 5.0, parse_duration,
            "Pause between two rounds of the findings evidence worker, which stores each "
            "minute's findings evidence once its spans changed and then stayed unchanged for "
            "this long (docs/findings.md; "
            "on ClickHouse the process running shard 0: docs/scale-out.md, Stored findings "
            "evidence); 0 = none (every /findings then reads raw spans)."),
    Setting("late_window", "tasks", 300.0, parse_duration,
            "ClickHouse store: each materializer pass looks this far before its watermark "
            "for spans that arrived late, and judges their tasks again."),
    Setting("longest_span", "tasks", 3600.0, parse_duration,
            "ClickHouse store: a materializer pass finds new spans among those that started "
            "at most this long before its late window, so its read stays bounded however much "
            "is stored; a longer span is still read with its trace when another span of the "
            "trace arrives or its task is in progress (docs/scale-out.md, The late window)."),
    Setting("materialize_interval", "tasks", 5.0, parse_duration,
            "ClickHouse store: pause between two materializer passes of a shard; 0 = `serve` "
            "runs none (dedicated `agentsla materialize` workers do; they pause 1 s)."),
    Setting("materialize_max_window", "tasks", 300.0, parse_duration,
            "ClickHouse store: most span end time one materializer pass covers, so a shard "
            "catching up on a backlog holds a bounded number of spans (then passes run back "
            "to back)."),
    Setting("api", "client", "http://127.0.0.1:8710", parse_str,
            "Query API base URL used by the CLI and the dashboard."),
    Setting("api_ca_file", "client", "", parse_str,
            "PEM CA that verifies an https --api ('' = the system's trust store)."),
    Setting("api_cert_file", "client", "", parse_str,
            "PEM client certificate sent to an https --api that requires one."),
    Setting("api_key_file", "client", "", parse_str, "PEM private key of api_cert_file."),
    Setting("dashboard_url", "client", "http://127.0.0.1:8501", parse_str,
            "Dashboard base URL put into alert notifications as a link ('' for none)."),
    Setting("dashboard_password", "client", "", parse_str,
            "Shared secret the dashboard asks for before showing a page; required when the "
            "dashboard binds beyond loopback."),
)

SETTINGS_BY_NAME = {s.name: s for s in SETTINGS}

#: Structured keys only the config file can set (see docs/configuration.md).
FILE_SECTIONS = ("task_budgets", "slos", "findings", "alerts")


@dataclass(frozen=True)
class ServerConfig:
    """Listeners, storage location and authentication of `agentsla serve`."""

    host: str
    otlp_http_port: int
    otlp_grpc_port: int
    api_port: int
    data_dir: str
    memory_limit: str
    ingest_token: str
    api_token: str
    api_tokens_file: str
    enrichment_budget: float
    alert_lease_ttl: float
    max_connections: int
    keepalive_timeout: float
    read_timeout: float
    tls_cert_file: str
    tls_key_file: str
    tls_client_ca_file: str
    tls_listeners: tuple[str, ...]
    store: StoreURL = StoreURL("duckdb")
    findings_threads: int = 2
    receivers: int = 0
    port_wait: float = 20.0

    @property
    def db_path(self) -> Path:
        """Path of the DuckDB file inside the data dir."""
        return Path(self.data_dir) / "agentsla.duckdb"


@dataclass(frozen=True)
class IngestConfig:
    """Limits on what one OTLP request may carry and on the ingest queue."""

    max_body_bytes: int
    max_spans_per_request: int
    max_attributes_per_span: int
    max_attribute_value_length: int
    max_value_depth: int
    queue_max_bytes: int
    commit_max_spans: int
    commit_linger: float
    retry_after: float
    submit_timeout: float
    writer_stall_timeout: float
    writer_max_restarts: int
    fault_injection: str


@dataclass(frozen=True)
class TasksConfig:
    """Task materialization: budgets, the lost-task rule, caching and retention."""

    default_budget: float
    lost_grace: float
    task_cache_spans: int
    retention: float
    retention_interval: float
    budgets_by_type: Mapping[str, float] = field(default_factory=dict)
    root_grace: float = 30.0
    rollup_retention: float = 400 * 86400.0
    rollup_merge_rows: int = 100_000
    large_task_spans: int = 2_000
    large_task_refresh: float = 5.0
    evidence_interval: float = 5.0
    late_window: float = 300.0
    longest_span: float = 3600.0
    materialize_interval: float = 5.0
    materialize_max_window: float = 300.0

    def budget_ms_for(self, task_type: str | None) -> float | None:
        """Budget (ms) the config sets for a task type, or None."""
        seconds = self.budgets_by_type.get(task_type or "")
        return None if seconds is None else seconds * 1000.0


@dataclass(frozen=True)
class ClientConfig:
    """Where the CLI and the dashboard find the query API, and where alerts link to."""

    api: str
    dashboard_url: str
    dashboard_password: str
    api_ca_file: str
    api_cert_file: str
    api_key_file: str


@dataclass(frozen=True)
class SloObjective:
    """An SLO for one task type (`*` for every type without its own)."""

    task_type: str
    objective: float = 0.999
    period: float = 30 * 86400.0
    degraded_is_good: bool = True


@dataclass(frozen=True)
class Config:
    """Everything agentsla reads from its environment, validated."""

    server: ServerConfig
    ingest: IngestConfig
    tasks: TasksConfig
    client: ClientConfig
    slos: tuple[SloObjective, ...]
    findings: Mapping[str, Any]
    alerts: Mapping[str, Any]

    def slo_for(self, task_type: str | None) -> SloObjective:
        """The SLO that applies to a task type."""
        for slo in self.slos:
            if slo.task_type == task_type:
                return slo
        for slo in self.slos:
            if slo.task_type == "*":
                return slo
        return SloObjective(task_type="*")


_SECTION_CLASSES = {"server": ServerConfig, "ingest": IngestConfig, "tasks": TasksConfig,
                    "client": ClientConfig}


def _parse_setting(setting: Setting, value: Any, origin: str) -> Any:
    try:
        return setting.parse(value)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{origin}: bad value {value!r} for {setting.name}: {exc}") from None


def _read_file(path: str | Path | None) -> dict[str, Any]:
    if not path:
        return {}
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a mapping at the top level")
    unknown = sorted(set(data) - set(SETTINGS_BY_NAME) - set(FILE_SECTIONS))
    if unknown:
        raise ConfigError(f"config file {path}: unknown key(s) {', '.join(unknown)}; "
                          "see docs/configuration.md")
    return data


def _parse_slos(raw: Any, origin: str) -> tuple[SloObjective, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError(f"{origin}: slos must be a list of {{task_type, objective, period}}")
    slos = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or "task_type" not in item:
            raise ConfigError(f"{origin}: slos[{i}] needs a task_type")
        objective = float(item.get("objective", 0.999))
        if not 0 < objective < 1:
            raise ConfigError(f"{origin}: slos[{i}].objective {objective!r} must be between 0 and 1")
        try:
            period = parse_duration(item.get("period", "30d"))
        except ValueError as exc:
            raise ConfigError(f"{origin}: slos[{i}].period: {exc}") from None
        slos.append(SloObjective(str(item["task_type"]), objective, period,
                                 bool(item.get("degraded_is_good", True))))
    return tuple(slos)


def _parse_budgets(raw: Any, origin: str) -> dict[str, float]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{origin}: task_budgets must map task types to durations")
    try:
        return {str(k): parse_duration(v) for k, v in raw.items()}
    except ValueError as exc:
        raise ConfigError(f"{origin}: task_budgets: {exc}") from None


def load_config(overrides: Mapping[str, Any] | None = None,
                environ: Mapping[str, str] | None = None,
                config_file: str | Path | None = None) -> Config:
    """Build the validated Config from defaults, the file, the environment and flag overrides."""
    environ = environ or {}
    config_file = config_file or environ.get("AGENTSLA_CONFIG")
    file_data = _read_file(config_file)
    origin = f"config file {config_file}" if config_file else "config"
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        value = setting.default
        source = "default"
        if setting.name in file_data:
            value, source = file_data[setting.name], origin
        if setting.env_var in environ:
            value, source = environ[setting.env_var], f"environment {setting.env_var}"
        if overrides and overrides.get(setting.name) is not None:
            value, source = overrides[setting.name], f"flag {setting.flag}"
        values[setting.name] = _parse_setting(setting, value, source)
    sections: dict[str, Any] = {}
    for name, cls in _SECTION_CLASSES.items():
        kwargs = {f.name: values[f.name] for f in fields(cls) if f.name in values}
        if cls is TasksConfig:
            kwargs["budgets_by_type"] = _parse_budgets(file_data.get("task_budgets"), origin)
        sections[name] = cls(**kwargs)
    findings = file_data.get("findings") or {}
    alerts = file_data.get("alerts") or {}
    for key, value in (("findings", findings), ("alerts", alerts)):
        if not isinstance(value, dict):
            raise ConfigError(f"{origin}: {key} must be a mapping")
    return Config(slos=_parse_slos(file_data.get("slos"), origin), findings=findings,
                  alerts=alerts, **sections)
