"""The webhooks' JSON API (the game's creator only): list, add and remove a game's webhooks."""


from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint

from app.features.webhooks.hooks import add_webhook, list_webhooks, remove_webhook
from app.web.api.access import (
    CREATOR,
    creator_token,
    idempotent,
    service,
)
from app.web.api.schemas import GAME_VARIANTS as GAME_VARIANTS  # (the CLI's choices)
from app.web.api.schemas import GAMES as GAMES
from app.web.api.schemas import (
    AddedWebhookOut,
    WebhookIn,
    WebhooksOut,
    answers,
)
from app.web.idempotency import (
    Claim,
)

bp = APIBlueprint("webhooks_api", __name__, url_prefix="/api", tag="Webhooks")

# ---------------------------------------------------------------------- webhooks


@bp.get("/games/<uid>/webhooks")
@bp.output(WebhooksOut)
@bp.doc(summary="The game's webhooks", description="Creator only.", security=CREATOR,
        responses=answers(200, 401, 403, 404))
def read_webhooks(uid: str) -> dict[str, Any]:
    return {"webhooks": list_webhooks(service(), uid, creator_token())}


@bp.post("/games/<uid>/webhooks")
@bp.input(WebhookIn, arg_name="body")
@bp.output(AddedWebhookOut, status_code=201)
@bp.doc(summary="Add a webhook", description="Creator only. The address is told of every turn "
        "to play (whose, which game, its link) and of the game's end (the winner, or that it "
        "was abandoned), in the format of Discord, Slack, a Matrix hookshot generic webhook, "
        "ntfy, or our own JSON, worded in its language (English unless given). "
        "Sent by the worker, retried with backoff; http(s) addresses on public hosts only. "
        "Posts mention nobody (no @everyone, @here, <!channel> or user pings). json posts are "
        "signed (Standard Webhooks) with the secret this answer shows, once.",
        security=CREATOR, responses=answers(201, 400, 401, 403, 404))
@idempotent(201)
def post_webhook(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return add_webhook(service(), uid, creator_token(), body["url"], body["format"],
                       language=body["language"], idempotency=answer)


@bp.delete("/games/<uid>/webhooks/<int:webhook_id>")
@bp.doc(summary="Remove a webhook", description="Creator only. Its unsent posts go too.",
        security=CREATOR, responses=answers(200, 401, 403, 404))
def delete_webhook(uid: str, webhook_id: int) -> dict[str, Any]:
    return remove_webhook(service(), uid, creator_token(), webhook_id)
