"""The standings' JSON API, for an address signed in by mail (``Authorization: Bearer`` with
the account token of ``titanpost login EMAIL``: app/features/signin/api.py):

- ``GET /api/standings?game=&from=&to=&group=``: the automatic table of the address, or of its
  group ``group`` (app/features/standings/standings.py);
- ``GET /api/groups``, ``POST /api/groups`` ``{"name"}``: its groups, a new one;
- ``POST /api/groups/<group>/members`` ``{"email"}`` and ``.../members/remove`` ``{"email"}``:
  add and remove an address (in the body, never in the path: an address is kept out of the
  server's access logs); ``DELETE /api/groups/<group>``.

Another address's group is answered 404, as one that does not exist.
"""

from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint, Schema
from apiflask.fields import String
from apiflask.validators import Length
from flask.typing import ResponseReturnValue

from app.features.signin.api import request_account
from app.web.api.access import idempotent, service
from app.web.api.schemas import answers
from app.web.idempotency import Claim

from . import groups
from .standings import standings
from .tables import game_name, season

bp = APIBlueprint("standings_api", __name__, url_prefix="/api", tag="Standings")

class StandingsQuery(Schema):
    game = String(load_default="", validate=Length(max=40), metadata={
        "description": "The game, by its ruleset name as a game's ruleset field gives it "
        "(default: the first registered game)"})
    from_ = String(load_default="", data_key="from", validate=Length(max=40), metadata={
        "description": "The season's first day (2026-09-01; the games' finishing time, UTC)"})
    to = String(load_default="", validate=Length(max=40), metadata={
        "description": "The season's last day, included"})
    group = String(load_default="", validate=Length(max=40), metadata={
        "description": "One of your groups' ids (default: your automatic table)"})


class GroupIn(Schema):
    name = String(required=True, validate=Length(max=100),
                  metadata={"description": "The group's name"})


class MemberIn(Schema):
    email = String(required=True, validate=Length(max=254),
                   metadata={"description": "An address you have played a game with"})


def signed_in_address() -> str:
    """The address of the request's account token; Unauthorized without a valid one."""
    return request_account().email


@bp.get("/standings")
@bp.input(StandingsQuery, location="query", arg_name="query")
@bp.doc(summary="Standings among the players you play with", description="Per game and "
        "season: each player's games, wins, average place and rating (openskill's Weng-Lin "
        "PlackettLuce: ordinal mu - 3 sigma, with mu and sigma), the computer apart by level. "
        "Players are named as in their games, never by address. Without group: the finished "
        "games you played; with group: that group's.",
        responses=answers(200, 400, 401, 404))
def read_standings(query: dict[str, Any]) -> ResponseReturnValue:
    viewer = signed_in_address()
    period = season(query["from_"], query["to"])
    return standings(service(), viewer, game_name(query["game"]), period,
                     query["group"] or None), 200


@bp.get("/groups")
@bp.doc(summary="Your groups", description="Each with its id, name and members' addresses.",
        responses=answers(200, 401))
def list_groups() -> ResponseReturnValue:
    return {"groups": groups.groups_of(service(), signed_in_address())}, 200


@bp.post("/groups")
@bp.input(GroupIn, arg_name="body")
@bp.doc(summary="Make a group", description="A named group of the players you play with; "
        "you are its owner and first member.",
        responses=answers(201, 400, 401))
@idempotent(201)
def make_group(body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return groups.make(service(), signed_in_address(), body["name"], idempotency=answer)


@bp.post("/groups/<uid>/members")
@bp.input(MemberIn, arg_name="body")
@bp.doc(summary="Add an address to your group", description="Only an address you have "
        "played a game with.", responses=answers(200, 400, 401, 404))
def add_member(uid: str, body: dict[str, Any]) -> ResponseReturnValue:
    return groups.add(service(), signed_in_address(), uid, body["email"]), 200


@bp.post("/groups/<uid>/members/remove")
@bp.input(MemberIn, arg_name="body")
@bp.doc(summary="Take an address out of your group",
        responses=answers(200, 400, 401, 404))
def remove_member(uid: str, body: dict[str, Any]) -> ResponseReturnValue:
    return groups.remove(service(), signed_in_address(), uid, body["email"]), 200


@bp.delete("/groups/<uid>")
@bp.doc(summary="Delete your group", responses=answers(200, 401, 404))
def delete_group(uid: str) -> ResponseReturnValue:
    groups.drop(service(), signed_in_address(), uid)
    return {"deleted": uid}, 200
