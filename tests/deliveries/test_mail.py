"""Notices are e-mailed to the workspace's owners, in their language, through a real local SMTP
server; members who are not owners get none."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from email import message_from_bytes
from email.message import Message

import httpx
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.deliveries.conftest import click_on, eventually, make_destination, report
from tests.deliveries.receiver import Receiver
from tests.factories import fetch_all, make_user, make_workspace, now
from trilha.db.schema import destinations, notices
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import Kind
from trilha.settings import Settings
from trilha.workspaces import Role, add_member


class Inbox:
    def __init__(self) -> None:
        self.messages: list[tuple[list[str], Message]] = []

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        content = envelope.content if isinstance(envelope.content, bytes) else b""
        self.messages.append((list(envelope.rcpt_tos), message_from_bytes(content)))
        return "250 OK"


@pytest.fixture
def inbox() -> Iterator[tuple[Inbox, int]]:
    handler = Inbox()
    with socket.socket() as probe:  # a free port: the controller checks it started by connecting
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    yield handler, port
    controller.stop()


@pytest.fixture
def settings(settings: Settings, inbox: tuple[Inbox, int]) -> Settings:
    return settings.model_copy(
        update={"smtp_host": "127.0.0.1", "smtp_port": inbox[1], "smtp_from": "trilha@x.test"}
    )


async def test_a_destination_switched_off_is_emailed_to_the_owners(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    settings: Settings,
    receiver: Receiver,
    inbox: tuple[Inbox, int],
) -> None:
    owner = await make_user(db, email="dona@example.com")
    workspace = await make_workspace(db, owner=owner)
    member = await make_user(db, email="membro@example.com")
    async with db.begin() as conn:
        await add_member(conn, workspace, member, role=Role.MEMBER, now=now())
    destination = await make_destination(
        db, workspace, Spec("Old tracker", Kind.POSTBACK, receiver.url("/404")), settings=settings
    )
    async with db.begin() as conn:
        await conn.execute(
            update(destinations)
            .where(destinations.c.id == destination.id)
            .values(consecutive_failures=9)
        )
    click = await click_on(client, db, workspace)

    await report(client, workspace, click["id"])

    async def mailed() -> bool:
        return bool(inbox[0].messages)

    await eventually(mailed)
    [(to, message)] = inbox[0].messages
    assert to == ["dona@example.com"]
    assert message["From"] == "trilha@x.test"
    assert message["Subject"] == "trilha: o destino Old tracker foi desativado"
    body = message.get_payload(decode=True)
    assert isinstance(body, bytes)
    assert "10 rejections in a row; the last: HTTP 404" in body.decode()
    [notice] = await fetch_all(db, notices)
    assert notice["emailed_at"] is not None
