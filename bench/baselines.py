"""The no-storage baselines bench/redirect.py and bench/postback.py serve with granian: the same
answers as trilha's, nothing stored.

``starlette_app`` is the framework baseline (routing, a Request, a RedirectResponse for
``/r/{slug}``, a Response for ``/postback``); ``asgi_app`` is the floor of granian + Python: a bare
ASGI function, as trilha's redirect and postback are. Both answer ``/postback`` with
``POSTBACK_ANSWER``, as long as trilha's answer to a created postback (nginx answers it too).
``batched_app`` is a diagnostic of the redirect: the bare function, but each request first waits
for a group "commit" that stores nothing, run in a worker thread as trilha's click writer runs its
batches on SQLite. What trilha costs beyond it is the click's own work and its SQL.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from trilha.web.asgi import Receive, Scope, Send

# As long as the Location trilha sends for bench/redirect.py's request, macros filled.
LOCATION = "https://offer.example.com/checkout?cid=0Pq3s9AbCdEfGhIjKlMnOpQ&src=facebook&s1=abc"
HEADERS = {"cache-control": "no-store", "referrer-policy": "no-referrer-when-downgrade"}
# trilha's answer to a created postback (trilha.postbacks.outcome.Result.answer, sent with
# json.dumps' default separators): same keys, same length, two made-up 22-character ids.
POSTBACK_ANSWER = (
    '{"status": "created", "event": "SALE", "conversion_id": "0Pq3s9AbCdEfGhIjKlMnOp", '
    '"conversion_status": "approved", "postback_id": "1Qr4t0BcDeFgHiJkLmNoPq"}'
)
_POSTBACK_BODY = POSTBACK_ANSWER.encode()


async def _redirect(_request: Request) -> Response:
    return RedirectResponse(LOCATION, status_code=302, headers=HEADERS)


async def _postback(_request: Request) -> Response:
    return Response(
        _POSTBACK_BODY, media_type="application/json", headers={"cache-control": "no-store"}
    )


starlette_app = Starlette(
    routes=[
        Route("/r/{slug}", _redirect, methods=["GET", "HEAD"]),
        Route("/postback", _postback, methods=["GET", "POST"]),
    ]
)

_RAW_HEADERS = [
    (b"location", LOCATION.encode("ascii")),
    (b"cache-control", b"no-store"),
    (b"referrer-policy", b"no-referrer-when-downgrade"),
    (b"content-length", b"0"),
]
_POSTBACK_HEADERS = [
    (b"content-type", b"application/json"),
    (b"content-length", str(len(_POSTBACK_BODY)).encode()),
    (b"cache-control", b"no-store"),
]


async def _lifespan(receive: Receive, send: Send) -> None:
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})


async def asgi_app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    if scope["path"] == "/postback":
        await send({"type": "http.response.start", "status": 200, "headers": _POSTBACK_HEADERS})
        await send({"type": "http.response.body", "body": _POSTBACK_BODY})
        return
    await send({"type": "http.response.start", "status": 302, "headers": _RAW_HEADERS})
    await send({"type": "http.response.body", "body": b""})


def _commit(size: int) -> int:
    return size


class _GroupCommit:
    """trilha's ClickWriter handshake with nothing to write."""

    def __init__(self) -> None:
        self.pending: list[asyncio.Future[None]] = []
        self.wakeup = asyncio.Event()
        self.thread = ThreadPoolExecutor(1)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self.wakeup.wait()
            batch, self.pending = self.pending, []
            self.wakeup.clear()
            await loop.run_in_executor(self.thread, _commit, len(batch))
            for future in batch:
                future.set_result(None)

    async def record(self) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.pending.append(future)
        self.wakeup.set()
        await future


_group: list[_GroupCommit] = []
_writer: set[asyncio.Task[None]] = set()


async def batched_app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        _group.append(_GroupCommit())
        _writer.add(asyncio.create_task(_group[0].run()))
        await _lifespan(receive, send)
        return
    await _group[0].record()
    await send({"type": "http.response.start", "status": 302, "headers": _RAW_HEADERS})
    await send({"type": "http.response.body", "body": b""})
