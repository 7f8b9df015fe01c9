"""HTTPS through Caddy as deploy/Caddyfile sets it up: a real Caddy, with its own local CA
(``tls internal``) instead of Let's Encrypt, on loopback ports in front of ``trilha serve``.

A verified custom domain and the public host get a certificate the first time a client asks for
them, and clicks and postbacks work over HTTPS; an unverified or unknown host gets none, because
trilha's ask endpoint says no.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, fetch_clicks, make_campaign, make_domain, make_workspace
from tests.test_serve import free_port, trilha_serve
from trilha.db.schema import conversions

CADDYFILE = Path(__file__).parent.parent / "deploy" / "Caddyfile"
SHIPPED_UPSTREAM = "127.0.0.1:8000"  # where the shipped file finds `trilha serve`
PUBLIC_HOST = "track.example.test"
STARTUP_TIMEOUT = 20.0
# How a TLS handshake ends when Caddy has no certificate for the name asked for.
NO_CERTIFICATE = r"\[SSL: TLSV1_ALERT_INTERNAL_ERROR\]"
VISITOR = "127.0.0.2"  # a loopback address other than the one Caddy connects to trilha from


def caddy_command() -> str:
    caddy = shutil.which("caddy")
    if caddy is None:
        pytest.fail(
            "Caddy is not installed; the HTTPS tests need it: apt-get install caddy "
            "(scripts/install-test-tools does it when run as root)"
        )
    return caddy


def caddy_env(home: Path) -> dict[str, str]:
    """Caddy's certificates, its CA and its settings in ``home``, none in the user's."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"deploy/Caddyfile no longer has {old!r} once"
    return text.replace(old, new)


def caddyfile_for_tests(
    upstream: str,
    *,
    http_port: int,
    https_port: int,
    source: Path = CADDYFILE,
    shipped_upstream: str = SHIPPED_UPSTREAM,
) -> str:
    """``source`` (deploy/Caddyfile as shipped, or as deploy/install.sh installed it, trilha at
    ``shipped_upstream``) for a test: trilha at ``upstream``, Caddy on loopback ports, its own
    CA issuing the certificates, no admin endpoint, nothing added to the system's trust store.
    Every directive of the file stays."""
    text = source.read_text()
    assert text.count(shipped_upstream) == 2  # the ask URL and the reverse proxy
    text = text.replace(shipped_upstream, upstream)
    text = replace_once(text, "\ttls {\n\t\ton_demand\n", "\ttls internal {\n\t\ton_demand\n")
    test_options = (
        "{\n\tadmin off\n\tskip_install_trust\n\tdefault_bind 127.0.0.1\n"
        f"\thttp_port {http_port}\n\thttps_port {https_port}\n"
    )
    return replace_once(text, "\n{\n", "\n" + test_options)


@dataclass(frozen=True)
class Caddy:
    http_port: int
    https_port: int
    root_certificate: Path

    def client(self) -> httpx.Client:
        """A client that trusts Caddy's CA alone and connects from the visitor's address."""
        context = ssl.create_default_context(cafile=str(self.root_certificate))
        transport = httpx.HTTPTransport(verify=context, local_address=VISITOR)
        return httpx.Client(transport=transport, timeout=10)

    def get(
        self,
        client: httpx.Client,
        host: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        """GET https://{host}{path}, connecting to Caddy on 127.0.0.1: the name in the TLS
        handshake (SNI), the certificate checked against it, and the Host header."""
        return self.request(client, "GET", host, path, params=params, headers=headers)

    def request(
        self,
        client: httpx.Client,
        method: str,
        host: str,
        path: str,
        *,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        data: dict[str, str] | None = None,
        json: object = None,
    ) -> httpx.Response:
        """``method`` https://{host}{path} through Caddy, as :meth:`get` does."""
        return client.request(
            method,
            f"https://127.0.0.1:{self.https_port}{path}",
            params=params,
            headers={"host": host, **(headers or {})},
            data=data,
            json=json,
            extensions={"sni_hostname": host},
        )


@contextmanager
def caddy_run(
    upstream: str,
    home: Path,
    *,
    source: Path = CADDYFILE,
    shipped_upstream: str = SHIPPED_UPSTREAM,
) -> Iterator[Caddy]:
    """Caddy on ``source`` made a test's Caddyfile, its log in ``home``/caddy.log (a file: a
    pipe nobody reads would stop Caddy once full)."""
    caddy = caddy_command()
    http_port, https_port = free_port(), free_port()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "Caddyfile"
    config.write_text(
        caddyfile_for_tests(
            upstream,
            http_port=http_port,
            https_port=https_port,
            source=source,
            shipped_upstream=shipped_upstream,
        )
    )
    log = home / "caddy.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [caddy, "run", "--config", str(config), "--adapter", "caddyfile"],
            env=caddy_env(home),
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    root = home / "data" / "caddy" / "pki" / "authorities" / "local" / "root.crt"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not (root.exists() and listens(https_port)):
            assert process.poll() is None, f"caddy exited early:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"caddy did not start:\n{log.read_text()}"
            time.sleep(0.1)
        yield Caddy(http_port, https_port, root)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def listens(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_the_shipped_caddyfile_is_valid_and_formatted(tmp_path: Path) -> None:
    result = subprocess.run(
        [caddy_command(), "validate", "--config", str(CADDYFILE), "--adapter", "caddyfile"],
        env=caddy_env(tmp_path),
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "Valid configuration" in result.stdout + result.stderr
    assert "not formatted" not in result.stderr


async def test_a_verified_domain_gets_a_certificate_and_tracks_over_https(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    workspace = await make_workspace(db)
    await make_domain(db, workspace, "go.example.com")
    await make_campaign(
        db,
        workspace,
        slug="lp",
        host="go.example.com",
        offer_url="https://o.example.com/?c={click_id}",
    )

    with (
        trilha_serve(database_url, tmp_path, public_url=f"https://{PUBLIC_HOST}") as (base, _),
        caddy_run(base.removeprefix("http://"), tmp_path / "caddy") as caddy,
        caddy.client() as client,
    ):
        # Whatever a visitor claims in X-Forwarded-For, Caddy passes on the address it sees.
        click = caddy.get(
            client, "go.example.com", "/r/lp", headers={"x-forwarded-for": "200.147.67.142"}
        )
        [row] = await fetch_clicks(db)
        postback = caddy.get(
            client, "go.example.com", "/postback", params={"click_id": row["id"], "txid": "T1"}
        )

    assert click.status_code == 302
    assert click.headers["location"] == f"https://o.example.com/?c={row['id']}"
    assert row["ip"] == VISITOR
    assert postback.status_code == 200
    assert postback.json()["status"] == "created"
    [conversion] = await fetch_all(db, conversions)
    assert (conversion["workspace_id"], conversion["click_id"]) == (workspace.id, row["id"])


async def test_an_unverified_or_unknown_host_gets_no_certificate(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    workspace = await make_workspace(db)
    await make_domain(db, workspace, "pending.example.com", verified=False)

    with (
        trilha_serve(database_url, tmp_path, public_url=f"https://{PUBLIC_HOST}") as (base, _),
        caddy_run(base.removeprefix("http://"), tmp_path / "caddy") as caddy,
        caddy.client() as client,
    ):
        for host in ("pending.example.com", "unknown.example.com"):
            with pytest.raises(httpx.ConnectError, match=NO_CERTIFICATE):
                caddy.get(client, host, "/r/lp")
        public = caddy.get(client, PUBLIC_HOST, "/api/v1/health")
        ask = caddy.get(
            client, PUBLIC_HOST, "/internal/tls-allowed", params={"domain": "unknown.example.com"}
        )
        plain = httpx.get(
            f"http://127.0.0.1:{caddy.http_port}/r/lp?a=1", headers={"host": "go.example.com"}
        )

    assert public.status_code == 200  # the public host has its certificate
    assert ask.status_code == 404  # the ask endpoint is the proxy's, not visitors'
    assert ask.text == ""
    assert plain.status_code == 308
    assert plain.headers["location"] == "https://go.example.com/r/lp?a=1"
