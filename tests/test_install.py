"""deploy/install.sh run as root on this machine, as on a fresh server, then trilha as its
systemd units start it, Caddy on the configuration it installed, and a new owner's first
campaign, click and sale over HTTPS.

This machine runs no systemd, so the test starts each unit's ``ExecStart`` itself, as the unit's
``User`` and ``Group``, in its ``WorkingDirectory``, with its ``EnvironmentFile``; systemd's own
``systemd-analyze verify`` checks the units. The install goes into a directory of the test's
(the script's path variables), with the real system user it creates.
"""

from __future__ import annotations

import configparser
import fcntl
import grp
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx
import pytest

from tests.test_https import PUBLIC_HOST, caddy_run, listens
from tests.test_serve import free_port

ROOT = Path(__file__).parent.parent
INSTALL = ROOT / "deploy" / "install.sh"
# The SQLite and PostgreSQL runs of the suite install at the same time; one user, one apt.
LOCK = Path(tempfile.gettempdir()) / "trilha-install-test.lock"
USER = "trilha"
EMAIL = "owner@example.test"
STARTUP_TIMEOUT = 30.0


@dataclass(frozen=True)
class Installed:
    root: Path
    port: int

    @property
    def units(self) -> Path:
        return self.root / "systemd"

    @property
    def command(self) -> Path:
        return self.root / "bin" / "trilha"

    @property
    def caddyfile(self) -> Path:
        return self.root / "caddy" / "Caddyfile"

    @property
    def env_file(self) -> Path:
        return self.root / "etc" / "trilha.env"

    def environment(self) -> dict[str, str]:
        """The script's path variables, pointing into ``root``."""
        return {
            **os.environ,
            "TRILHA_PREFIX": str(self.root / "opt"),
            "TRILHA_CONFIG_DIR": str(self.root / "etc"),
            "TRILHA_DATA_DIR": str(self.root / "data"),
            "TRILHA_UNIT_DIR": str(self.units),
            "TRILHA_CADDYFILE": str(self.caddyfile),
            "TRILHA_BIN_DIR": str(self.root / "bin"),
            "TRILHA_USER": USER,
        }


@pytest.fixture
def install_root() -> Iterator[Path]:
    """A directory the service user can reach (pytest's own are root's alone)."""
    if os.geteuid() != 0:
        pytest.fail("deploy/install.sh runs as root, as on a fresh server: run this test as root")
    root = Path(tempfile.mkdtemp(prefix="trilha-install-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root)


def install(installed: Installed, *args: str) -> subprocess.CompletedProcess[str]:
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return subprocess.run(
            [str(INSTALL), *args],
            env=installed.environment(),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )


def service_of(unit: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(unit.read_text())
    return parser["Service"]


def environment_file(path: Path) -> dict[str, str]:
    """KEY='value' lines, as systemd's EnvironmentFile= reads them."""
    pairs = [shlex.split(line)[0] for line in path.read_text().splitlines() if "=" in line]
    return dict(pair.split("=", 1) for pair in pairs if not pair.startswith("#"))


@contextmanager
def started(unit: Path, log: Path) -> Iterator[subprocess.Popen[str]]:
    """The unit's ExecStart as systemd would run it."""
    service = service_of(unit)
    output: IO[str]
    with log.open("w") as output:
        process = subprocess.Popen(
            shlex.split(service["ExecStart"]),
            cwd=service["WorkingDirectory"],
            user=service["User"],
            group=service["Group"],
            extra_groups=[],
            env={"PATH": "/usr/bin:/bin", **environment_file(Path(service["EnvironmentFile"]))},
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def wait_for(pattern: str, log: Path, process: subprocess.Popen[str]) -> re.Match[str]:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while (found := re.search(pattern, log.read_text())) is None:
        assert process.poll() is None, f"exited early:\n{log.read_text()}"
        assert time.monotonic() < deadline, f"no {pattern!r} in:\n{log.read_text()}"
        time.sleep(0.1)
    return found


def test_install_script_refuses_bad_options_before_changing_anything(
    install_root: Path,
) -> None:
    installed = Installed(install_root, free_port())

    without_url = install(installed, "--email", EMAIL)
    plain_http = install(installed, "--public-url", "http://t.example.com", "--email", EMAIL)
    bad_port = install(
        installed, "--public-url", "https://t.example.com", "--email", EMAIL, "--port", "0"
    )

    assert without_url.returncode == 2
    assert "--public-url must be https://host" in without_url.stderr
    assert plain_http.returncode == 2
    assert "got 'http://t.example.com'" in plain_http.stderr
    assert bad_port.returncode == 2
    assert "--port must be a port number" in bad_port.stderr
    assert list(install_root.iterdir()) == []


def test_a_fresh_server_installed_by_the_script_tracks_a_sale_over_https(
    database_url: str, install_root: Path, tmp_path: Path
) -> None:
    installed = Installed(install_root, free_port())
    options = ["--public-url", f"https://{PUBLIC_HOST}", "--email", EMAIL]
    options += ["--port", str(installed.port)]
    if not database_url.startswith("sqlite"):
        options += ["--database-url", database_url]

    result = install(installed, *options)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "database is up to date" in result.stdout
    settings = environment_file(installed.env_file)
    assert settings["TRILHA_PUBLIC_URL"] == f"https://{PUBLIC_HOST}"
    assert settings["TRILHA_PORT"] == str(installed.port)
    mode = installed.env_file.stat()
    assert stat.S_IMODE(mode.st_mode) == 0o640  # its database password: root and trilha alone
    assert (mode.st_uid, mode.st_gid) == (0, grp.getgrnam(USER).gr_gid)
    caddyfile = installed.caddyfile.read_text()
    assert f"\temail {EMAIL}\n" in caddyfile
    assert caddyfile.count(f"127.0.0.1:{installed.port}") == 2
    units = [installed.units / "trilha.service", installed.units / "trilha-worker.service"]
    verified = subprocess.run(
        ["systemd-analyze", "verify", *map(str, units)], capture_output=True, text=True, check=False
    )
    assert (verified.returncode, verified.stderr) == (0, "")

    serve_log, worker_log = tmp_path / "serve.log", tmp_path / "worker.log"
    with (
        started(units[0], serve_log) as server,
        started(units[1], worker_log),
    ):
        setup = wait_for(rf"https://{PUBLIC_HOST}/setup/(\S+)", serve_log, server)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not listens(installed.port):
            assert time.monotonic() < deadline, serve_log.read_text()
            time.sleep(0.1)
        with (
            caddy_run(
                f"127.0.0.1:{installed.port}",
                tmp_path / "caddy",
                source=installed.caddyfile,
                shipped_upstream=f"127.0.0.1:{installed.port}",
            ) as caddy,
            caddy.client() as client,
        ):
            owner = caddy.request(
                client,
                "POST",
                PUBLIC_HOST,
                f"/setup/{setup[1]}",
                headers={"cookie": "trilha_csrf=c5f1"},
                data={
                    "email": EMAIL,
                    "user_name": "Owner",
                    "password": "a long enough password",
                    "name": "Loja",
                    "csrf_token": "c5f1",
                },
            )
            # The installed command: as the service's user, with its settings.
            key = subprocess.run(
                [str(installed.command), "apikey", "create", "--email", EMAIL],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()[-1]
            api = {"authorization": f"Bearer {key}"}
            [workspace] = caddy.get(client, PUBLIC_HOST, "/api/v1/workspaces", headers=api).json()
            campaign = caddy.request(
                client,
                "POST",
                PUBLIC_HOST,
                f"/api/v1/workspaces/{workspace['id']}/campaigns",
                headers=api,
                json={
                    "name": "Lançamento",
                    "slug": "lp",
                    "offer_url": "https://o.example.com/?c={click_id}",
                },
            )
            click = caddy.get(client, PUBLIC_HOST, "/r/lp")
            click_id = click.headers["location"].rsplit("=", 1)[-1]
            # The postback URL the workspace shows its owner, as a platform calls it.
            detail = caddy.get(
                client, PUBLIC_HOST, f"/api/v1/workspaces/{workspace['id']}", headers=api
            )
            postback = httpx.URL(detail.json()["postback_url"])
            assert postback.host == PUBLIC_HOST
            sale = caddy.get(
                client,
                PUBLIC_HOST,
                postback.path,
                params={**dict(postback.params), "click_id": click_id, "txid": "T1"},
            )
            ready = caddy.get(client, PUBLIC_HOST, "/readyz")

    assert owner.status_code == 303, owner.text
    assert campaign.status_code == 201, campaign.text
    assert click.status_code == 302
    assert click.headers["location"].startswith("https://o.example.com/?c=")
    assert sale.status_code == 200
    assert sale.json()["status"] == "created"
    # The worker's unit ran too: readiness counts its heartbeat.
    assert ready.status_code == 200, ready.text
    assert ready.json()["checks"]["worker"] == "ok"
