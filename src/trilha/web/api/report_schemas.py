"""What the reports API answers: money as decimal strings, rates as decimals or null."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from pydantic import BaseModel, Field

from trilha.reports.builder import Report
from trilha.reports.metrics import metrics

Metrics = dict[str, int | Decimal | None]


class PeriodOut(BaseModel):
    first: date
    last: date
    timezone: str
    start: datetime = Field(description="The first instant, in UTC")
    end: datetime = Field(description="The instant after the last, in UTC")


class ReportRowOut(BaseModel):
    key: list[str] = Field(description='One value per level; "" where the row has none')
    labels: list[str] = Field(description="What to show: names of campaigns, sources, merchants")
    metrics: Metrics


class ReportOut(BaseModel):
    group_by: list[str] = Field(description="Every level asked, in order")
    parent: list[str] = Field(description="The values of the levels above these rows")
    level: str | None = Field(description="The level these rows are of; null: totals only")
    period: PeriodOut
    currency: str
    rows: list[ReportRowOut] = Field(
        description="The page: the top rows by the sort (by clicks, most first, when none is "
        "given; a time level in time order). Each `key` is the parent's values and the row's."
    )
    row_count: int = Field(description="How many rows the level has under the parent")
    others: Metrics | None = Field(
        description="The sum of the level's rows not on the page (before and after it): with "
        "the rows it adds up to the totals. null: none left out."
    )
    totals: Metrics = Field(description="Of everything under the parent, in the period")
    other_currency: int = Field(
        description="Conversions in another currency than the workspace's, left out"
    )

    @classmethod
    def of(cls, report: Report) -> ReportOut:
        selection, currency = report.selection, report.currency
        period = selection.period
        level = len(report.parent)
        return cls(
            group_by=[d.value for d in report.levels],
            parent=list(report.parent),
            level=report.levels[level].value if level < len(report.levels) else None,
            period=PeriodOut(
                first=period.first,
                last=period.last,
                timezone=period.zone.key,
                start=period.start,
                end=period.end,
            ),
            currency=currency,
            rows=[
                ReportRowOut(
                    key=list(row.key),
                    labels=list(row.labels),
                    metrics=metrics(row.counts, currency),
                )
                for row in report.rows
            ],
            row_count=report.row_count,
            others=None if report.others is None else metrics(report.others, currency),
            totals=metrics(report.totals, currency),
            other_currency=report.other_currency,
        )
