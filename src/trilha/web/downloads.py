"""Files the API and the dashboard hand out for download."""

from __future__ import annotations

from fastapi import Response


def csv_download(body: bytes, filename: str) -> Response:
    return Response(
        body,
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": f'attachment; filename="{filename}"'},
    )
