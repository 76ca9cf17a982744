"""Who has their game open on a page: the live connections of the seats' pages, in the database.

A page that a seat's player has open keeps a live connection (:mod:`.pages`); while it lasts,
mail and push for that seat are held (a decision: until it is answered or the page closes) or
left out (a notice: the player sees it happen), as lichess skips its alarm for a player viewing
the game. The sender and the push worker run in other processes than the pages, so the
connections are kept in ``page_watchers``: one row per serving process, game and seat, written
when its first page opens and deleted when its last one closes; a thread of each serving process
renews its rows' ``seen_at`` every :data:`RENEW_EVERY`, so that the rows of a process that died
count no more after :data:`STALE_AFTER`. Presence is a fact of now: it is read against the
real clock, whatever time a scheduler is asked to act as of.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from collections.abc import Iterable
from datetime import timedelta
from typing import Final

from sqlalchemy import and_, delete, or_, select, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from app.core.models import OutboxMail, PageWatcher, table_of, utcnow
from app.mail.notify import (
    ADDRESS_TEST,
    GAME_OVER,
    HANDOVER,
    NOTICE_KINDS,
    REMINDER,
    STARTED,
    TAKEBACK,
    UNREACHABLE,
    decision_kinds,
)
from app.service import GameService

log = logging.getLogger(__name__)

RENEW_EVERY: Final = 20.0
"""Seconds between two renewals of a process's rows."""
STALE_AFTER: Final = timedelta(seconds=75)
"""A row not renewed for this long is a process gone: its pages count no more."""
HELD_FOR: Final = timedelta(minutes=1)
"""A decision's mail held for a watching player is looked at again after this long."""

Watched = tuple[int, int]
"""(game id, seat id)."""

HOLD: Final = "hold"
LEAVE_OUT: Final = "leave out"
HELD_WHY: Final = "held: the player has the game open on a page"
LEFT_OUT_WHY: Final = "the player had the game open on a page and saw it there"
ASKING_KINDS: Final = (TAKEBACK, REMINDER, HANDOVER, UNREACHABLE)
"""Notices that ask the player for something (a vote, an answer, their seat back): held like a
decision while the player looks, sent if the page closes with it still open."""


def while_watched(kind: str) -> str | None:
    """What becomes of a mail or push of ``kind`` for a seat whose game is open on a page:
    HOLD (a decision, or a notice that asks for something: until it is answered, or the page
    closes), LEAVE_OUT (a notice of the game: the player sees it happen), or None (mail that is
    not the game's news: an invitation, a sign-in, the answer to a mail, the digest)."""
    if kind == ADDRESS_TEST:  # (asked for now, wherever the player is looking)
        return None
    if kind in decision_kinds() or kind in ASKING_KINDS:
        return HOLD
    if kind in NOTICE_KINDS or kind in (STARTED, GAME_OVER):
        return LEAVE_OUT
    return None

_TABLE = table_of(PageWatcher)


class Presence:
    """This process's open pages by (game, seat), mirrored into ``page_watchers``."""

    def __init__(self, service: GameService) -> None:
        self.service = service
        self._lock = threading.Lock()
        self._pages: dict[Watched, int] = {}
        self._process = ""
        self._renewer: threading.Thread | None = None

    @property
    def process(self) -> str:
        """This process's name in the table (made anew after a fork)."""
        if not self._process.startswith(f"{os.getpid()}@"):
            host = socket.gethostname()[:40]
            self._process = f"{os.getpid()}@{host}#{secrets.token_hex(4)}"
        return self._process

    def enter(self, watched: Watched) -> None:
        """A page of the seat opened."""
        with self._lock:
            pages = self._pages.get(watched, 0) + 1
            self._pages[watched] = pages
            self._write(watched, pages)
        self._start_renewing()

    def leave(self, watched: Watched) -> None:
        """A page of the seat closed."""
        with self._lock:
            pages = self._pages.get(watched, 0) - 1
            if pages > 0:
                self._pages[watched] = pages
            else:
                self._pages.pop(watched, None)
            self._write(watched, max(pages, 0))

    def _write(self, watched: Watched, pages: int) -> None:
        game_id, seat_id = watched
        c = _TABLE.c
        with self.service.session(write=True) as s:
            if pages == 0:
                s.execute(delete(_TABLE).where(c.process == self.process,
                                               c.game_id == game_id, c.seat_id == seat_id))
            else:
                values = {"process": self.process, "game_id": game_id, "seat_id": seat_id,
                          "pages": pages, "seen_at": utcnow()}
                dialect = postgresql if s.get_bind().dialect.name == "postgresql" else sqlite
                insert = dialect.insert(_TABLE).values(**values)
                s.execute(insert.on_conflict_do_update(
                    index_elements=["process", "game_id", "seat_id"],
                    set_={"pages": pages, "seen_at": values["seen_at"]}))
            s.commit()

    def _start_renewing(self) -> None:
        with self._lock:
            if self._renewer is not None and self._renewer.is_alive():
                return
            self._renewer = threading.Thread(target=self._renew_forever, daemon=True,
                                             name="titanpost-live-presence")
            self._renewer.start()

    def _renew_forever(self) -> None:
        stop = threading.Event()
        while not stop.wait(RENEW_EVERY):
            try:
                self.renew()
            except Exception:  # the database away for a moment: the next round tries again
                log.warning("live pages: renewing this process's open pages failed",
                            exc_info=True)

    def renew(self) -> None:
        """Mark this process's open pages as still open (one UPDATE for them all)."""
        with self._lock:
            if not self._pages:
                return
        with self.service.session(write=True) as s:
            s.execute(update(_TABLE).where(_TABLE.c.process == self.process)
                      .values(seen_at=utcnow()))
            s.commit()


def watched_among(s: Session, pairs: Iterable[Watched]) -> set[Watched]:
    """Those of ``pairs`` (game id, seat id) whose game is open on a page of that seat now."""
    wanted = set(pairs)
    if not wanted:
        return set()
    c = _TABLE.c
    games = {game_id for game_id, _ in wanted}
    rows = s.execute(select(c.game_id, c.seat_id).where(
        c.game_id.in_(games), c.pages > 0, c.seen_at > utcnow() - STALE_AFTER,
        or_(*(and_(c.game_id == game_id, c.seat_id == seat_id) for game_id, seat_id in wanted))
        if len(wanted) <= 50 else tuple_(c.game_id, c.seat_id).in_(wanted),
    )).all()
    return {(int(game_id), int(seat_id)) for game_id, seat_id in rows}


def is_watched(s: Session, game_id: int, seat_id: int) -> bool:
    return (game_id, seat_id) in watched_among(s, [(game_id, seat_id)])


def watched_rows(s: Session, rows: Iterable[OutboxMail]) -> set[int]:
    """The ids of those outbox ``rows`` that are the game's news for a seat whose game is open
    on a page now."""
    wanted = [row for row in rows if row.game_id is not None and row.seat_id is not None
              and while_watched(row.kind) is not None]
    watched = watched_among(s, [(int(row.game_id or 0), int(row.seat_id or 0))
                                for row in wanted])
    return {int(row.id or 0) for row in wanted if (row.game_id, row.seat_id) in watched}
