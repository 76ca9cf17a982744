"""A seat's private notes on its game: listed, written, edited and deleted by the seat's player
alone (the game page's "My notes", ``titanpost notes``, the API).

Who reads a note: the player who wrote it, while their address still holds the seat
(``GameNote.author`` is the seat's address when it was written; :func:`.records.seat_notes`).
Nobody else ever does: not the other seats, not spectators, not the admin's pages, webhooks,
push, mail or the live stream (a note changes nothing they see, so it sends no event and counts
in no page's mark). A note of another seat is answered exactly as one that does not exist, so
note ids tell nothing.

A note is text of several lines, at most :data:`.records.MAX_NOTE_CHARS` characters, checked
as names are (app/core/textrules.py): line breaks unified, tabs as spaces, and refused when it
holds a control, invisible or unassigned character or a text-direction mark. A seat keeps at
most :data:`.records.MAX_NOTES_PER_SEAT` notes per game. A note may be pinned to an entry of the
log (``seq``), or to the game as a whole (None).
"""

from __future__ import annotations

from typing import Any, Final

from sqlalchemy import func
from sqlmodel import Session, select

from app.core.i18n import N_
from app.core.integers import in_column
from app.core.models import Game, GameNote, Move, Seat, utcnow
from app.core.textrules import LINE_SEPARATORS, line_problem
from app.features.notes.records import (
    MAX_NOTE_CHARS,
    MAX_NOTES_PER_SEAT,
    count_seat_notes,
    note_json,
    seat_notes,
)
from app.service import (
    AnswerRecorder,
    BadRequest,
    Forbidden,
    GameService,
    NotFound,
    find_game,
)

NOTE_NOT_TEXT: Final = N_("a note is text")
NOTE_EMPTY: Final = N_("a note needs some text: nothing was saved")
NOTE_TOO_LONG: Final = N_(
    "a note is at most {limit} characters (this one has {length}): nothing was saved")
NOTE_BAD_CHARACTER: Final = N_(
    "a note holds {character}, a control, invisible or unassigned character or a "
    "text-direction mark: take it out and save again")
TOO_MANY: Final = N_(
    "you keep {limit} notes on this game, the most there may be: delete one before writing "
    "another")
NO_ENTRY: Final = N_("the log has no entry {seq}: a note is pinned to an entry from 1 to {last}")
NO_LOG: Final = N_("the game's log has no entries yet: a note cannot be pinned to one")
NO_NOTE: Final = N_("you have no note {id} in this game")
NO_PLAYER: Final = N_("this seat has no player's address: notes are kept for the seat's player")
NOTHING_TO_CHANGE: Final = N_("say what to change: the text, the log entry, or both")


def clean_note(text: Any) -> str:
    """The note as stored: its line breaks unified to ``\\n``, tabs as spaces, the blank edges
    trimmed; BadRequest (with its catalogue message) when nothing is left, when it is too long
    or when a line holds a character a name may not (app/core/textrules.py)."""
    if not isinstance(text, str):
        raise BadRequest("a note is text", words=(NOTE_NOT_TEXT, {}))
    note: str = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    for separator in LINE_SEPARATORS:
        note = note.replace(separator, "\n")
    note = note.strip()
    if not note:
        raise BadRequest("a note needs some text: nothing was saved", words=(NOTE_EMPTY, {}))
    if len(note) > MAX_NOTE_CHARS:
        fields = {"limit": MAX_NOTE_CHARS, "length": len(note)}
        raise BadRequest(NOTE_TOO_LONG.format(**fields), words=(NOTE_TOO_LONG, fields))
    for line in note.split("\n"):
        character = line_problem(line)
        if character is not None:
            raise BadRequest(NOTE_BAD_CHARACTER.format(character=character),
                             words=(NOTE_BAD_CHARACTER, {"character": character}))
    return note


def _author_seat(s: Session, game: Game, position: int, *, lock: bool = False) -> Seat:
    """The seat whose player writes (its row locked while a note is added: the count of its
    notes holds until the commit); Forbidden when it has no address."""
    query = select(Seat).where(Seat.game_id == game.id, Seat.position == position)
    seat = s.exec(query.with_for_update() if lock else query).first()
    if seat is None:
        raise Forbidden(f"game {game.uid} has no seat {position + 1}")
    if not seat.email:
        raise Forbidden("this seat has no player's address", words=(NO_PLAYER, {}))
    return seat


def _checked_seq(s: Session, game: Game, seq: Any) -> int | None:
    """A pin: None (the game as a whole) or an entry of the log, 1 to its newest."""
    if seq is None:
        return None
    if type(seq) is not int:
        raise BadRequest("a note's log entry is a whole number")
    last = s.exec(select(func.max(Move.seq)).where(Move.game_id == game.id)).one() or 0
    if not last:
        raise BadRequest("the game's log has no entries yet", words=(NO_LOG, {}))
    if not 1 <= seq <= last:
        raise BadRequest(f"the log has no entry {seq} (1 to {last})",
                         words=(NO_ENTRY, {"seq": seq, "last": last}))
    return seq


def _own_note(s: Session, seat: Seat, note_id: Any) -> GameNote:
    """The seat's player's note ``note_id``: NotFound, with the same answer, when there is no
    such note and when it is another seat's or another player's."""
    note = None
    if in_column(note_id):
        note = s.exec(select(GameNote).where(GameNote.id == note_id,
                                             GameNote.seat_id == seat.id,
                                             GameNote.author == seat.email)).first()
    if note is None:
        raise NotFound(f"you have no note {note_id} in this game",
                       words=(NO_NOTE, {"id": note_id}))
    return note


def _answer(game: Game, seat: Seat, notes: list[GameNote]) -> dict[str, Any]:
    return {"game": game.uid, "seat": seat.position, "notes": [note_json(n) for n in notes],
            "most": MAX_NOTES_PER_SEAT, "max_chars": MAX_NOTE_CHARS}


def list_notes(service: GameService, uid: str, position: int) -> dict[str, Any]:
    """The notes seat ``position``'s player keeps on game ``uid``, oldest first."""
    with service.session() as s:
        game = find_game(s, uid)
        seat = _author_seat(s, game, position)
        return _answer(game, seat, seat_notes(s, seat))


def add_note(service: GameService, uid: str, position: int, text: Any, seq: Any = None, *,
             idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """Write a note as seat ``position``'s player, pinned to log entry ``seq`` (or to the game
    as a whole); the answer is the note."""
    cleaned = clean_note(text)
    with service.session(write=True) as s:
        game = find_game(s, uid)
        seat = _author_seat(s, game, position, lock=True)
        pinned = _checked_seq(s, game, seq)
        if count_seat_notes(s, seat) >= MAX_NOTES_PER_SEAT:
            raise BadRequest(f"a seat keeps at most {MAX_NOTES_PER_SEAT} notes on a game",
                             words=(TOO_MANY, {"limit": MAX_NOTES_PER_SEAT}))
        assert game.id is not None and seat.id is not None
        note = GameNote(game_id=game.id, seat_id=seat.id, author=seat.email, seq=pinned,
                        text=cleaned)
        s.add(note)
        s.flush()
        result = {"game": uid, "note": note_json(note)}
        if idempotency is not None:
            idempotency.record(s, result)
        s.commit()
    return result


def edit_note(service: GameService, uid: str, position: int, note_id: Any,
              changes: dict[str, Any]) -> dict[str, Any]:
    """Change the text (``text``) and/or the pin (``seq``: an entry, or None to unpin) of the
    seat's player's note ``note_id``; the answer is the note as it is now."""
    if not changes.keys() & {"text", "seq"}:
        raise BadRequest("give the text, the log entry or both", words=(NOTHING_TO_CHANGE, {}))
    cleaned = clean_note(changes["text"]) if "text" in changes else None
    with service.session(write=True) as s:
        game = find_game(s, uid)
        note = _own_note(s, _author_seat(s, game, position), note_id)
        if cleaned is not None:
            note.text = cleaned
        if "seq" in changes:
            note.seq = _checked_seq(s, game, changes["seq"])
        note.updated_at = utcnow()
        s.add(note)
        s.flush()
        result = {"game": uid, "note": note_json(note)}
        s.commit()
    return result


def delete_note(service: GameService, uid: str, position: int, note_id: Any) -> dict[str, Any]:
    """Delete the seat's player's note ``note_id``."""
    with service.session(write=True) as s:
        game = find_game(s, uid)
        note = _own_note(s, _author_seat(s, game, position), note_id)
        s.delete(note)
        s.commit()
    return {"game": uid, "deleted": note_id}


def pinned_entries(notes: list[dict[str, Any]]) -> dict[int, int]:
    """The log entries the notes are pinned to, each with its first note's id (the log's
    marker links to it)."""
    found: dict[int, int] = {}
    for note in notes:
        if note["seq"] is not None:
            found.setdefault(int(note["seq"]), int(note["id"]))
    return found
