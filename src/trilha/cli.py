"""The `trilha` command: serve, migrate, and a few account tasks. Each calls one domain function."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha import accounts, backups, workspaces
from trilha.click_retention import all_kept_since
from trilha.db.engine import make_engine, reading
from trilha.db.migrate import migrate
from trilha.deliveries.worker import DeliveryWorker
from trilha.errors import TrilhaError
from trilha.logs import configure_logging
from trilha.passwords import hash_password
from trilha.postbacks import unmatched
from trilha.reports.rollups import rebuild_rollups
from trilha.runtime import database_engine
from trilha.settings import Settings, settings_errors

T = TypeVar("T")

cli = typer.Typer(
    help="trilha: server-to-server postback conversion tracker.", no_args_is_help=True
)
user_cli = typer.Typer(help="Manage users.", no_args_is_help=True)
workspace_cli = typer.Typer(help="Manage workspaces.", no_args_is_help=True)
apikey_cli = typer.Typer(help="Manage API keys.", no_args_is_help=True)
postbacks_cli = typer.Typer(help="Inspect postbacks.", no_args_is_help=True)
rollups_cli = typer.Typer(help="Maintain the hourly sums reports read.", no_args_is_help=True)
cli.add_typer(user_cli, name="user")
cli.add_typer(workspace_cli, name="workspace")
cli.add_typer(apikey_cli, name="apikey")
cli.add_typer(postbacks_cli, name="postbacks")
cli.add_typer(rollups_cli, name="rollups")


def main() -> None:
    cli()


def _in_transaction(
    settings: Settings,
    work: Callable[[AsyncConnection], Awaitable[T]],
    *,
    reads_only: bool = False,
) -> T:
    """Run ``work`` in one transaction on an up-to-date database; TrilhaError → message, exit 1.
    A transaction that ``reads_only`` never waits for a running server's write lock (SQLite)."""
    _migrate(settings)

    async def run() -> T:
        engine = make_engine(settings.database_url, pooler=settings.database_pooler)
        try:
            async with (reading(engine) if reads_only else engine).begin() as conn:
                return await work(conn)
        finally:
            await engine.dispose()

    return _run(run())


def _migrate(settings: Settings) -> None:
    """Bring the schema up to date, logging (a wait for another process's migration) as the
    server does; TrilhaError → message, exit 1."""
    configure_logging(settings)
    _fail_cleanly(lambda: migrate(settings.database_url, pooler=settings.database_pooler))


def _run(work: Coroutine[object, object, T]) -> T:
    """Run ``work`` to its end; TrilhaError → message, exit 1."""
    try:
        return asyncio.run(work)
    except TrilhaError as exc:
        typer.secho(f"error: {exc.message}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1) from None


@cli.command("migrate")
def migrate_command() -> None:
    """Bring the database schema up to date (`serve` does this too)."""
    settings = _settings()
    _migrate(settings)
    typer.echo("database is up to date")


@cli.command()
def backup(
    file: Annotated[Path, typer.Argument(help="The backup file to write.", dir_okay=False)],
    force: Annotated[bool, typer.Option(help="Replace FILE if it exists.")] = False,
) -> None:
    """Copy the database to FILE while trilha keeps serving (SQLite: its online backup API;
    PostgreSQL: pg_dump's custom format)."""
    settings = _settings()
    kind = _fail_cleanly(lambda: backups.back_up(settings.database_url, file, force=force))
    typer.echo(f"backed up the {kind} database to {file} ({file.stat().st_size} bytes)")


@cli.command()
def restore(
    file: Annotated[Path, typer.Argument(help="A file `trilha backup` wrote.", dir_okay=False)],
    force: Annotated[bool, typer.Option(help="Replace a database that holds data.")] = False,
) -> None:
    """Replace the database's contents with FILE's, then bring its schema up to date. Stop
    `trilha serve` and `trilha worker` first."""
    settings = _settings()
    revision = _fail_cleanly(lambda: backups.restore(settings.database_url, file, force=force))
    _migrate(settings)
    typer.echo(f"restored {file} (taken at migration {revision}); database is up to date")


def _settings() -> Settings:
    """The settings; each refused one named by its variable, with why, then exit 1."""
    try:
        return Settings()
    except ValidationError as exc:
        for line in settings_errors(exc):
            typer.secho(f"error: {line}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1) from None


def _fail_cleanly(work: Callable[[], T]) -> T:
    """Run ``work``; TrilhaError → message, exit 1."""
    try:
        return work()
    except TrilhaError as exc:
        typer.secho(f"error: {exc.message}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1) from None


@rollups_cli.command("rebuild")
def rollups_rebuild() -> None:
    """Recompute every hourly sum of clicks from the click rows, in one transaction (with
    TRILHA_CLICK_RETENTION_DAYS, only the days whose clicks are all kept)."""
    settings = _settings()
    since = all_kept_since(datetime.now(UTC), settings.click_retention_days)

    async def work(conn: AsyncConnection) -> None:
        await conn.run_sync(rebuild_rollups, since=since)

    _in_transaction(settings, work)
    if since is None:
        typer.echo("rollups rebuilt from the click rows")
    else:
        typer.echo(f"rollups rebuilt from the click rows since {since:%Y-%m-%d} (UTC)")


@cli.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Listen address [TRILHA_HOST].")] = None,
    port: Annotated[int | None, typer.Option(help="Listen port [TRILHA_PORT].")] = None,
    workers: Annotated[int | None, typer.Option(help="Processes [TRILHA_WORKERS].")] = None,
) -> None:
    """Migrate the database, then serve tracking links, postbacks, the API and the dashboard."""
    from granian import Granian
    from granian.constants import Interfaces, Loops

    # Through the environment, so that the server's worker processes see the same values.
    for name, value in (("HOST", host), ("PORT", port), ("WORKERS", workers)):
        if value is not None:
            os.environ[f"TRILHA_{name}"] = str(value)
    settings = _settings()
    _migrate(settings)
    setup_token = _in_transaction(settings, _setup_token_if_empty)
    if setup_token:
        typer.secho(
            "No account exists yet. Open this link once to create the owner account:\n"
            f"  {settings.base_url}/setup/{setup_token}",
            fg=typer.colors.GREEN,
        )
    Granian(
        "trilha.app:create_app",
        factory=True,
        interface=Interfaces.ASGI,
        # uvloop: about a tenth less CPU a redirect than asyncio's own loop (docs/performance.md).
        loop=Loops.asyncio if sys.platform == "win32" else Loops.uvloop,
        address=settings.host,
        port=settings.port,
        workers=settings.workers,
        # A worker that dies is replaced at once and the others keep serving; granian logs
        # "Unexpected exit from worker-N", then "Spawning worker-N with PID: <new pid>". A worker
        # that dies again within seconds of its restart (one that cannot start) stops the server.
        respawn_failed_workers=True,
        log_level=settings.log_level,  # type: ignore[arg-type]
    ).serve()


@cli.command()
def worker(
    concurrency: Annotated[
        int | None, typer.Option(help="Deliveries sent at once [TRILHA_DELIVERY_CONCURRENCY].")
    ] = None,
) -> None:
    """Send deliveries (postbacks, webhooks, Conversions API events) until SIGTERM or Ctrl-C."""
    if concurrency is not None:
        os.environ["TRILHA_DELIVERY_CONCURRENCY"] = str(concurrency)
    settings = _settings()
    _migrate(settings)
    _run(run_worker(settings))


async def run_worker(settings: Settings) -> None:
    """One delivery worker until SIGTERM or SIGINT, then the sends in flight finish."""
    engine = database_engine(settings)
    deliveries = DeliveryWorker(engine, settings)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, deliveries.request_stop)
    typer.echo(f"delivery worker started ({engine.dialect.name})")
    try:
        await deliveries.run()
    finally:
        await engine.dispose()
    typer.echo("delivery worker stopped")


async def _setup_token_if_empty(conn: AsyncConnection) -> str | None:
    if await accounts.count_users(conn):
        return None
    return await accounts.create_setup_token(conn, now=datetime.now(UTC))


@user_cli.command("create")
def user_create(
    email: Annotated[str, typer.Option(help="Login e-mail.")],
    password: Annotated[str, typer.Option(prompt=True, hide_input=True, confirmation_prompt=True)],
    name: Annotated[str, typer.Option(help="Display name.")] = "",
) -> None:
    """Create a user who can then be added to workspaces."""

    async def work(conn: AsyncConnection) -> accounts.User:
        return await accounts.create_user(
            conn, email=email, password_hash=password_hash, name=name, now=datetime.now(UTC)
        )

    password_hash = _run(hash_password(password))  # outside the transaction: it takes a while
    user = _in_transaction(_settings(), work)
    typer.echo(f"created user {user.email} ({user.id})")


@workspace_cli.command("create")
def workspace_create(
    owner: Annotated[str, typer.Option(help="E-mail of the owning user.")],
    name: Annotated[str, typer.Option(help="Workspace name.")],
    timezone: Annotated[
        str, typer.Option(help="IANA time zone for reports.")
    ] = "America/Sao_Paulo",
    currency: Annotated[str, typer.Option(help="Default currency (ISO 4217).")] = "BRL",
) -> None:
    """Create a workspace owned by an existing user."""

    async def work(conn: AsyncConnection) -> workspaces.Workspace:
        user = await accounts.find_user_by_email(conn, owner)
        if user is None:
            raise TrilhaError(f"no user with e-mail {owner}; create it with `trilha user create`")
        return await workspaces.create_workspace(
            conn, user, name=name, timezone=timezone, currency=currency, now=datetime.now(UTC)
        )

    workspace = _in_transaction(_settings(), work)
    typer.echo(f"created workspace {workspace.name!r} ({workspace.id})")


@apikey_cli.command("create")
def apikey_create(
    email: Annotated[str, typer.Option(help="E-mail of the user the key acts as.")],
    name: Annotated[str, typer.Option(help="What the key is for.")] = "cli",
) -> None:
    """Create an API key; it is printed once and stored only as a hash."""

    async def work(conn: AsyncConnection) -> str:
        user = await accounts.find_user_by_email(conn, email)
        if user is None:
            raise TrilhaError(f"no user with e-mail {email}")
        _, secret = await accounts.create_api_key(conn, user, name=name, now=datetime.now(UTC))
        return secret

    secret = _in_transaction(_settings(), work)
    typer.echo("API key (shown once; send it as `Authorization: Bearer <key>`):")
    typer.echo(secret)


@postbacks_cli.command("unmatched")
def postbacks_unmatched(
    hours: Annotated[int, typer.Option(min=1, max=24 * 90, help="How far back to look.")] = 24,
) -> None:
    """Postbacks that matched no workspace: counts per source, and the samples kept."""
    since = datetime.now(UTC) - timedelta(hours=hours)

    async def work(
        conn: AsyncConnection,
    ) -> tuple[list[unmatched.SourceCount], list[unmatched.Sample]]:
        return (
            await unmatched.count_unmatched(conn, since=since),
            await unmatched.list_samples(conn, since=since),
        )

    sources, samples = _in_transaction(_settings(), work, reads_only=True)
    total = sum(source.requests for source in sources)
    typer.echo(f"{total} postbacks matched no workspace in the last {hours} hours.")
    for line in unmatched.report_lines(sources, samples):
        typer.echo(line)
