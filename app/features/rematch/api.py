"""The rematch's JSON API: read a game's rematch and its answers, make it, say yes (take one's
own seat of it) or no, and settle it after a no (app/features/rematch/rematches.py)."""


from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint, Schema
from apiflask.fields import Boolean

from app.features.rematch import rematches
from app.web.api.access import (
    idempotent,
    optional_seat,
    seat_auth,
    seat_in,
    service,
)
from app.web.api.schemas import GAME_VARIANTS as GAME_VARIANTS  # (the CLI's choices)
from app.web.api.schemas import GAMES as GAMES
from app.web.api.schemas import (
    JoinIn,
    answers,
)
from app.web.idempotency import (
    Claim,
)

bp = APIBlueprint("rematch_api", __name__, url_prefix="/api", tag="Rematch")

# ---------------------------------------------------------------------- rematch


@bp.get("/games/<uid>/rematch")
@bp.doc(summary="The game's rematch", description="follows: the game this one is the rematch "
        "of; rematch: the rematch made of it (each a game id, or null); answers: where the "
        "rematch stands (its status, each seat's answer: yes, waiting, declined or computer, "
        "the names waiting and declined, and settle: whether those who said yes may now choose "
        "the computer or cancel), or null. With a seat token of this game, join: whether the "
        "seat's own seat of the rematch waits for its answer (POST .../rematch/join says yes).",
        security=[{}, {"SeatToken": []}], responses=answers(200, 401, 403, 404))
def read_rematch(uid: str) -> dict[str, Any]:
    links: dict[str, Any] = rematches.links_of(service(), uid)
    found = rematches.status(service(), uid)
    links["answers"] = None if found is None else {
        key: found[key] for key in ("status", "seats", "waiting", "declined", "settle")}
    position = optional_seat(uid)
    if position is not None:
        links["join"] = rematches.waiting_seat(service(), uid, position) is not None
    return links


class SettleIn(Schema):
    play = Boolean(required=True, metadata={
        "description": "true: start with the computer in the declined seats; false: cancel"})


@bp.post("/games/<uid>/rematch")
@bp.auth_required(seat_auth)
@bp.doc(summary="Make the rematch of a finished game", description="As the token's seat (a "
        "player's, not the computer's). A new game with the same seats, settings and setup, "
        "each seat kept for its own player: computer seats kept, every other player invited "
        "by mail whether to play again (asked: their positions; nobody is invited, nobody is "
        "given another seat's credential). made: true for the one who makes it, whose yes is "
        "implied and whose own seat is taken at once: its position, api_token (shown once) and "
        "the game's commitment, and the creator token; the client then gives its seat's share "
        "of the deal (POST /games/<new>/contribution). The rematch starts by itself once every "
        "player has said yes. A game has one rematch, and anyone asking again is answered "
        "with it (made: false): they say yes with POST .../rematch/join.",
        responses=answers(201, 401, 403, 404, 409))
@idempotent(201)
def post_rematch(uid: str, answer: Claim | None) -> dict[str, Any]:
    return rematches.rematch(service(), uid, seat_in(uid), idempotency=answer)


@bp.post("/games/<uid>/rematch/join")
@bp.auth_required(seat_auth)
@bp.input(JoinIn, arg_name="body")
@bp.doc(summary="Say yes to the rematch", description="As the token's seat of this finished "
        "game: its player takes their own seat of the game's rematch, kept for their address. "
        "Answers as an accepted invitation does: the new game, the position, its API token "
        "(shown once) and the commitment, with started: whether this yes, the last one, "
        "started the rematch. Send the contribution drawn after reading the commitment (GET "
        "/games/<rematch>).", responses=answers(201, 400, 401, 403, 404, 409))
@idempotent(201)
def join_rematch(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return rematches.join(service(), uid, seat_in(uid), contribution=body["contribution"],
                          idempotency=answer)


@bp.post("/games/<uid>/rematch/decline")
@bp.auth_required(seat_auth)
@bp.doc(summary="Say no to the rematch", description="As the token's seat of this finished "
        "game: its player declines the rematch. It then waits; once every player has answered, "
        "those who said yes choose the computer in the declined seats, or cancel it (POST "
        ".../rematch/settle). Saying yes afterwards, while it waits, is still possible.",
        responses=answers(200, 401, 403, 404, 409))
def decline_rematch(uid: str) -> dict[str, Any]:
    return rematches.decline(service(), uid, seat_in(uid))


@bp.post("/games/<uid>/rematch/settle")
@bp.auth_required(seat_auth)
@bp.input(SettleIn, arg_name="body")
@bp.doc(summary="Settle a rematch someone declined", description="As the token's seat of this "
        "finished game, whose player said yes to its rematch, once every player has answered "
        "and someone said no: play true starts it with the computer (easy) in each declined "
        "seat, false cancels it (abandoned).", responses=answers(200, 400, 401, 403, 404, 409))
def settle_rematch(uid: str, body: dict[str, Any]) -> dict[str, Any]:
    return rematches.settle(service(), uid, seat_in(uid), play=bool(body["play"]))
