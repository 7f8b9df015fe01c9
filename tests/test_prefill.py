"""bench/prefill.py: the rows it writes are the rows trilha would have written."""

from __future__ import annotations

from datetime import timedelta

from bench.prefill import prefill, sizes
from sqlalchemy import create_engine, select

from trilha.db.engine import sync_url
from trilha.db.schema import click_view, conversion_status_history, conversions, postback_log
from trilha.visitors import parse_device, visitor_key


def read(url: str) -> dict[str, list[dict[str, object]]]:
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            read = {
                table.name: [dict(row) for row in conn.execute(select(table)).mappings()]
                for table in (conversions, conversion_status_history, postback_log)
            }
            read["clicks"] = [dict(row) for row in conn.execute(click_view).mappings()]
            return read
    finally:
        engine.dispose()


def test_it_fills_a_migrated_database_with_clicks_as_trilha_records_them(
    database_url: str,
) -> None:
    stats = prefill(database_url, clicks_count=1500, days=3, conversions_count=30, seed=7)
    rows = read(database_url)

    assert (stats.clicks, stats.conversions) == (1500, 30)
    assert len(rows["clicks"]) == 1500
    for click in rows["clicks"]:
        assert click["visitor_key"] == visitor_key(
            str(click["campaign_id"]), str(click["ip"]), str(click["user_agent"])
        )
        assert click["is_bot"] == parse_device(str(click["user_agent"])).is_bot
    assert 0 < sum(bool(c["is_bot"]) for c in rows["clicks"]) < 300
    # Unique: no click of the same visitor on the same campaign in the 24 h before.
    last_seen: dict[object, object] = {}
    for click in sorted(rows["clicks"], key=lambda c: (c["created_at"], c["id"])):
        before = last_seen.get(click["visitor_key"])
        assert click["is_unique"] == (
            before is None or before <= click["created_at"] - timedelta(hours=24)  # type: ignore[operator]
        )
        last_seen[click["visitor_key"]] = click["created_at"]
    assert not all(c["is_unique"] for c in rows["clicks"])


def test_its_conversions_follow_human_clicks_with_their_history_and_log(
    database_url: str,
) -> None:
    prefill(database_url, clicks_count=1000, days=2, conversions_count=25, seed=3)
    rows = read(database_url)
    by_id = {c["id"]: c for c in rows["clicks"]}
    logged = {entry["id"] for entry in rows["postback_log"]}

    assert len(rows["conversions"]) == 25
    for conversion in rows["conversions"]:
        click = by_id[conversion["click_id"]]
        assert not click["is_bot"]
        assert conversion["created_at"] >= click["created_at"]  # type: ignore[operator]
        assert conversion["dedupe_key"] == f"tx:{conversion['txid']}"
    history = rows["conversion_status_history"]
    assert {h["conversion_id"] for h in history} == {c["id"] for c in rows["conversions"]}
    assert {h["postback_id"] for h in history} == logged
    assert sizes(database_url)["tables"]["clicks"]["per_click"] > 100
