"""The mark of a page that follows games: a short fingerprint of what the games' pages show.

A page carries the mark of its games as it rendered them, and its live connection compares it
with theirs now: "changed" at once when they differ (a game moved between the page and its
stream, or while the stream was broken).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import func
from sqlmodel import Session

from app.core.models import ChatMessage, Game, Move, Seat, Takeback, table_of
from app.service import GameService

GAMES, MOVES, SEATS = table_of(Game), table_of(Move), table_of(Seat)
CHAT, TAKEBACKS = table_of(ChatMessage), table_of(Takeback)


def marks(s: Session, game_ids: Iterable[int]) -> str:
    """A short fingerprint of what the games' pages show: it changes when a game moves, starts,
    ends, is paused or resumed, a seat joins or is handed over, someone chats or asks for a
    takeback. The page carries it, and its stream says "changed" at once when it differs
    (the game moved between the page and its stream)."""
    ids = sorted(set(game_ids))
    if not ids:
        return ""
    game = GAMES.c.id

    def of_game(column: Any, *where: Any) -> Any:
        return sa.select(column).where(*where).correlate(GAMES).scalar_subquery()

    seat = SEATS.c
    rows = s.execute(sa.select(
        game, GAMES.c.status, GAMES.c.paused_at.is_not(None),
        of_game(func.max(MOVES.c.seq), MOVES.c.game_id == game),
        of_game(func.count(), seat.game_id == game, seat.accepted_at.is_not(None)),
        of_game(func.count(), seat.game_id == game, seat.is_bot.is_(True)),
        of_game(func.max(CHAT.c.id), CHAT.c.game_id == game),
        of_game(func.max(TAKEBACKS.c.id), TAKEBACKS.c.game_id == game,
                TAKEBACKS.c.status == "pending"),
    ).where(game.in_(ids)).order_by(game)).all()
    # (the games' ids are left out: two games alike but for hidden parts have one mark)
    return hashlib.sha256(repr([tuple(row)[1:] for row in rows]).encode()).hexdigest()[:16]


def marks_of(service: GameService, uids: Iterable[str]) -> str:
    """The mark of the games ``uids`` as they are now (games that do not exist are left out)."""
    wanted = sorted(set(uids))
    if not wanted:
        return ""
    with service.session() as s:
        ids = s.execute(sa.select(GAMES.c.id).where(GAMES.c.uid.in_(wanted))).scalars()
        return marks(s, list(ids))
