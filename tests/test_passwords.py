"""Passwords are hashed with argon2id at the library's production parameters (RFC 9106's
low-memory profile), whatever other tests lower them to for speed."""

from __future__ import annotations

import pytest
from argon2 import extract_parameters, profiles

from trilha import passwords


@pytest.fixture(autouse=True)
def cheap_password_hashes() -> None:
    """Not here: this module checks the parameters the other tests lower."""


async def test_a_password_is_hashed_with_the_production_parameters() -> None:
    stored = await passwords.hash_password("correct horse battery staple")

    made = extract_parameters(stored)
    production = profiles.RFC_9106_LOW_MEMORY
    assert (made.type, made.memory_cost, made.time_cost, made.parallelism) == (
        production.type,
        production.memory_cost,
        production.time_cost,
        production.parallelism,
    )
    assert await passwords.check_password(stored, "correct horse battery staple")
    assert not await passwords.check_password(stored, "correct horse battery stapler")
