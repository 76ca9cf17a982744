"""A game's chat: short messages the seats write to each other (page, API, CLI, mail reply).

The chat is public to the game: every seat reads it, and so do spectators when the game allows
them. It is never a channel for hidden information (a secret answer stays sealed in
``sealed_orders``; what a player types here, everyone at the table sees). Messages are
append-only rows of ``chat_messages``; a seat posts under its own position, and a message
without a seat is the system's. Other seats hear of new messages in their next mail (a "chat
since your last mail" part, see :func:`since`), not in a mail per message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Final

from sqlalchemy import exists
from sqlmodel import Session, col, select

from app.core.models import ChatMessage, Game, Seat
from app.core.textrules import clean_message_text
from app.features.live.feed import game_changed
from app.service import (
    AnswerRecorder,
    BadRequest,
    Forbidden,
    GameService,
    find_game,
    timestamp,
)

MAX_CHAT_CHARS: Final = 1000
"""The longest message (after trimming): a chat line, not a letter."""
PAGE: Final = 50
"""Messages per page when reading."""
MAX_PAGE: Final = 200


def clean_text(text: Any) -> str:
    """The message as stored: line breaks unified, tabs as spaces, every other control or
    text-direction character and the blank edges removed (app/core/textrules.py); BadRequest when
    nothing is left or it is too long."""
    if not isinstance(text, str):
        raise BadRequest("a chat message is text")
    cleaned = clean_message_text(text)
    cleaned = re.sub(r"\n{3,}", "\n\n", cleaned).strip()
    if not cleaned:
        raise BadRequest("a chat message needs some text: nothing was posted")
    if len(cleaned) > MAX_CHAT_CHARS:
        raise BadRequest(f"a chat message is at most {MAX_CHAT_CHARS} characters (this one "
                         f"has {len(cleaned)}): nothing was posted")
    return cleaned


def add_message(s: Session, game: Game, position: int | None, text: str) -> ChatMessage:
    """Write a message in session ``s`` (the caller's transaction), its text already clean."""
    assert game.id is not None
    message = ChatMessage(game_id=game.id, seat=position, text=text)
    s.add(message)
    s.flush()
    game_changed(s, game.uid)
    return message


def post(service: GameService, uid: str, position: int, text: Any, *,
         idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
    """Post ``text`` as seat ``position`` of game ``uid``; the answer is the message."""
    cleaned = clean_text(text)
    with service.session(write=True) as s:
        game = find_game(s, uid)
        seat = _seat(s, game, position)
        if seat is None:
            raise Forbidden(f"game {uid} has no seat {position + 1}: only its seats may chat")
        message = add_message(s, game, position, cleaned)
        result = {"game": uid, "message": _json(message, {position: _name(seat)})}
        if idempotency is not None:
            idempotency.record(s, result)
        s.commit()
    return result


def read(service: GameService, uid: str, position: int | None, *, before: int | None = None,
         limit: int = PAGE) -> dict[str, Any]:
    """A page of game ``uid``'s chat, newest last: the ``limit`` messages before message
    ``before`` (default: the newest). ``more`` says whether older ones exist; a spectator
    (``position`` None) reads it only when the game allows spectators."""
    if not 1 <= limit <= MAX_PAGE:
        raise BadRequest(f"limit is 1 to {MAX_PAGE}")
    with service.session() as s:
        game = find_game(s, uid)
        if position is None and not game.settings.get("spectators", True):
            raise Forbidden("this game has no spectators: only its players read its chat")
        query = select(ChatMessage).where(ChatMessage.game_id == game.id)
        if before is not None:
            query = query.where(col(ChatMessage.id) < before)
        rows = list(s.exec(query.order_by(col(ChatMessage.id).desc()).limit(limit + 1)).all())
        names = _names(s, game)
    more = len(rows) > limit
    messages = [_json(row, names) for row in reversed(rows[:limit])]
    return {"game": uid, "messages": messages, "more": more,
            "before": messages[0]["id"] if more and messages else None}


def since(s: Session, game: Game, after: datetime | None, *, reader: int | None,
          limit: int = 20) -> list[dict[str, Any]]:
    """The messages of ``game`` written after ``after`` (all, when None) by others than seat
    ``reader``, oldest first, at most the newest ``limit``: what a mail's "chat since your
    last mail" part shows."""
    query = select(ChatMessage).where(ChatMessage.game_id == game.id)
    if after is not None:
        query = query.where(col(ChatMessage.created_at) > after)
    if reader is not None:
        query = query.where((col(ChatMessage.seat).is_(None)) | (col(ChatMessage.seat) != reader))
    rows = list(s.exec(query.order_by(col(ChatMessage.id).desc()).limit(limit)).all())
    if not rows:
        return []
    names = _names(s, game)
    return [_json(row, names) for row in reversed(rows)]


def has_messages(s: Session, game: Game) -> bool:
    """Whether anyone ever wrote in the game's chat (one indexed lookup)."""
    return s.exec(select(ChatMessage.id).where(ChatMessage.game_id == game.id)
                  .limit(1)).first() is not None


def games_with_messages(s: Session, game_ids: Iterable[int]) -> set[int]:
    """Which of the games anyone ever wrote in (:func:`has_messages` for many games in one
    statement: an indexed lookup each)."""
    ids = sorted(set(game_ids))
    if not ids:
        return set()
    written = exists().where(col(ChatMessage.game_id) == col(Game.id))
    return {game_id for game_id in s.exec(select(Game.id).where(col(Game.id).in_(ids), written))
            if game_id is not None}


def _seat(s: Session, game: Game, position: int) -> Seat | None:
    return s.exec(select(Seat).where(Seat.game_id == game.id, Seat.position == position)).first()


def _names(s: Session, game: Game) -> dict[int, str]:
    seats = s.exec(select(Seat).where(Seat.game_id == game.id)).all()
    return {seat.position: _name(seat) for seat in seats}


def _name(seat: Seat) -> str:
    return seat.player_name or (seat.email.split("@")[0] if seat.email else "") \
        or f"seat {seat.position + 1}"


def _json(message: ChatMessage, names: dict[int, str]) -> dict[str, Any]:
    return {
        "id": message.id,
        "seat": message.seat,
        "name": names.get(message.seat, "?") if message.seat is not None else "Titan Post",
        "text": message.text,
        "created_at": timestamp(message.created_at),
    }
