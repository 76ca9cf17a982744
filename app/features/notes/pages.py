"""The game page's "My notes": the panel (shown to the browser's seat's player alone) and its
forms, which add, change and delete a note and go back to the panel.

The panel and the log's markers come from :func:`my_notes`, given to the page's template (its
part is ``pages/_notes.html``); nothing of a note is in a page of anyone else, a spectator's
included, nor in what the page's live connection carries (a note sends no event).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, flash, g, redirect, request, url_for
from flask.typing import ResponseReturnValue

from app.features.notes import notes
from app.features.notes.records import MAX_NOTE_CHARS, MAX_NOTES_PER_SEAT
from app.service import Forbidden, ServiceError
from app.web.browser_seats import seat_in, service
from app.web.inputcheck import whole_number
from app.web.pages.language import pick_lang, tr

bp = Blueprint("notes", __name__)


def install_notes_context(app: Flask) -> None:
    """Give the page templates ``my_notes(uid, position)``: the notes of the browser's seat."""
    app.context_processor(lambda: {"my_notes": my_notes})


def my_notes(uid: str, position: int | None, rows: Any = None) -> dict[str, Any] | None:
    """The notes of seat ``position`` of game ``uid`` for its page, when this browser plays
    that seat (else None: the page shows no panel): ``notes`` oldest first (each ``shown``
    when its log entry is among the page's log ``rows``), ``pinned`` (a log entry's first
    note), ``pin`` (the entry the page's address asks to pin a new note to), ``most``,
    ``max_chars`` and ``full``."""
    if position is None or seat_in(uid) != position:
        return None
    try:
        found = notes.list_notes(service(), uid, position)
    except ServiceError:  # (a seat without an address: no notes)
        return None
    shown = {row["seq"] for row in rows} if isinstance(rows, list) else set()
    pin = request.args.get("pin", "")
    return {"notes": [note | {"shown": note["seq"] in shown} for note in found["notes"]],
            "pinned": notes.pinned_entries(found["notes"]),
            "pin": pin if pin.isascii() and pin.isdigit() else "",
            "most": MAX_NOTES_PER_SEAT, "max_chars": MAX_NOTE_CHARS,
            "full": len(found["notes"]) >= MAX_NOTES_PER_SEAT}


def _page_seat(uid: str) -> int:
    """This browser's seat in game ``uid``, its language the page's; Forbidden without one."""
    position = seat_in(uid)
    if position is None:
        service().ensure_exists(uid)
        raise Forbidden(tr("only the game's players keep notes on it: open the game from the "
                           "link in your mail"))
    g.lang = pick_lang(service().link_seat(uid, position).language)
    return position


def _pin() -> int | None:
    """The form's log entry (empty: the game as a whole)."""
    raw = request.form.get("seq", "").strip()
    return whole_number(raw, tr("log entry"), low=1) if raw else None


def _back(uid: str, note_id: int | None = None) -> ResponseReturnValue:
    anchor = f"note-{note_id}" if note_id is not None else "notes"
    return redirect(url_for("play.game", uid=uid, _anchor=anchor), 303)


@bp.post("/games/<uid>/notes")
def add(uid: str) -> ResponseReturnValue:
    """Write the form's note as this browser's seat's player."""
    position = _page_seat(uid)
    try:
        made = notes.add_note(service(), uid, position, request.form.get("text", ""), _pin())
    except ServiceError as exc:
        flash(exc.say(g.get("lang")), "error")
        return _back(uid)
    flash(tr("Your note is saved: only you can read it."), "ok")
    return _back(uid, made["note"]["id"])


@bp.post("/games/<uid>/notes/<int:note_id>")
def edit(uid: str, note_id: int) -> ResponseReturnValue:
    """Change one of this browser's seat's player's notes: its text and its log entry."""
    position = _page_seat(uid)
    try:
        notes.edit_note(service(), uid, position, note_id,
                        {"text": request.form.get("text", ""), "seq": _pin()})
    except ServiceError as exc:
        flash(exc.say(g.get("lang")), "error")
        return _back(uid)
    flash(tr("Your note is changed."), "ok")
    return _back(uid, note_id)


@bp.post("/games/<uid>/notes/<int:note_id>/delete")
def delete(uid: str, note_id: int) -> ResponseReturnValue:
    """Delete one of this browser's seat's player's notes."""
    position = _page_seat(uid)
    try:
        notes.delete_note(service(), uid, position, note_id)
    except ServiceError as exc:
        flash(exc.say(g.get("lang")), "error")
        return _back(uid)
    flash(tr("Your note is deleted."), "ok")
    return _back(uid)
