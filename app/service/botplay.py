"""The worker's side of a normal or strong computer seat: the decision it owes read (in a read
transaction), and the move it chose, once computed outside any transaction, appended with the
usual optimistic key: a decision answered, taken back or rolled back meanwhile drops the turn.

The loop that claims the turns and runs the search between the two is
:mod:`app.features.clock.botturns`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import update
from sqlmodel import Session, select

from app.core.models import ACTIVE, COMPUTER, BotTurn, Game, Takeback, table_of, utcnow

from .records import GameEvent, Loaded
from .writing import PLAYED, LogWriting

STALE: Final = "stale"
"""A bot turn whose decision was no longer the seat's when the worker came to it."""
LOST: Final = "lost"
"""A bot turn another worker settled first (its lease had run out meanwhile)."""
PAUSED: Final = "paused"
"""A bot turn of a game paused since, or where a takeback was asked since: given back, played
after the resume or once the takeback is answered."""
PENDING_TAKEBACK: Final = "pending"
"""A takeback request's status while the other players have not all answered
(app/features/takeback/takebacks.py): the computer does not move meanwhile, which would lapse it."""

_BOT_TURNS = table_of(BotTurn)


@dataclass(frozen=True)
class BotTask:
    """A claimed bot turn, read: what the search needs (its own copy of the state)."""

    turn_id: int
    uid: str
    seat: int
    decision_seq: int
    level: str
    simultaneous: bool
    rules: Any
    state: Any

    def choose(self) -> str:
        """The computer's move (up to a second at strong level): run outside any transaction.
        A simultaneous decision names the seat; a sequential one is the seat to act's."""
        seat = self.seat if self.simultaneous else None
        return str(self.rules.bot_move(self.state, seat, self.level))


class BotPlay(LogWriting):
    """Reading and settling the worker's bot turns (see the module's docstring)."""

    def bot_task(self, turn_id: int, worker: str) -> BotTask | str:
        """The claimed turn ``turn_id`` ready to be searched, or why not (:data:`STALE`,
        :data:`LOST`, :data:`PAUSED`), the row then settled or given back."""
        with self.session() as s:
            row = s.get(BotTurn, turn_id)
            if row is None or row.done_at is not None or row.claimed_by != worker:
                return LOST
            game = s.get(Game, row.game_id)
            assert game is not None
            loaded = self._load(s, game.uid, fresh_seats=True)
            why = _not_due(loaded, row.decision_seq, row.seat)
            if why is None:
                rules = loaded.rules
                return BotTask(turn_id, game.uid, row.seat, row.decision_seq,
                               loaded.seat(row.seat).bot_level,
                               rules.simultaneous(loaded.state), rules,
                               rules.load(rules.dump(loaded.state)))
        self._drop_turn(turn_id, worker, why)
        return why

    def play_bot_turn(self, task: BotTask, choice: str, worker: str) -> str:
        """Append ``choice``, the computer's answer to ``task``, if the decision is still the
        seat's and the turn still this worker's: :data:`PLAYED`, else why not. The easy
        computer seats after it answer at once; a further normal or strong one owes a row."""
        with self.session(write=True) as s:
            s.exec(select(Game.id).where(Game.uid == task.uid).with_for_update()).all()
            loaded = self._load(s, task.uid, fresh_seats=True)
            why = _not_due(loaded, task.decision_seq, task.seat)
            if why is None and _takeback_pending(s, loaded.game_id):
                why = PAUSED
            if why is not None:
                s.rollback()
                self._drop_turn(task.turn_id, worker, why)
                return why
            if not _settle_turn(s, task.turn_id, worker, PLAYED, utcnow()):
                s.rollback()
                return LOST
            before = loaded.seq
            with self._race_lost(s, task.uid, task.seat):
                self._answer(s, loaded, task, choice)
                self._play_bots(s, loaded)
                self._settle(s, loaded)
                kind = "moved" if loaded.seq > before else "sealed"
                self._emit(s, GameEvent(kind, loaded.game, loaded.seats, before, loaded.seq,
                                        loaded, actor=COMPUTER, position=task.seat,
                                        detail={"decision_seq": task.decision_seq,
                                                "level": task.level}))
                s.commit()
            self._remember(loaded)
            return PLAYED

    def _answer(self, s: Session, loaded: Loaded, task: BotTask, choice: str) -> None:
        if task.simultaneous:
            self._seal(s, loaded, task.seat, choice, COMPUTER)
        else:
            self._append(s, loaded, task.seat, choice, loaded.rules.apply(loaded.state, choice),
                         actor=COMPUTER)

    def _drop_turn(self, turn_id: int, worker: str, why: str) -> None:
        """Settle a turn that is no longer due, or give back one whose game is paused."""
        with self.session(write=True) as s:
            if why == PAUSED:
                s.execute(update(_BOT_TURNS).where(
                    _BOT_TURNS.c.id == turn_id, _BOT_TURNS.c.claimed_by == worker,
                    _BOT_TURNS.c.done_at.is_(None)).values(claimed_by=None, claimed_at=None))
            elif why == STALE:
                _settle_turn(s, turn_id, worker, STALE, utcnow())
            s.commit()

    def give_back_turn(self, turn_id: int, worker: str) -> None:
        """Give a claimed turn back at once (its move lost a race: look at it again)."""
        self._drop_turn(turn_id, worker, PAUSED)


def _not_due(loaded: Loaded, decision_seq: int, position: int) -> str | None:
    """Why the decision after ``decision_seq`` is no longer the computer seat ``position``'s
    to answer (None: it still is)."""
    game = loaded.game
    if game.status != ACTIVE or loaded.state is None or loaded.decision_seq != decision_seq:
        return STALE
    if position not in loaded.to_act() or not loaded.seat(position).is_bot:
        return STALE
    if game.paused_at is not None:
        return PAUSED
    return None


def _takeback_pending(s: Session, game_id: int) -> bool:
    pending = select(Takeback.id).where(Takeback.game_id == game_id,
                                        Takeback.status == PENDING_TAKEBACK)
    return s.exec(pending).first() is not None


def _settle_turn(s: Session, turn_id: int, worker: str, result: str, at: datetime) -> bool:
    """Mark the turn done, if it is still open and this worker's; whether it was."""
    c = _BOT_TURNS.c
    done = s.execute(update(_BOT_TURNS).where(
        c.id == turn_id, c.claimed_by == worker, c.done_at.is_(None)).values(
        done_at=at, result=result))
    return bool(getattr(done, "rowcount", 0) == 1)
