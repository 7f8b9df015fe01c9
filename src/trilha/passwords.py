"""Password hashes (argon2id), made and checked in threads of their own.

An argon2 hash or check takes about 0.3 s of CPU and 64 MiB of memory. On the event loop it would
stop every other request for that long, so it runs in a small pool of threads (argon2 releases
the GIL), and callers hold no connection or transaction while it works. The pool's size bounds
the memory and CPU many sign-ins at once can take (the others wait their turn), and its threads
run at a lower priority than the ones serving requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import NewType, TypeVar, TypeVarTuple

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from trilha.validation import PASSWORD_MAX, require_password

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

PasswordHash = NewType("PasswordHash", str)
"""An argon2id hash, as stored in ``users.password_hash``; made by :func:`hash_password`."""

ARGON2_THREADS = 2  # at most 2 * 64 MiB in use at once
# Measured on 2 cores, four clients guessing passwords: click p99 42 ms with these, 210 ms with
# four threads at this priority, 550 ms with four at normal priority.
ARGON2_NICE = 10

_hasher = PasswordHasher()  # argon2id with the library's current parameters


def _yield_to_requests() -> None:
    """Lower the priority of a pool thread (Linux; argon2's own lane threads inherit it), so
    that under load the event loop's threads win the CPU: a click is not kept waiting behind a
    password check."""
    if sys.platform != "linux":
        return
    thread = threading.get_native_id()
    with contextlib.suppress(OSError):  # not allowed here: the checks run at normal priority
        nice = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(19, nice + ARGON2_NICE))


_pool = ThreadPoolExecutor(
    max_workers=ARGON2_THREADS, thread_name_prefix="argon2", initializer=_yield_to_requests
)


@functools.cache
def _dummy_hash() -> str:
    """Checked against when the e-mail is unknown, so a sign-in takes as long either way. Made
    on first use, in the pool, not on import: every `trilha` command imports this module, and a
    hash costs ~0.2 s of CPU. Its parameters are the library's, as ``_hasher``'s are."""
    return PasswordHasher().hash("not a real password")


async def hash_password(password: str) -> PasswordHash:
    """The hash of a new password, once it meets the rules (InvalidInput otherwise)."""
    require_password(password)
    return PasswordHash(await _in_pool(_hasher.hash, password))


async def check_password(password_hash: str | None, password: str) -> bool:
    """Whether ``password`` matches the hash; ``None`` (no such user) never matches, but is
    checked against a dummy hash all the same, so that it takes as long as a real check."""
    if len(password) > PASSWORD_MAX:  # no stored password is that long
        password = password[:PASSWORD_MAX]
        password_hash = None
    is_match = await _in_pool(_verify, password_hash, password)
    return is_match and password_hash is not None


def _verify(password_hash: str | None, password: str) -> bool:
    try:
        return _hasher.verify(password_hash or _dummy_hash(), password)
    except (VerificationError, InvalidHashError):
        return False


async def _in_pool(work: Callable[[*Ts], T], *args: *Ts) -> T:
    return await asyncio.get_running_loop().run_in_executor(_pool, work, *args)
