"""The `trilha` command line: each command does its one thing, and says so."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from trilha.accounts import find_api_key
from trilha.db.schema import memberships, users, workspaces

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def trilha(database_url: str) -> Run:
    """Run `python -m trilha ARGS` against the test's database; output is stdout plus stderr."""

    def run(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "TRILHA_DATABASE_URL": database_url, "COLUMNS": "200"}
        return subprocess.run(
            [sys.executable, "-m", "trilha", *args],
            input=input,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=60,
            check=False,
        )

    return run


@pytest.mark.parametrize(
    "command",
    [
        ["serve"],
        ["migrate"],
        ["user", "create"],
        ["workspace", "create"],
        ["apikey", "create"],
        ["rollups", "rebuild"],
    ],
)
def test_every_command_has_help(trilha: Run, command: list[str]) -> None:
    result = trilha(*command, "--help")
    assert result.returncode == 0, result.stdout
    assert "Usage" in result.stdout


async def test_it_creates_a_user_a_workspace_and_an_api_key(trilha: Run, db: AsyncEngine) -> None:
    created = trilha(
        "user",
        "create",
        "--email",
        "Ana@Example.com",
        "--name",
        "Ana",
        input="a long password\na long password\n",
    )
    workspace = trilha("workspace", "create", "--owner", "ana@example.com", "--name", "Loja da Ana")
    key = trilha("apikey", "create", "--email", "ana@example.com", "--name", "zapier")

    assert created.returncode == 0, created.stdout
    assert workspace.returncode == 0, workspace.stdout
    assert key.returncode == 0, key.stdout
    [user] = await fetch_all(db, users)
    assert (user["email"], user["name"]) == ("ana@example.com", "Ana")
    assert "a long password" not in user["password_hash"]
    [row] = await fetch_all(db, workspaces)
    assert (row["name"], row["timezone"], row["currency"]) == (
        "Loja da Ana",
        "America/Sao_Paulo",
        "BRL",
    )
    [membership] = await fetch_all(db, memberships)
    assert membership["role"] == "owner"
    secret = key.stdout.strip().splitlines()[-1]
    async with db.connect() as conn:
        found = await find_api_key(conn, secret)
    assert found is not None
    assert found.user.email == "ana@example.com"


def test_it_explains_bad_input_without_a_traceback(trilha: Run) -> None:
    short = trilha("user", "create", "--email", "a@example.com", "--password", "short")
    nobody = trilha("workspace", "create", "--owner", "nobody@example.com", "--name", "X")

    assert short.returncode == 1
    assert "password: must be at least 10 characters" in short.stdout
    assert "Traceback" not in short.stdout
    assert nobody.returncode == 1
    assert "no user with e-mail nobody@example.com" in nobody.stdout


def test_migrate_reports_an_up_to_date_database(trilha: Run) -> None:
    result = trilha("migrate")
    assert result.returncode == 0
    assert "up to date" in result.stdout
