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
    group_by: list[str]
    period: PeriodOut
    currency: str
    rows: list[ReportRowOut]
    totals: Metrics
    other_currency: int = Field(
        description="Conversions in another currency than the workspace's, left out"
    )

    @classmethod
    def of(cls, report: Report) -> ReportOut:
        selection, currency = report.selection, report.currency
        period = selection.period
        return cls(
            group_by=[d.value for d in selection.group_by],
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
            totals=metrics(report.totals, currency),
            other_currency=report.other_currency,
        )
