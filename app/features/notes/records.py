"""A seat's private notes as rows: what a note shows its author, what the admin's export holds
of a game's notes, and every note an address wrote (its personal-data download) or their
removal (its "forget me").

This module reads and writes ``game_notes`` in the caller's session and imports nothing of the
service, so that the service's export (app/service/admin.py) and other features may use it.
"""

from __future__ import annotations

from typing import Any, Final

from sqlalchemy import delete, func
from sqlmodel import Session, col, select

from app.core.logchain import timestamp
from app.core.models import Game, GameNote, Seat

MAX_NOTE_CHARS: Final = 4000
"""The longest note (after its line breaks are unified and its blank edges trimmed)."""
MAX_NOTES_PER_SEAT: Final = 200
"""How many notes one seat's player may keep on one game."""


def note_json(note: GameNote) -> dict[str, Any]:
    """A note as its author reads it (the API, the command line): no seat, no address."""
    return {"id": note.id, "seq": note.seq, "text": note.text,
            "created_at": timestamp(note.created_at),
            "updated_at": timestamp(note.updated_at)}


def seat_notes(s: Session, seat: Seat) -> list[GameNote]:
    """The notes the seat's player now may read, oldest first: those written on this seat by
    the address the seat has now (a seat given to someone else shows them none of the notes
    of the player before; a seat with no address, none)."""
    if seat.id is None or not seat.email:
        return []
    return list(s.exec(select(GameNote).where(GameNote.seat_id == seat.id,
                                              GameNote.author == seat.email)
                       .order_by(col(GameNote.id))).all())


def count_seat_notes(s: Session, seat: Seat) -> int:
    """How many notes the seat's player keeps on it (see :func:`seat_notes`)."""
    if seat.id is None or not seat.email:
        return 0
    return int(s.exec(select(func.count()).select_from(GameNote).where(
        GameNote.seat_id == seat.id, GameNote.author == seat.email)).one())


def exported_notes(s: Session, game_id: int, seats: list[Seat]) -> list[dict[str, Any]]:
    """Every note of a game as the admin's export holds it, each marked ``private`` (the
    words of one player to themselves: never shown to anyone else), with its seat's position
    and its author's address, oldest first."""
    positions = {seat.id: seat.position for seat in seats}
    rows = s.exec(select(GameNote).where(GameNote.game_id == game_id)
                  .order_by(col(GameNote.id))).all()
    return [{"private": True, "seat": positions.get(note.seat_id), "author": note.author,
             "seq": note.seq, "text": note.text, "created_at": timestamp(note.created_at),
             "updated_at": timestamp(note.updated_at)} for note in rows]


def notes_of(s: Session, email: str) -> list[dict[str, Any]]:
    """Every note written by ``email`` (on any game, whichever seat holds it now), oldest
    first, with its game and seat: what a personal-data download holds of the notes."""
    address = email.strip().lower()
    if not address:
        return []
    rows = s.exec(select(GameNote, Game.uid, Game.name, Seat.position)
                  .join(Game, col(Game.id) == col(GameNote.game_id))
                  .join(Seat, col(Seat.id) == col(GameNote.seat_id))
                  .where(GameNote.author == address).order_by(col(GameNote.id))).all()
    return [{"game": uid, "game_name": name, "seat": position, **note_json(note)}
            for note, uid, name, position in rows]


def delete_notes_of(s: Session, email: str) -> int:
    """Delete every note written by ``email`` in session ``s`` (the caller commits); how many
    were deleted."""
    address = email.strip().lower()
    if not address:
        return 0
    result = s.execute(delete(GameNote).where(col(GameNote.author) == address))
    return int(getattr(result, "rowcount", 0) or 0)
