"""Errors trilha raises on purpose, each mapped to one HTTP answer in trilha.web.errors.

TrilhaError
 ├── NotFound              the thing asked for does not exist, or is not yours (404)
 ├── PermissionDenied      you are signed in but your role does not allow it (403)
 ├── NotAuthenticated      no valid session or API key (401)
 ├── Conflict              it would break a uniqueness rule, e.g. a slug in use (409)
 ├── InvalidInput          a value is malformed; carries field-level messages (422)
 │    └── InvalidText      a value is no text a database can store: a NUL, bad UTF-8 (400)
 ├── BodyTooLarge          the request body is over its route's limit (413)
 ├── BodyTimeout           the request body did not arrive in time (408)
 ├── TooManyRequests       a limit was reached; carries the seconds until it lifts (429)
 ├── StorageUnavailable    the database could not be reached or did not commit (503)
 ├── ReportTimedOut        a report's queries ran past their time limit (503, with Retry-After)
 └── MigrationLocked       another process kept the migration lock past the wait (503)
"""

from __future__ import annotations

from collections.abc import Mapping


class TrilhaError(Exception):
    status_code = 500
    retry_after: int | None = None  # seconds, answered as Retry-After

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(TrilhaError):
    status_code = 404


class PermissionDenied(TrilhaError):
    status_code = 403


class NotAuthenticated(TrilhaError):
    status_code = 401


class Conflict(TrilhaError):
    status_code = 409

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class InvalidInput(TrilhaError):
    status_code = 422

    def __init__(self, fields: Mapping[str, str]) -> None:
        super().__init__("; ".join(f"{name}: {msg}" for name, msg in fields.items()))
        self.fields = dict(fields)


class InvalidText(InvalidInput):
    """A permanent fault of the request (400), named where it was: a NUL character, bytes that
    are no UTF-8, a lone UTF-16 surrogate."""

    status_code = 400


class BodyTooLarge(TrilhaError):
    status_code = 413


class BodyTimeout(TrilhaError):
    status_code = 408


class TooManyRequests(TrilhaError):
    status_code = 429
    retry_after: int

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class StorageUnavailable(TrilhaError):
    status_code = 503


class ReportTimedOut(TrilhaError):
    status_code = 503
    retry_after: int

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class MigrationLocked(TrilhaError):
    status_code = 503
