"""The chat's JSON API: read a game's chat (every seat, and spectators where allowed), post to
it as a seat."""


from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint

from app.features.chat import messages as chat
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
    ChatIn,
    ChatQuery,
    answers,
)
from app.web.idempotency import (
    Claim,
)

bp = APIBlueprint("chat_api", __name__, url_prefix="/api", tag="Chat")

# ---------------------------------------------------------------------- chat


@bp.get("/games/<uid>/chat")
@bp.input(ChatQuery, location="query", arg_name="query")
@bp.doc(summary="The game's chat", description="A page of messages, newest last (more: older "
        "ones exist; ask again with before). The chat is public: every seat reads it, and "
        "spectators too when the game allows them.", security=[{}, {"SeatToken": []}],
        responses=answers(200, 400, 401, 403, 404))
def read_chat(uid: str, query: dict[str, Any]) -> dict[str, Any]:
    return chat.read(service(), uid, optional_seat(uid), before=query["before"],
                     limit=query["limit"])


@bp.post("/games/<uid>/chat")
@bp.auth_required(seat_auth)
@bp.input(ChatIn, arg_name="body")
@bp.doc(summary="Post to the game's chat", description="As the token's seat. The other seats "
        "read it on the game page and in their next mail; never write hidden information "
        "here (the whole table reads it).", responses=answers(201, 400, 401, 403, 404))
@idempotent(201)
def post_chat(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return chat.post(service(), uid, seat_in(uid), body["text"], idempotency=answer)
