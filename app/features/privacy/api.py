"""A signed-in address's data and leaving, from a terminal (``Authorization: Bearer <account
token>`` of ``titanpost login EMAIL``):

- ``GET /api/account/data?format=json|zip``: everything the server holds about the address, as
  one JSON file or a ZIP (app/features/privacy/mydata.py); changes nothing;
- ``POST /api/account/forget`` ``{"confirm": "<the address>"}``: forgets the address
  (app/features/privacy/forget.py): 409 with ``games`` while it still plays an unfinished game.
"""

from __future__ import annotations

from typing import Any, Final

from apiflask import APIBlueprint, Schema
from apiflask.fields import String
from apiflask.validators import Length, OneOf
from flask import Response, request
from flask.typing import ResponseReturnValue

from app.features.privacy import forget as leaving
from app.features.privacy import mydata
from app.features.signin.api import request_account
from app.web.api.schemas import answers
from app.web.browser_seats import browser_language, service

bp = APIBlueprint("privacy_api", __name__, url_prefix="/api", tag="Sign-in")

PRIVATE: Final = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
"""The headers of a download of personal data (never kept by a cache on the way)."""


class DataQuery(Schema):
    format = String(load_default="json", validate=OneOf(["json", "zip"]),
                    metadata={"description": "json: one file; zip: data.json, games/<id>.json "
                                             "and a README.txt"})


class ForgetIn(Schema):
    confirm = String(required=True, validate=Length(max=254), metadata={
        "description": "The signed-in address itself, typed again: forgetting cannot be undone"})


def download(data: dict[str, Any], kind: str, page: str, language: str) -> Response:
    """The data as an attachment (``kind`` json or zip; its README in ``language``)."""
    if kind == "zip":
        body = mydata.as_zip(data, language, request.host_url, page)
        mimetype = "application/zip"
    else:
        body, mimetype = mydata.as_json(data), "application/json"
    name = mydata.file_name(str(data["address"]), kind)
    return Response(body, mimetype=mimetype, headers={
        **PRIVATE, "Content-Disposition": f'attachment; filename="{name}"'})


@bp.get("/account/data")
@bp.input(DataQuery, location="query", arg_name="query")
@bp.doc(summary="Everything the server holds about the signed-in address", description="With "
        "the account token: the address's mail standing and away dates, every seat it holds "
        "(settings, API tokens by label), each game and its log as that seat sees it, its "
        "notes, the mails sent to it (their delivery, not their text), its push "
        "subscriptions, its sign-ins, its chat and its groups; one JSON file, or a ZIP of "
        "data.json, games/<id>.json and README.txt. Changes nothing.",
        responses=answers(200, 400, 401))
def data(query: dict[str, Any]) -> ResponseReturnValue:
    account = request_account()
    return download(mydata.personal_data(service(), account.email), query["format"],
                    request.host_url.rstrip("/") + "/account/data", browser_language() or "en")


@bp.post("/account/forget")
@bp.input(ForgetIn, arg_name="body")
@bp.doc(summary="Forget the signed-in address", description="With the account token, and the "
        "address typed again as confirm: removes the address, its settings, notes, away "
        "dates, sign-ins (every token and browser of it is signed out), push subscriptions "
        "and API tokens; its seats in finished games are named \"a former player\" and the "
        "games' logs stay whole and verifiable. Refused with 409 (games: the unfinished "
        "ones) while the address holds a seat in a game not over that it has not resigned.",
        responses=answers(200, 400, 401, 409))
def forget(body: dict[str, Any]) -> ResponseReturnValue:
    account = request_account()
    leaving.check_confirmation(account.email, body["confirm"])
    return leaving.forget(service(), account.email).as_json(), 200
