"""The API's route class: a JSON body whose strings are no text is refused up front with 400.

JSON may spell a NUL (``"\\u0000"``) or a lone UTF-16 surrogate (``"\\ud800"``); Python reads
them into strings that no database (PostgreSQL refuses NUL) and no UTF-8 answer can hold, so
they would fail deep inside as a 500. Every router of the API uses ``ApiRoute``; the body is
parsed once, before any dependency takes a connection, and FastAPI reuses what was parsed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from trilha.errors import InvalidText
from trilha.validation import NOT_TEXT, is_text

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


def is_json(request: Request) -> bool:
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


async def check_json_text(request: Request) -> None:
    """InvalidText when the JSON body holds a string that is no text; malformed JSON is left
    for FastAPI to answer 422 as usual."""
    if not is_json(request) or not await request.body():
        return
    try:
        value = await request.json()
    except UnicodeDecodeError:
        raise InvalidText({"body": "is not UTF-8 text"}) from None
    except (json.JSONDecodeError, RecursionError):
        return
    if not is_text(value):
        raise InvalidText({"body": NOT_TEXT})


class ApiRoute(APIRoute):
    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            await check_json_text(request)
            return await handler(request)

        return handle
