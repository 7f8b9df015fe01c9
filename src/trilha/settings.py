"""Settings read from ``TRILHA_*`` environment variables (and a ``.env`` file).

Every field is documented in docs/settings.md; tests/test_docs.py keeps the two in step.
"""

from __future__ import annotations

from ipaddress import IPv4Network, IPv6Network, ip_address, ip_network
from typing import Annotated, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./trilha.db"

Network = IPv4Network | IPv6Network


class Settings(BaseSettings):
    # A refused value is never quoted back: database URLs, tokens and passwords are settings.
    model_config = SettingsConfigDict(
        env_prefix="TRILHA_", env_file=".env", frozen=True, hide_input_in_errors=True
    )

    # The URLs may hold passwords: left out of the settings' repr, as they are of every log line.
    database_url: str = Field(
        DEFAULT_DATABASE_URL, repr=False, description="SQLAlchemy URL of the database."
    )
    database_pooler: Literal["none", "transaction"] = Field(
        "none",
        description="`transaction` when TRILHA_DATABASE_URL goes through a pooler in transaction "
        "mode (pgbouncer's pool_mode=transaction).",
    )
    reports_database_url: str | None = Field(
        None,
        repr=False,
        description="SQLAlchemy URL of a PostgreSQL replica of TRILHA_DATABASE_URL that reports "
        "read from (none: they read from TRILHA_DATABASE_URL).",
    )
    database_pool_size: int = Field(
        10,
        ge=1,
        le=200,
        description="PostgreSQL connections each process keeps open in its pool (not SQLite's).",
    )
    database_pool_overflow: int = Field(
        10,
        ge=0,
        le=200,
        description="PostgreSQL connections each process may open beyond its pool when busy, "
        "closed once returned (not SQLite's).",
    )
    host: str = Field("127.0.0.1", description="Address `trilha serve` listens on.")
    port: int = Field(8000, ge=1, le=65535, description="Port `trilha serve` listens on.")
    workers: int = Field(1, ge=1, le=64, description="Server processes `trilha serve` starts.")
    public_url: str | None = Field(
        None,
        description="Base URL visitors and platforms reach trilha on, used in the links it shows "
        "(default: http://HOST:PORT).",
    )
    log_format: Literal["json", "console"] | None = Field(
        None,
        description="Log line format (default: json when the output is not a terminal, "
        "console otherwise).",
    )
    access_log: bool = Field(False, description="Log a line for every request.")
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        "info", description="Log level."
    )
    trusted_proxies: Annotated[list[Network], NoDecode] = Field(
        # A proxy on the same machine, as deploy/Caddyfile sets up; no one else connects from it.
        default_factory=lambda: [ip_network("127.0.0.0/8"), ip_network("::1/128")],
        description="Comma-separated CIDRs whose X-Forwarded-For header is believed "
        "(default: the loopback, 127.0.0.0/8 and ::1).",
    )
    geoip_database: str | None = Field(
        None, description="Path to a MaxMind .mmdb country or city database (optional)."
    )
    postback_body_limit: int = Field(
        256 * 1024,
        ge=1024,
        le=16 * 1024 * 1024,
        description="Largest postback body accepted, in bytes; larger ones get 413.",
    )
    request_body_limit: int = Field(
        1024 * 1024,
        ge=16 * 1024,
        le=64 * 1024 * 1024,
        description="Largest request body the API and the dashboard accept, in bytes; larger "
        "ones get 413.",
    )
    request_body_timeout: float = Field(
        10.0,
        gt=0,
        le=300,
        description="Seconds a request's whole body may take to arrive; slower ones get 408.",
    )
    report_timeout: float = Field(
        10.0,
        gt=0,
        le=600,
        description="Seconds a report's queries may run; past it the report stops and gets 503.",
    )
    reports_at_once: int = Field(
        2,
        ge=1,
        le=64,
        description="Reports of one workspace that one server process runs at the same time.",
    )
    report_queue_wait: float = Field(
        2.0,
        ge=0,
        le=60,
        description="Seconds a report waits for one of its workspace's turns; then it gets 429.",
    )
    postback_log_retention_days: int = Field(
        90, ge=1, le=3650, description="Days the postback log keeps each request."
    )
    postback_payload_retention_days: int = Field(
        30,
        ge=1,
        le=3650,
        description="Days the postback log keeps each request's payload (query, headers, body), "
        "where buyers' data may be; the entry's outcome, reason and fields stay.",
    )
    click_retention_days: int = Field(
        0,
        ge=0,
        le=36500,
        description="Days each raw click is kept (0: forever); older clicks no conversion points "
        "to are deleted, their counts staying in the hourly and daily sums reports read.",
    )
    unmatched_retention_hours: int = Field(
        72,
        ge=1,
        le=24 * 90,
        description="Hours the counts and samples of postbacks that matched no workspace are kept.",
    )
    domain_verification: bool = Field(
        True,
        description="Custom domains route traffic only once a DNS TXT record proves control; "
        "false verifies them at once (single-tenant installs).",
    )
    reserved_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated hosts that no workspace may add as a custom domain, "
        "besides the public URL's host and its www twin.",
    )
    dns_nameserver: str | None = Field(
        None,
        description="IP address of the DNS server custom-domain checks ask (default: the "
        "system's resolvers).",
    )
    dns_port: int = Field(53, ge=1, le=65535, description="Port of TRILHA_DNS_NAMESERVER.")
    login_limit_per_account: int = Field(
        10,
        ge=1,
        le=10_000,
        description="Failed sign-ins allowed per e-mail in each window; more get 429.",
    )
    login_limit_per_ip: int = Field(
        50,
        ge=1,
        le=100_000,
        description="Failed sign-ins allowed per client address (IPv6: per /64) in each window.",
    )
    login_limit_window_minutes: int = Field(
        15, ge=1, le=1440, description="Length of the sign-in limits' windows, in minutes."
    )
    delivery_worker: bool = Field(
        True, description="Whether `trilha serve` runs a delivery worker in its process."
    )
    delivery_concurrency: int = Field(
        32, ge=1, le=1000, description="Deliveries a worker sends at the same time."
    )
    delivery_per_destination: int = Field(
        8,
        ge=1,
        le=1000,
        description="Deliveries to one destination in flight at the same time, across workers.",
    )
    delivery_per_workspace: int = Field(
        16,
        ge=1,
        le=1000,
        description="Deliveries of one workspace in flight at the same time, across workers.",
    )
    delivery_timeout: float = Field(
        10.0, gt=0, le=120, description="Seconds a delivery's request may take, in all."
    )
    delivery_response_limit: int = Field(
        64 * 1024,
        ge=1024,
        le=16 * 1024 * 1024,
        description="Bytes of a destination's answer read at most; the rest is not read.",
    )
    delivery_lease_seconds: int = Field(
        120,
        ge=30,
        le=3600,
        description="Seconds a worker holds a delivery it claimed; a worker that died lets "
        "go of it after this.",
    )
    delivery_poll_interval: float = Field(
        1.0,
        gt=0,
        le=60,
        description="Seconds between a worker's looks for due deliveries (a serving process "
        "also wakes its worker when a conversion commits).",
    )
    delivery_allow_private: bool = Field(
        False,
        description="Let deliveries reach private, loopback and link-local addresses "
        "(tests, on-premise receivers). Off: only public addresses.",
    )
    delivery_attempt_retention_days: int = Field(
        30, ge=1, le=3650, description="Days each delivery attempt's log entry is kept."
    )
    ready_worker_age: float = Field(
        60.0,
        ge=20,
        le=86400,
        description="Seconds since a delivery worker last looked at the outbox after which "
        "/readyz answers 503 (a worker notes it at most every 10 s).",
    )
    metrics_allow: Annotated[list[Network], NoDecode] = Field(
        default_factory=lambda: [ip_network("127.0.0.0/8"), ip_network("::1/128")],
        description="Comma-separated CIDRs of the clients /metrics answers without a token "
        "(default: the loopback); a request forwarded by a proxy counts as its client's.",
    )
    metrics_token: str | None = Field(
        None,
        description="A bearer token that lets a client from any address read /metrics "
        "(none: only TRILHA_METRICS_ALLOW's addresses may).",
    )
    smtp_host: str | None = Field(
        None,
        description="SMTP server that e-mails notices to workspace owners (none: in-app only).",
    )
    smtp_port: int = Field(25, ge=1, le=65535, description="Port of TRILHA_SMTP_HOST.")
    smtp_starttls: bool = Field(
        False, description="Whether to upgrade the SMTP link with STARTTLS."
    )
    smtp_username: str | None = Field(None, description="SMTP user name, if it asks for one.")
    smtp_password: str | None = Field(None, description="SMTP password.")
    smtp_from: str = Field("trilha@localhost", description="Sender address of notice e-mails.")
    google_oauth_url: str = Field(
        "https://oauth2.googleapis.com/token",
        description="Google's OAuth token endpoint, for Google Ads destinations.",
    )
    google_ads_url: str = Field(
        "https://googleads.googleapis.com/v19",
        description="Base URL of the Google Ads API, version included.",
    )
    tiktok_events_url: str = Field(
        "https://business-api.tiktok.com/open_api/v1.3",
        description="Base URL of TikTok's Events API, version included.",
    )
    meta_graph_url: str = Field(
        "https://graph.facebook.com/v21.0",
        description="Base URL of Meta's Graph API, version included, for Conversions API "
        "destinations.",
    )
    sqlite_synchronous: Literal["NORMAL", "FULL"] = Field(
        "FULL",
        description="SQLite `synchronous` pragma: FULL survives power loss, NORMAL only crashes.",
    )

    @field_validator("reports_database_url")
    @classmethod
    def _check_reports_database(cls, value: str | None) -> str | None:
        if not value or not value.strip():
            return None
        try:
            backend = make_url(value.strip()).get_backend_name()
        except (ArgumentError, ValueError):  # ValueError: a port that is not a number
            raise ValueError(
                "TRILHA_REPORTS_DATABASE_URL is not a database URL; "
                "write it as postgresql+psycopg://user:password@host:5432/dbname"
            ) from None
        if backend != "postgresql":
            raise ValueError(
                f"TRILHA_REPORTS_DATABASE_URL names a {backend} database; it must be a "
                "PostgreSQL replica, postgresql+psycopg://user:password@host:5432/dbname"
            )
        return value.strip()

    @model_validator(mode="after")
    def _reports_replica_of_postgresql(self) -> Settings:
        if self.reports_database_url and not _is_postgresql(self.database_url):
            raise ValueError(
                "TRILHA_REPORTS_DATABASE_URL is set but TRILHA_DATABASE_URL is not PostgreSQL: "
                "only a PostgreSQL database has replicas to read reports from; unset "
                "TRILHA_REPORTS_DATABASE_URL"
            )
        return self

    @field_validator("trusted_proxies", "metrics_allow", mode="before")
    @classmethod
    def _split_networks(cls, value: object) -> object:
        if isinstance(value, str):
            return [
                ip_network(part.strip(), strict=False) for part in value.split(",") if part.strip()
            ]
        return value

    @field_validator("reserved_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip().lower().rstrip(".") for part in value.split(",") if part.strip()]
        return value

    @field_validator("dns_nameserver")
    @classmethod
    def _check_nameserver(cls, value: str | None) -> str | None:
        return str(ip_address(value.strip())) if value else None

    @field_validator("meta_graph_url")
    @classmethod
    def _strip_graph_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @field_validator("public_url")
    @classmethod
    def _strip_slash(cls, value: str | None) -> str | None:
        return value.rstrip("/") if value else None

    @property
    def base_url(self) -> str:
        return self.public_url or f"http://{self.host}:{self.port}"

    @property
    def is_secure(self) -> bool:
        return self.base_url.startswith("https://")


def _is_postgresql(url: str) -> bool:
    try:
        return make_url(url).get_backend_name() == "postgresql"
    except (ArgumentError, ValueError):
        return False


def settings_errors(exc: ValidationError) -> list[str]:
    """Each refused setting as a line naming its variable (the value is never quoted).

    >>> try:
    ...     Settings(port=0, _env_file=None)
    ... except ValidationError as exc:
    ...     settings_errors(exc)
    ['TRILHA_PORT: Input should be greater than or equal to 1']
    """
    lines = []
    for error in exc.errors():
        message = error["msg"].removeprefix("Value error, ")
        names = [f"TRILHA_{str(part).upper()}" for part in error["loc"][:1]]
        lines.append(": ".join([*names, message]) if names and names[0] not in message else message)
    return lines
