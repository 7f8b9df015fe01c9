"""A `trilha serve` process of its own session: started, waited for, killed, restarted."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

STARTUP_TIMEOUT = 30.0
SERVING = '"message": "serving: '  # each worker's line once it serves (JSON lines)
# granian's line for each worker process it starts, the first one and every replacement.
SPAWNED = re.compile(r"Spawning worker-(\d+) with PID: (\d+)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _state_and_parent(pid: int) -> tuple[str, int] | None:
    """A process's state letter and parent id from /proc; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # "pid (name) state ppid ...": the name may hold spaces, so split after its ")".
    state, parent = stat[stat.rindex(")") + 2 :].split()[:2]
    return state, int(parent)


def is_running(pid: int) -> bool:
    found = _state_and_parent(pid)
    return found is not None and found[0] != "Z"


def children_of(pid: int) -> set[int]:
    """The ids of the running processes whose parent is ``pid``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            child = int(entry.name)
            state = _state_and_parent(child)
            if state is not None and state[0] != "Z" and state[1] == pid:
                found.add(child)
    return found


class Server:
    """`trilha serve` on loopback, its output appended to ``log_path`` across restarts."""

    def __init__(self, database_url: str, workdir: Path, *, workers: int = 1) -> None:
        self.database_url = database_url
        self.workdir = workdir
        self.workers = workers
        self.log_path = workdir / "serve.log"
        self.base = ""
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def process(self) -> subprocess.Popen[bytes]:
        assert self._process is not None, "the server was never started"
        return self._process

    def start(self) -> None:
        """Start on a fresh port and return once every worker is serving (each logs a line when
        it is) and the server answers its health check."""
        port = free_port()
        logged_before = len(self.log()) if self.log_path.exists() else 0
        env = {
            **os.environ,
            "TRILHA_DATABASE_URL": self.database_url,
            "TRILHA_PORT": str(port),
            "TRILHA_WORKERS": str(self.workers),
            "TRILHA_LOG_FORMAT": "json",
        }
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "trilha", "serve"],
                cwd=self.workdir,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while self.log()[logged_before:].count(SERVING) < self.workers or not self._answers():
            assert self.process.poll() is None, f"trilha serve exited early:\n{self.log()}"
            assert time.monotonic() < deadline, f"trilha serve did not start:\n{self.log()}"
            time.sleep(0.05)

    def _answers(self) -> bool:
        try:
            return httpx.get(f"{self.base}/api/v1/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    def kill(self) -> None:
        """SIGKILL the server and every worker at once, as a crash would."""
        workers = self.running_workers().values()
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        # The workers share the server's process group and die with it; wait for them too, so
        # that none still holds the database or the port when the next server starts.
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while any(map(is_running, workers)) and time.monotonic() < deadline:
            time.sleep(0.02)

    def running_workers(self) -> dict[int, int]:
        """Worker number → process id, for the workers of this server that are running."""
        children = children_of(self.process.pid)
        spawned = ((int(number), int(pid)) for number, pid in SPAWNED.findall(self.log()))
        return {number: pid for number, pid in spawned if pid in children}

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")
