"""Per-route limits the edge reads before a request reaches its route."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

BODY_LIMIT = "trilha_body_limit"  # the attribute body_limit() sets on an endpoint

Endpoint = TypeVar("Endpoint", bound=Callable[..., object])


def body_limit(limit: int) -> Callable[[Endpoint], Endpoint]:
    """Let a route accept bodies of up to ``limit`` bytes (an upload, say) instead of
    TRILHA_REQUEST_BODY_LIMIT; put it under the route's decorator."""

    def mark(endpoint: Endpoint) -> Endpoint:
        setattr(endpoint, BODY_LIMIT, limit)
        return endpoint

    return mark
