"""The notes' JSON API: a seat's player lists, writes, edits and deletes their private notes on
a game, with the seat's token (nobody else reads them: no spectator, no other seat)."""

from __future__ import annotations

from typing import Any

from apiflask import APIBlueprint, Schema
from apiflask.fields import String
from flask.views import MethodView

from app.features.notes import notes
from app.features.notes.records import MAX_NOTE_CHARS, MAX_NOTES_PER_SEAT
from app.web.api.access import idempotent, seat_auth, seat_in, service
from app.web.api.schemas import ColumnInteger, answers
from app.web.idempotency import Claim

bp = APIBlueprint("notes_api", __name__, url_prefix="/api", tag="Notes")

TEXT = (f"The note: 1 to {MAX_NOTE_CHARS} characters after trimming, line breaks kept; no "
        "control, invisible or unassigned character nor text-direction mark.")
SEQ = "The log entry the note is pinned to (1 to the newest), or null: the game as a whole."


class NoteIn(Schema):
    text = String(required=True, metadata={"description": TEXT})
    seq = ColumnInteger(low=1, load_default=None, allow_none=True,
                        metadata={"description": SEQ})


class NoteChange(Schema):
    text = String(metadata={"description": TEXT + " Left out: unchanged."})
    seq = ColumnInteger(low=1, allow_none=True,
                        metadata={"description": SEQ + " Left out: unchanged."})


PRIVATE = ("Private: only the seat's player reads them, while their address holds the seat; "
           "a note of another seat is answered as one that does not exist (404).")


@bp.get("/games/<uid>/notes")
@bp.auth_required(seat_auth)
@bp.doc(summary="Your notes on the game", description=f"Oldest first. {PRIVATE}",
        responses=answers(200, 401, 403, 404))
def list_notes(uid: str) -> dict[str, Any]:
    return notes.list_notes(service(), uid, seat_in(uid))


@bp.post("/games/<uid>/notes")
@bp.auth_required(seat_auth)
@bp.input(NoteIn, arg_name="body")
@bp.doc(summary="Write a note on the game", description=f"As the token's seat's player, at "
        f"most {MAX_NOTES_PER_SEAT} per seat and game. {PRIVATE}",
        responses=answers(201, 400, 401, 403, 404))
@idempotent(201)
def add_note(uid: str, body: dict[str, Any], answer: Claim | None) -> dict[str, Any]:
    return notes.add_note(service(), uid, seat_in(uid), body["text"], body["seq"],
                          idempotency=answer)


class NoteView(MethodView):
    """One of your notes: changed or deleted. (One rule for both methods: with a rule per
    method, a note id beyond what a column holds would be answered 405 by the other method's
    rule, instead of 404 as an address that names nothing.)"""

    @bp.auth_required(seat_auth)
    @bp.input(NoteChange, arg_name="body")
    @bp.doc(summary="Change one of your notes", description=f"Its text, its log entry or "
            f"both. {PRIVATE}", responses=answers(200, 400, 401, 403, 404))
    def patch(self, uid: str, note_id: int, body: dict[str, Any]) -> dict[str, Any]:
        return notes.edit_note(service(), uid, seat_in(uid), note_id, body)

    @bp.auth_required(seat_auth)
    @bp.doc(summary="Delete one of your notes", description=PRIVATE,
            responses=answers(200, 401, 403, 404))
    def delete(self, uid: str, note_id: int) -> dict[str, Any]:
        return notes.delete_note(service(), uid, seat_in(uid), note_id)


bp.add_url_rule("/games/<uid>/notes/<int:note_id>", view_func=NoteView.as_view("note"))
