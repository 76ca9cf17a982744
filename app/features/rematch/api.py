"""The rematch's JSON API: read a game's rematch links, make the rematch, take one's own seat
of it."""


from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint

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
        "of; rematch: the rematch made of it (each a game id, or null). With a seat token of "
        "this game, join: whether the seat's own seat of the rematch waits for it (POST "
        ".../rematch/join takes it).",
        security=[{}, {"SeatToken": []}], responses=answers(200, 401, 403, 404))
def read_rematch(uid: str) -> dict[str, Any]:
    links: dict[str, Any] = rematches.links_of(service(), uid)
    position = optional_seat(uid)
    if position is not None:
        links["join"] = rematches.waiting_seat(service(), uid, position) is not None
    return links


@bp.post("/games/<uid>/rematch")
@bp.auth_required(seat_auth)
@bp.doc(summary="Make the rematch of a finished game", description="As the token's seat (a "
        "player's, not the computer's). A new game with the same seats, settings and setup, "
        "each seat kept for its own player: computer seats kept, every other player invited "
        "by mail to their own address (invited: their positions; nobody is given their "
        "invitations). made: true for the one who makes it, whose own seat is taken at once: "
        "its position, api_token (shown once) and the game's commitment, and the creator token "
        "(it starts the game); the client then gives its seat's share of the deal (POST "
        "/games/<new>/contribution). A game has one rematch, and anyone asking again is "
        "answered with it (made: false): they take their seat with POST .../rematch/join.",
        responses=answers(201, 401, 403, 404, 409))
@idempotent(201)
def post_rematch(uid: str, answer: Claim | None) -> dict[str, Any]:
    return rematches.rematch(service(), uid, seat_in(uid), idempotency=answer)


@bp.post("/games/<uid>/rematch/join")
@bp.auth_required(seat_auth)
@bp.input(JoinIn, arg_name="body")
@bp.doc(summary="Take one's own seat of the rematch", description="As the token's seat of "
        "this finished game: its player takes their seat of the game's rematch, kept for their "
        "address, without the invitation mailed to them (which is then used up). Answers as an "
        "accepted invitation does: the new game, the position, its API token (shown once) and "
        "the commitment; send the contribution drawn after reading the commitment (GET "
        "/games/<rematch>).", responses=answers(201, 400, 401, 403, 404, 409))
@idempotent(201)
def join_rematch(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return rematches.join(service(), uid, seat_in(uid), contribution=body["contribution"],
                          idempotency=answer)
