"""What the click log answers: clicks with the conversions they led to."""

from __future__ import annotations

from pydantic import BaseModel, Field

from trilha.click_log import ClickDetail, LoggedClick
from trilha.web.api.postback_schemas import NEXT_BEFORE, ConversionDetail, ConversionOut
from trilha.web.api.schemas import ClickOut


class LoggedClickOut(ClickOut):
    conversions: list[ConversionOut] = Field(
        description="What the click converted to (event type, status, value), oldest first; "
        "empty when it has not converted."
    )

    @classmethod
    def of(cls, logged: LoggedClick) -> LoggedClickOut:
        return cls(
            **ClickOut.model_validate(logged.row).model_dump(),
            conversions=[ConversionOut.of(c) for c in logged.conversions],
        )


class ClickPage(BaseModel):
    clicks: list[LoggedClickOut] = Field(description="Newest first.")
    next_before: str | None = NEXT_BEFORE


class ClickDetailOut(ClickOut):
    conversions: list[ConversionDetail] = Field(
        description="Its conversions, oldest first, each with its status history."
    )

    @classmethod
    def of(cls, detail: ClickDetail) -> ClickDetailOut:
        return cls(
            **ClickOut.model_validate(detail.row).model_dump(),
            conversions=[
                ConversionDetail.with_history(c, list(history)) for c, history in detail.conversions
            ],
        )
