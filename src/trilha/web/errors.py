"""TrilhaError and request validation errors → JSON answers, in one place."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from trilha.errors import Conflict, InvalidInput, TrilhaError


async def trilha_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, TrilhaError)  # noqa: S101 -- registered for TrilhaError only
    body: dict[str, object] = {"detail": exc.message}
    if isinstance(exc, InvalidInput):
        body["errors"] = exc.fields
    elif isinstance(exc, Conflict) and exc.field:
        body["errors"] = {exc.field: exc.message}
    headers = {"www-authenticate": "Bearer"} if exc.status_code == 401 else {}
    if exc.retry_after is not None:
        headers["retry-after"] = str(exc.retry_after)
    return JSONResponse(body, status_code=exc.status_code, headers=headers)


async def validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)  # noqa: S101 -- registered for it only
    errors: dict[str, str] = {}
    for error in exc.errors():
        if error["type"] == "json_invalid":  # its location is a position in the body
            errors.setdefault("body", f"not valid JSON: {error['ctx']['error']}")
            continue
        location = [str(part) for part in error["loc"] if part not in ("body", "query", "path")]
        errors.setdefault(".".join(location) or "body", error["msg"])
    return JSONResponse({"detail": "invalid input", "errors": errors}, status_code=422)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(TrilhaError, trilha_error)
    app.add_exception_handler(RequestValidationError, validation_error)
