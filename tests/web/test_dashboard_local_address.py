"""Where the dashboard shows a link to paste elsewhere (a postback URL, a tracking link), it says
when that link reaches this machine only: TRILHA_PUBLIC_URL unset."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_campaign
from tests.postbacks.shop import make_merchant
from tests.web.browsers import signed_in
from tests.web.callers import make_owner
from trilha.app import TrilhaApp, create_app
from trilha.settings import Settings

WARNING = "só funciona nesta máquina"


@pytest.fixture
async def local_app(settings: Settings) -> AsyncIterator[TrilhaApp]:
    """The app as README's command runs it: no public address set."""
    application = create_app(settings.model_copy(update={"public_url": None}))
    application.runtime.start()
    yield application
    await application.runtime.stop()


async def pages(app: TrilhaApp, db: AsyncEngine) -> list[str]:
    owner, workspace = await make_owner(db)
    merchant = await make_merchant(db, workspace, preset="hotmart")
    campaign = await make_campaign(db, workspace)
    browser, _ = await signed_in(app, db, owner.user)
    async with browser:
        paths = (
            f"/w/{workspace.id}/settings",
            f"/w/{workspace.id}/merchants",
            f"/w/{workspace.id}/merchants/{merchant.id}",
            f"/w/{workspace.id}/campaigns/{campaign.id}",
        )
        answers = [await browser.get(path) for path in paths]
    assert [a.status_code for a in answers] == [200] * len(paths)
    return [a.text for a in answers]


async def test_a_link_that_reaches_this_machine_only_says_so_and_how_to_fix_it(
    local_app: TrilhaApp, db: AsyncEngine
) -> None:
    for text in await pages(local_app, db):
        assert WARNING in text
        assert "TRILHA_PUBLIC_URL" in text
        assert "http://127.0.0.1:8000" in text


async def test_with_a_public_address_no_warning_is_shown(app: TrilhaApp, db: AsyncEngine) -> None:
    for text in await pages(app, db):
        assert WARNING not in text
