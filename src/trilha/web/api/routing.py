"""The API's route class: a JSON body whose escapes decode to no text is refused up front.

JSON may spell a lone UTF-16 surrogate (``"\\ud800"``); Python reads it into a string that no
database and no UTF-8 answer can hold, so it would fail deep inside as a 500. Every router of
the API uses ``ApiRoute``, and such a body answers 422 like any other malformed JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from trilha.validation import NOT_TEXT, is_text

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class TextJsonRequest(Request):
    async def json(self) -> Any:
        value = await super().json()
        if not is_text(value):
            raise json.JSONDecodeError(NOT_TEXT, "", 0)
        return value


class ApiRoute(APIRoute):
    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            return await handler(TextJsonRequest(request.scope, request.receive))

        return handle
