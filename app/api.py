"""The JSON API under ``/api/`` (OpenAPI document at ``/api/openapi.json``).

Seats authenticate with their API token (``Authorization: Bearer ...``); a game's creator with
``X-Creator-Token``; the server's admin with the ``TITANPOST_ADMIN_TOKEN`` bearer token. Errors are
JSON objects ``{"error": "...", ...}`` whose message says what to do.
"""

from __future__ import annotations

import secrets
from typing import Any

from apiflask import APIBlueprint, HTTPTokenAuth, Schema
from apiflask.fields import Boolean, Dict, Integer, List, Raw, String
from apiflask.validators import Length, OneOf, Range
from flask import current_app, request

from .engine import VARIANTS
from .service import Forbidden, GameService, Unauthorized

bp = APIBlueprint("api", __name__, url_prefix="/api")
seat_auth = HTTPTokenAuth(scheme="Bearer", name="SeatToken", description="A seat's API token")
admin_auth = HTTPTokenAuth(scheme="Bearer", name="AdminToken",
                           description="The server's admin token (TITANPOST_ADMIN_TOKEN)")


def service() -> GameService:
    svc: GameService = current_app.extensions["titanpost.service"]
    return svc


def _verify_seat(token: str) -> dict[str, Any] | None:
    uid, position, email = service().seat_for_token(token)
    return {"game": uid, "position": position, "email": email}


def _verify_admin(token: str) -> bool | None:
    expected = service().settings.admin_token
    if expected is None:
        raise Forbidden("the admin API is off: set TITANPOST_ADMIN_TOKEN on the server")
    if not secrets.compare_digest(token, expected):
        raise Unauthorized("the admin token is wrong")
    return True


seat_auth.verify_token(_verify_seat)
admin_auth.verify_token(_verify_admin)


def _seat_in(uid: str) -> int:
    """The authenticated seat's position, which must be in game ``uid``."""
    seat = seat_auth.current_user
    assert seat is not None
    if seat["game"] != uid:
        service().ensure_exists(uid)
        raise Forbidden("this API token belongs to a seat in another game")
    return int(seat["position"])


def _creator_token() -> str:
    token = request.headers.get("X-Creator-Token", "")
    if not token:
        raise Unauthorized("send the creator token (given when the game was created) in the "
                           "X-Creator-Token header")
    return token


# ---------------------------------------------------------------------- schemas


class SeatIn(Schema):
    email = String(load_default="", metadata={"description": "Player's address (not for bots)"})
    name = String(load_default=None, validate=Length(max=100))
    titans = List(String(), load_default=list, metadata={"description": "Chosen Titan(s); "
                                                          "empty for a random one"})
    team = Integer(load_default=None)
    language = String(load_default="en", validate=OneOf(["en", "pl"]))
    bot = Boolean(load_default=False, metadata={"description": "A computer player's seat"})
    notify = Dict(load_default=dict)


class CreateGameIn(Schema):
    name = String(load_default="", validate=Length(max=200))
    variant = String(load_default="standard", validate=OneOf(VARIANTS))
    circuits = List(Raw(), load_default=lambda: ["kaldheira"],
                    metadata={"description": "One circuit (three for Grand Slam): a built-in "
                              "name or a circuit object"})
    seats = List(Dict(), required=True, validate=Length(min=2, max=6))
    settings = Dict(load_default=dict, metadata={"description": "Deadlines and other options"})
    seed = Integer(load_default=None, validate=Range(min=0, max=2**62))


class InviteIn(Schema):
    position = Integer(required=True, validate=Range(min=0, max=5))
    email = String(required=True, validate=Length(max=254))


class AcceptIn(Schema):
    invite_token = String(required=True, validate=Length(min=10, max=200))
    name = String(load_default=None, validate=Length(max=100))


class StartIn(Schema):
    fill_with_bots = Boolean(load_default=False)


class MoveIn(Schema):
    expected_seq = Integer(required=True, validate=Range(min=0),
                           metadata={"description": "Moves in the log when you saw the decision"})
    input = String(required=True, validate=Length(min=1, max=500),
                   metadata={"description": "One input, or several joined with ';'"})


class AnyOut(Schema):
    class Meta:
        unknown = "include"


# ---------------------------------------------------------------------- games


@bp.get("/")
@bp.doc(summary="Where things are")
def index() -> dict[str, Any]:
    return {"service": "Titan Post", "openapi": "/api/openapi.json", "docs": "/api/docs"}


@bp.post("/games")
@bp.input(CreateGameIn, arg_name="body")
@bp.output({}, status_code=201)
@bp.doc(summary="Create a game", description="Returns the creator token (keep it: it starts, "
        "invites and abandons) and one invitation token per human seat.")
def create_game(body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    created = service().create_game(
        seats=body["seats"], variant=body["variant"], circuits=body["circuits"],
        name=body["name"], settings=body["settings"], seed=body["seed"],
    )
    base = service().settings.base_url
    for invitation in created["invitations"]:
        invitation["link"] = f"{base}/join/{invitation['invite_token']}"
    return created, 201


@bp.get("/games")
@bp.auth_required(seat_auth)
@bp.doc(summary="List my games", description="Every game with a seat for the token's address.")
def my_games() -> dict[str, Any]:
    seat = seat_auth.current_user
    assert seat is not None
    return {"games": service().my_games(seat["email"])}


@bp.get("/games/<uid>")
@bp.doc(summary="Game state", description="Your view with a seat token; without one, the "
        "spectator view (no hidden information).")
def game_state(uid: str) -> dict[str, Any]:
    return service().state(uid, _optional_seat(uid))


def _optional_seat(uid: str) -> int | None:
    """The caller's seat in game ``uid`` when it sent a valid token for one, else None."""
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        seat_uid, seat_position, _ = service().seat_for_token(header.removeprefix("Bearer "))
        if seat_uid == uid:
            return seat_position
    return None


@bp.get("/games/<uid>/options")
@bp.auth_required(seat_auth)
@bp.doc(summary="Legal options", description="The pending decision and, when it is yours, "
        "every legal input in the notation.")
def game_options(uid: str) -> dict[str, Any]:
    return service().options(uid, _seat_in(uid))


@bp.post("/games/<uid>/moves")
@bp.auth_required(seat_auth)
@bp.input(MoveIn, arg_name="body")
@bp.doc(summary="Submit inputs", description="409 with the current state when the game moved "
        "on; 422 with the legal options when an input is illegal; a repeated identical "
        "submission is answered as already applied.")
def submit_move(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    return service().submit(uid, _seat_in(uid), body["expected_seq"], body["input"])


@bp.get("/games/<uid>/log")
@bp.doc(summary="Move log")
def game_log(uid: str) -> dict[str, Any]:
    return service().log(uid, _optional_seat(uid))


@bp.post("/games/<uid>/invitations")
@bp.input(InviteIn, arg_name="body")
@bp.doc(summary="Invite a player to a seat", description="Creator only (X-Creator-Token).")
def invite(uid: str, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    result = service().invite(uid, _creator_token(), body["position"], body["email"])
    result["link"] = f"{service().settings.base_url}/join/{result['invite_token']}"
    return result, 201


@bp.post("/invitations/accept")
@bp.input(AcceptIn, arg_name="body")
@bp.doc(summary="Accept an invitation", description="Returns the seat's API token, once.")
def accept(body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    return service().accept(body["invite_token"], name=body["name"]), 201


@bp.post("/games/<uid>/start")
@bp.input(StartIn, arg_name="body")
@bp.doc(summary="Start the game", description="Creator only. Seats not yet accepted may be "
        "given to computer players with fill_with_bots.")
def start(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    return service().start(uid, _creator_token(), fill_with_bots=body["fill_with_bots"])


@bp.post("/games/<uid>/resign")
@bp.auth_required(seat_auth)
@bp.doc(summary="Resign", description="A computer player takes over the seat.")
def resign(uid: str) -> dict[str, Any]:
    return service().resign(uid, _seat_in(uid))


@bp.post("/games/<uid>/abandon")
@bp.doc(summary="Abandon the game", description="Creator only.")
def abandon(uid: str) -> dict[str, Any]:
    return service().abandon(uid, _creator_token())


# ---------------------------------------------------------------------- admin


@bp.get("/admin/games/<uid>/states/<int:seq>")
@bp.auth_required(admin_auth)
@bp.doc(summary="The full state after a given move (admin)")
def admin_state_at(uid: str, seq: int) -> dict[str, Any]:
    return service().state_at(uid, seq)


@bp.get("/admin/games/<uid>/replay")
@bp.auth_required(admin_auth)
@bp.doc(summary="Every move with the board after it (admin)")
def admin_replay(uid: str) -> dict[str, Any]:
    return service().replay(uid)


@bp.get("/admin/games/<uid>/export")
@bp.auth_required(admin_auth)
@bp.doc(summary="Export a game as JSON (admin)")
def admin_export(uid: str) -> dict[str, Any]:
    return service().export(uid)


@bp.post("/admin/games/import")
@bp.auth_required(admin_auth)
@bp.doc(summary="Import an exported game (admin)")
def admin_import() -> tuple[dict[str, Any], int]:
    data = request.get_json(silent=False)
    return service().import_game(data), 201


@bp.get("/admin/verify")
@bp.auth_required(admin_auth)
@bp.doc(summary="Replay every game and check hashes and snapshots (admin)")
def admin_verify() -> dict[str, Any]:
    report = service().verify_all()
    return {"ok": not report, "games": report}
