"""Notices e-mailed to a workspace's owners, each in the owner's language, through the SMTP
server the settings name. A worker takes a notice by setting ``emailed_at`` (a conditional
UPDATE), so two workers never send one twice; a notice older than a day is no longer sent."""

from __future__ import annotations

import asyncio
import logging
import smtplib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.message import EmailMessage

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.db.schema import destinations, memberships, notices, users
from trilha.i18n import translator
from trilha.settings import Settings

log = logging.getLogger(__name__)

FRESH = timedelta(days=1)
BATCH = 20


@dataclass(frozen=True, slots=True)
class Mailer:
    host: str
    port: int
    sender: str
    starttls: bool = False
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> Mailer | None:
        if not settings.smtp_host:
            return None
        return cls(
            settings.smtp_host,
            settings.smtp_port,
            settings.smtp_from,
            settings.smtp_starttls,
            settings.smtp_username,
            settings.smtp_password,
        )

    def send(self, messages: list[EmailMessage]) -> None:
        """Blocking: run it in a thread."""
        with smtplib.SMTP(self.host, self.port, timeout=10) as smtp:
            if self.starttls:
                smtp.starttls()
            if self.username:
                smtp.login(self.username, self.password or "")
            for message in messages:
                smtp.send_message(message)


async def email_notices(engine: AsyncEngine, mailer: Mailer, *, now: datetime) -> int:
    """E-mail the owners of each fresh notice not yet taken; how many notices were sent."""
    async with engine.connect() as conn:
        waiting = (
            await conn.execute(
                select(notices.c.id, notices.c.workspace_id, destinations.c.name, notices.c.message)
                .join(destinations, destinations.c.id == notices.c.destination_id)
                .where(notices.c.emailed_at.is_(None), notices.c.created_at > now - FRESH)
                .limit(BATCH)
            )
        ).all()
    sent = 0
    for notice in waiting:
        async with engine.begin() as conn:
            taken = await conn.execute(
                update(notices)
                .where(notices.c.id == notice.id, notices.c.emailed_at.is_(None))
                .values(emailed_at=now)
            )
            if taken.rowcount == 0:  # another worker took it
                continue
            owners = (
                await conn.execute(
                    select(users.c.email, users.c.locale)
                    .join(memberships, memberships.c.user_id == users.c.id)
                    .where(
                        memberships.c.workspace_id == notice.workspace_id,
                        memberships.c.role == "owner",
                    )
                )
            ).all()
        messages = [
            _message(mailer, email, locale, notice.name, notice.message) for email, locale in owners
        ]
        try:
            await asyncio.to_thread(mailer.send, messages)
        except (OSError, smtplib.SMTPException) as exc:
            log.warning("notice e-mail not sent: %s", type(exc).__name__)
            continue
        sent += 1
    return sent


def _message(mailer: Mailer, to: str, locale: str, name: str, text: str) -> EmailMessage:
    t = translator(locale)
    message = EmailMessage()
    message["From"] = mailer.sender
    message["To"] = to
    message["Subject"] = t("mail.destination_off_subject", name=name)
    message.set_content(f"{t('mail.destination_off_body', name=name)}\n\n{text}\n")
    return message
