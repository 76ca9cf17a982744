"""The JSON API's admin routes (the ``TITANPOST_ADMIN_TOKEN`` bearer token): a state at any
move, the replay, export and import of a game, the verification of every game."""


from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint, Schema
from apiflask.fields import Boolean

from app.web.api.access import (
    admin_auth,
    idempotent,
    service,
)
from app.web.api.schemas import GAME_VARIANTS as GAME_VARIANTS  # (the CLI's choices)
from app.web.api.schemas import GAMES as GAMES
from app.web.api.schemas import (
    ImportIn,
    answers,
)
from app.web.idempotency import (
    Claim,
)

bp = APIBlueprint("admin_api", __name__, url_prefix="/api", tag="Admin")


class ExportQuery(Schema):
    notes = Boolean(load_default=True, metadata={
        "description": "Whether the export holds the players' private notes (marked private)"})

# ---------------------------------------------------------------------- admin


@bp.get("/admin/games/<uid>/states/<int:seq>")
@bp.auth_required(admin_auth)
@bp.doc(summary="The full state after a given move (admin)",
        responses=answers(200, 401, 403, 404))
def admin_state_at(uid: str, seq: int) -> dict[str, Any]:
    return service().state_at(uid, seq)


@bp.get("/admin/games/<uid>/replay")
@bp.auth_required(admin_auth)
@bp.doc(summary="Every move with the board after it (admin)",
        responses=answers(200, 401, 403, 404))
def admin_replay(uid: str) -> dict[str, Any]:
    return service().replay(uid)


@bp.get("/admin/games/<uid>/export")
@bp.auth_required(admin_auth)
@bp.input(ExportQuery, location="query", arg_name="query")
@bp.doc(summary="Export a game as JSON (admin)", description="With the players' private "
        "notes, each marked private, unless ``notes=false``.",
        responses=answers(200, 400, 401, 403, 404))
def admin_export(uid: str, query: dict[str, Any]) -> dict[str, Any]:
    return service().export(uid, notes=query["notes"])


@bp.post("/admin/games/import")
@bp.auth_required(admin_auth)
@bp.input(ImportIn, arg_name="body")
@bp.doc(summary="Import an exported game (admin)", responses=answers(201, 400, 401, 403))
@idempotent(201)
def admin_import(body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return service().import_game(body, idempotency=answer)


@bp.get("/admin/verify")
@bp.auth_required(admin_auth)
@bp.doc(summary="Replay every game and check hashes and snapshots (admin)",
        responses=answers(200, 401, 403))
def admin_verify() -> dict[str, Any]:
    report = service().verify_all()
    return {"ok": not report, "games": report}
