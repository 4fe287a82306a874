"""The nightly dumps, listed with their sizes and checksums, and served."""

from __future__ import annotations

import datetime as dt

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from ninja import Router, Schema
from pydantic import Field

from . import conditional
from .dumps import dumps_dir
from .models import Dump

router = Router(tags=["dumps"])


class DumpOut(Schema):
    kind: str = Field(description="trades, prices or dividends")
    day: dt.date = Field(description="Holds everything up to the end of this UTC day")
    url: str
    rows: int
    size: int = Field(description="Bytes, gzip-compressed")
    sha256: str
    made_at: dt.datetime


class Dumps(Schema):
    items: list[DumpOut] = Field(description="Newest day first")


@router.get("/dumps", response=Dumps, summary="The nightly dumps")
def dumps(request: HttpRequest) -> HttpResponse:
    """Gzip JSON Lines of every trade (``trades``), each term's closing price and supply per
    UTC day (``prices``) and every dividend with its paper (``dividends``)."""
    found = list(Dump.objects.all())

    def make() -> Dumps:
        return Dumps(
            items=[
                DumpOut(
                    kind=dump.kind,
                    day=dump.day,
                    url=f"{request.path.rstrip('/')}/{dump.file_name}",
                    rows=dump.rows,
                    size=dump.size,
                    sha256=dump.sha256,
                    made_at=dump.made_at,
                )
                for dump in found
            ]
        )

    # The rows are few and change once a night: their own checksums are the facts.
    parts = tuple((dump.file_name, dump.sha256) for dump in found)
    return conditional.respond(request, name="dumps", parts=parts, make=make)


@router.get("/dumps/{file_name}", summary="One dump file (application/gzip)")
def dump_file(request: HttpRequest, file_name: str) -> FileResponse:
    dump = Dump.objects.filter(file_name=file_name).first()
    path = dumps_dir() / file_name
    if dump is None or not path.is_file():
        raise Http404(f"There is no dump {file_name}; the list at /api/v1/dumps has them all.")
    # Only a name the table lists is opened, never a path the client made up; FileResponse
    # closes the file once it is sent.
    answer = FileResponse(open(path, "rb"), content_type="application/gzip")  # noqa: SIM115
    answer["Content-Disposition"] = f'attachment; filename="{file_name}"'
    answer["ETag"] = f'"{dump.sha256}"'
    answer["Cache-Control"] = "public, max-age=86400"
    return answer
