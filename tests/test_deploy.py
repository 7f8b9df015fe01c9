"""The Docker install: compose.yaml as `docker compose config` resolves it from .env.example, and
the Dockerfile's stages as written. No image is built here (that needs a Docker daemon)."""

from __future__ import annotations

import ipaddress
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml  # type: ignore[import-untyped]  # PyYAML ships no type hints

ROOT = Path(__file__).parent.parent
REQUIRED = ("TRILHA_PUBLIC_URL", "ACME_EMAIL", "POSTGRES_PASSWORD")
SAMPLE = {
    "TRILHA_PUBLIC_URL": "https://track.example.com",
    "ACME_EMAIL": "ops@example.com",
    "POSTGRES_PASSWORD": "0123456789abcdef",
}


def compose_command() -> list[str]:
    """Compose v2 (`docker compose`) where it works, else Debian's docker-compose 1.29."""
    docker = shutil.which("docker")
    if (
        docker
        and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0
    ):
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    if legacy is None:
        pytest.fail(
            "Docker Compose is not installed; the compose tests need it: apt-get install "
            "docker-compose (scripts/install-test-tools does it when run as root)"
        )
    return [legacy]


def env_file(values: dict[str, str]) -> str:
    """.env.example with the required values filled in from ``values`` (others left empty)."""
    text = (ROOT / ".env.example").read_text()
    for name in REQUIRED:
        text = re.sub(rf"(?m)^{name}=$", f"{name}={values.get(name, '')}", text)
    return text


def compose_config(project: Path, values: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`config` in a copy of the project, its .env made from .env.example and ``values``."""
    project.mkdir(exist_ok=True)
    shutil.copy(ROOT / "compose.yaml", project / "compose.yaml")
    (project / ".env").write_text(env_file(values))
    return subprocess.run(
        [*compose_command(), "config"],
        cwd=project,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(project)},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("compose")


@pytest.fixture(scope="module")
def config(project: Path) -> dict[str, Any]:
    resolved = compose_config(project, SAMPLE)
    assert resolved.returncode == 0, resolved.stderr
    loaded: dict[str, Any] = yaml.safe_load(resolved.stdout)
    return loaded


def services(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = config["services"]
    return found


def test_it_runs_trilha_its_worker_postgresql_and_caddy(config: dict[str, Any]) -> None:
    assert set(services(config)) == {"trilha", "worker", "postgres", "caddy"}


def test_it_publishes_ports_from_caddy_alone(config: dict[str, Any]) -> None:
    published = {name for name, service in services(config).items() if service.get("ports")}
    caddy_ports = {str(port["published"]) for port in services(config)["caddy"]["ports"]}

    assert published == {"caddy"}
    assert caddy_ports == {"80", "443"}


def test_trilha_and_its_worker_run_one_image(config: dict[str, Any]) -> None:
    trilha, worker = services(config)["trilha"], services(config)["worker"]

    assert trilha["image"] == worker["image"]
    assert trilha["command"] == ["trilha", "serve"]
    assert worker["command"] == ["trilha", "worker"]
    assert trilha["environment"] == worker["environment"]


def test_trilha_uses_the_postgres_service(config: dict[str, Any]) -> None:
    url = urlsplit(services(config)["trilha"]["environment"]["TRILHA_DATABASE_URL"])
    postgres = services(config)["postgres"]["environment"]

    assert url.scheme == "postgresql+psycopg"
    assert (url.hostname, url.port) == ("postgres", 5432)
    assert (url.username, url.password) == (postgres["POSTGRES_USER"], SAMPLE["POSTGRES_PASSWORD"])
    assert url.path == f"/{postgres['POSTGRES_DB']}"
    assert postgres["POSTGRES_PASSWORD"] == SAMPLE["POSTGRES_PASSWORD"]


def test_the_settings_come_from_env(config: dict[str, Any]) -> None:
    environment = services(config)["trilha"]["environment"]

    assert environment["TRILHA_PUBLIC_URL"] == SAMPLE["TRILHA_PUBLIC_URL"]
    assert ipaddress.ip_address(environment["TRILHA_HOST"]).is_unspecified  # every interface
    assert services(config)["caddy"]["environment"]["ACME_EMAIL"] == SAMPLE["ACME_EMAIL"]


def test_only_caddy_may_ask_trilha_for_certificates(config: dict[str, Any]) -> None:
    caddy_address = ipaddress.ip_address(
        services(config)["caddy"]["networks"]["edge"]["ipv4_address"]
    )
    [edge] = config["networks"]["edge"]["ipam"]["config"]
    trusted = services(config)["trilha"]["environment"]["TRILHA_TRUSTED_PROXIES"]
    on_edge = {
        name for name, service in services(config).items() if "edge" in service.get("networks", {})
    }

    assert [ipaddress.ip_network(part) for part in trusted.split(",")] == [
        ipaddress.ip_network(f"{caddy_address}/32")
    ]
    assert on_edge == {"caddy", "trilha"}
    # Caddy's fixed address is on the edge network, where no other container can be given it.
    assert caddy_address in ipaddress.ip_network(edge["subnet"])
    assert caddy_address not in ipaddress.ip_network(edge["ip_range"])


def mounts(service: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    """Each mount's target: its source and whether it is read-only. Compose v2 writes them out in
    full, 1.29 as ``source:target[:mode]``."""
    found: dict[str, tuple[str, bool]] = {}
    for volume in service["volumes"]:
        if isinstance(volume, str):
            source, target, *mode = volume.split(":")
            found[target] = (source, mode == ["ro"])
        else:
            found[volume["target"]] = (volume["source"], bool(volume.get("read_only")))
    return found


def test_caddy_runs_the_shipped_caddyfile_in_front_of_trilha(
    config: dict[str, Any], project: Path
) -> None:
    caddy = services(config)["caddy"]
    caddyfile = (ROOT / "deploy" / "Caddyfile").read_text()

    assert mounts(caddy)["/etc/caddy/Caddyfile"] == (str(project / "deploy" / "Caddyfile"), True)
    assert caddy["environment"]["TRILHA_UPSTREAM"] == "trilha:8000"
    assert "ask http://{$TRILHA_UPSTREAM:127.0.0.1:8000}/internal/tls-allowed" in caddyfile
    assert "reverse_proxy {$TRILHA_UPSTREAM:127.0.0.1:8000}" in caddyfile
    assert "email {$ACME_EMAIL:you@example.com}" in caddyfile


@pytest.mark.parametrize("name", ["postgres", "trilha", "worker"])
def test_each_service_of_ours_has_a_health_check(config: dict[str, Any], name: str) -> None:
    assert services(config)[name]["healthcheck"]["test"][0] == "CMD"


def test_each_starts_once_what_it_needs_is_healthy(config: dict[str, Any]) -> None:
    needs = {
        name: {other: dep["condition"] for other, dep in service.get("depends_on", {}).items()}
        for name, service in services(config).items()
    }

    assert needs == {
        "postgres": {},
        "trilha": {"postgres": "service_healthy"},
        "worker": {"trilha": "service_healthy"},
        "caddy": {"trilha": "service_healthy"},
    }


@pytest.mark.parametrize("missing", REQUIRED)
def test_a_missing_required_value_stops_compose_naming_it(tmp_path: Path, missing: str) -> None:
    values = {name: value for name, value in SAMPLE.items() if name != missing}

    resolved = compose_config(tmp_path, values)

    assert resolved.returncode != 0
    assert f"set {missing} in .env" in resolved.stderr


def dockerfile_stages() -> list[list[str]]:
    """The Dockerfile's instructions (continuation lines joined), one list per stage."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines()]
    stages: list[list[str]] = []
    for line in lines:
        if line.startswith("FROM "):
            stages.append([])
        if stages and line and not line.startswith("#"):
            stages[-1].append(line)
    return stages


def test_the_image_is_built_in_two_stages() -> None:
    builder, final = dockerfile_stages()

    assert builder[0].endswith(" AS builder")
    assert any("pip wheel --wheel-dir=/wheels ." in line for line in builder)
    assert not final[0].endswith(" AS builder")


def test_the_final_stage_takes_only_wheels_from_the_builder() -> None:
    final = dockerfile_stages()[-1]
    from_builder = [line for line in final if "from=builder" in line]

    assert not [line for line in final if line.startswith(("COPY", "ADD"))]
    assert len(from_builder) == 1
    assert "source=/wheels" in from_builder[0]
    assert "pip install --no-index --find-links=/wheels trilha" in from_builder[0]


def test_the_final_stage_runs_as_a_fixed_user_who_is_not_root() -> None:
    [user] = [line.split()[1] for line in dockerfile_stages()[-1] if line.startswith("USER ")]
    uid = user.split(":")[0]

    assert uid.isdigit()
    assert int(uid) != 0


def test_the_image_checks_its_health_and_serves() -> None:
    final = dockerfile_stages()[-1]
    [healthcheck] = [line for line in final if line.startswith("HEALTHCHECK ")]

    assert "/healthz" in healthcheck
    assert "urllib.request" in healthcheck
    assert "EXPOSE 8000" in final
    assert 'CMD ["trilha", "serve"]' in final
    assert "VOLUME /data" in final
    assert any("TRILHA_HOST=0.0.0.0" in line for line in final if line.startswith("ENV "))


def test_the_build_context_is_what_the_builder_copies() -> None:
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    kept = {line[1:].rstrip("/") for line in ignored if line.startswith("!")}
    builder = dockerfile_stages()[0]
    copied = {
        source.rstrip("/")
        for line in builder
        if line.startswith("COPY ")
        for source in line.split()[1:-1]
    }

    assert ignored[[line.startswith("#") for line in ignored].index(False)] == "*"
    assert copied == kept == {"pyproject.toml", "README.md", "src"}
