"""How a command writes a game's log: one entry appended to the hash chain, the computer seats
answering their decisions, a sealed answer and its reveal, the game settling, a pause, a resume,
a seat handed over; and the race of two writers lost as "the game moved on"."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Final

from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from app.core.i18n import N_
from app.core.logchain import move_hash
from app.core.models import (
    ACTIVE,
    COMPUTER,
    FINISHED,
    HANDOVER,
    MOVE,
    PAUSE,
    PLAYER,
    REACTIONS,
    RESUME,
    STATE_KINDS,
    BotTurn,
    Move,
    SealedOrder,
    Snapshot,
    table_of,
    utcnow,
)
from app.core.statements import Prepared
from app.games.base import ASK, EASY, MoveRejected

from .base import ServiceBase
from .errors import GameMovedOn, IllegalMove, NotPlaying
from .records import Entry, GameEvent, Loaded

MAX_BOT_MOVES = 2000
PLAYED: Final = "played"
"""A bot turn's result once the worker has played it."""

_MOVES = table_of(Move)
_INSERT_MOVE = Prepared(insert(_MOVES), Entry._fields)
"""A log entry's INSERT, prepared once (app/core/statements.py): through the session's flush, the
ORM would first track the entry and then work out what to write, and even a Core statement pays
SQLAlchemy's execution machinery, which costs more than the INSERT."""
_INSERT_SNAPSHOT = Prepared(insert(table_of(Snapshot)), ("game_id", "seq", "state"))

MOVED_ON_RACED: Final = N_(
    "the game moved on: another submission for this decision arrived first; here is the current "
    "state")


class LogWriting(ServiceBase):
    """The steps of the commands that append to a game's log (see the module's docstring)."""

    @contextmanager
    def _race_lost(self, s: Session, uid: str, position: int | None) -> Iterator[None]:
        """Turn the move log's primary-key violation into "the game moved on"."""
        try:
            yield
        except IntegrityError as exc:
            if not _is_move_key_clash(exc):
                raise
            s.rollback()
            with self.session() as fresh:
                loaded = self._load(fresh, uid)
                raise GameMovedOn(
                    "the game moved on: another submission for this decision arrived first; "
                    "here is the current state", words=(MOVED_ON_RACED, {}),
                    **self._state_body(loaded, position),
                ) from None

    def _append(
        self,
        s: Session,
        loaded: Loaded,
        position: int | None,
        norm: str,
        outcomes: list[list[str]],
        *,
        kind: str = MOVE,
        actor: str = PLAYER,
    ) -> None:
        """Append one log entry: a move the engine has just applied, or a note (``kind``)."""
        seq = loaded.seq + 1
        now = utcnow()
        digest = move_hash(loaded.head_hash, seq, position, norm, outcomes, now, kind, actor)
        entry = Entry(game_id=loaded.game_id, seq=seq, seat=position, kind=kind, actor=actor,
                      input=norm, outcomes=outcomes, created_at=now,
                      prev_hash=loaded.head_hash, hash=digest)
        # (a clash on (game, seq) raises IntegrityError here: see _race_lost)
        _INSERT_MOVE.execute(s.connection(), entry._asdict())
        loaded.appended.append(entry)
        loaded.seq = seq
        loaded.head_hash = digest
        if kind in STATE_KINDS:
            loaded.decision_seq = seq
        every = max(1, self.settings.snapshot_every)
        if seq % every == 0:
            _INSERT_SNAPSHOT.execute(s.connection(), {"game_id": loaded.game_id, "seq": seq,
                                                      "state": loaded.rules.dump(loaded.state)})

    def _play_bots(self, s: Session, loaded: Loaded) -> None:
        """Answer every decision that is answered without asking anyone: a window that its seat's
        standing choice answers (at once, the same way whatever the hand holds), and every decision
        of a computer seat. An easy seat, and any computer seat's window, is answered at once, here
        (so that how long a window stays open tells nothing of the computer's hand); a normal or
        strong seat's other decisions owe a :class:`BotTurn` row, written here and played by the
        worker (:mod:`app.features.clock.botturns`), never inside this command."""
        bots = {seat.position: seat.bot_level for seat in loaded.seats if seat.is_bot}
        rules = loaded.rules
        for _ in range(MAX_BOT_MOVES):
            to_act = loaded.to_act()
            if to_act and rules.simultaneous(loaded.state):
                mine = [p for p in to_act if p in bots]
                easy = [p for p in mine if bots[p] == EASY]
                if not easy:
                    self._owe_bot_turns(s, loaded, {p: bots[p] for p in mine})
                    return
                for position in easy:
                    self._seal(s, loaded, position, rules.bot_move(loaded.state, position),
                               COMPUTER)
                continue
            standing = self._standing_answer(loaded, to_act)
            if standing is not None:
                self._append(s, loaded, to_act[0], standing,
                             rules.apply(loaded.state, standing), actor=PLAYER)
                continue
            if not to_act or not set(to_act) <= set(bots):
                return
            seat = to_act[0]
            window = rules.is_window(rules.pending(loaded.state) or {})
            if bots[seat] != EASY and not window:
                self._owe_bot_turns(s, loaded, {seat: bots[seat]})
                return
            choice = (rules.bot_move(loaded.state, seat, EASY) if window
                      else rules.bot_move(loaded.state))
            self._append(s, loaded, seat, choice, rules.apply(loaded.state, choice),
                         actor=COMPUTER)

    @staticmethod
    def _standing_answer(loaded: Loaded, to_act: list[int]) -> str | None:
        """What the standing choice of the one person owing the pending window answers (its
        private setting ``reactions``: :meth:`Ruleset.standing_answer`), if anything."""
        if len(to_act) != 1:
            return None
        seat = loaded.seat(to_act[0])
        if seat.is_bot:
            return None
        choice = str((seat.notify or {}).get(REACTIONS, ASK))
        return loaded.rules.standing_answer(loaded.state, to_act[0], choice)

    @staticmethod
    def _owe_bot_turns(s: Session, loaded: Loaded, levels: dict[int, str]) -> None:
        """Write the worker's rows for the computer seats ``levels`` owing the pending decision
        (a row already open for it stands; one settled without a move is opened again: the
        seat went to a player and came back to the computer meanwhile)."""
        for position, level in levels.items():
            row = s.exec(select(BotTurn).where(
                BotTurn.game_id == loaded.game_id, BotTurn.decision_seq == loaded.decision_seq,
                BotTurn.seat == position)).first()
            if row is None:
                s.add(BotTurn(game_id=loaded.game_id, decision_seq=loaded.decision_seq,
                              seat=position, level=level))
            elif row.done_at is not None and row.result != PLAYED:
                row.done_at, row.result, row.claimed_by, row.claimed_at = None, None, None, None
                row.attempts, row.level = 0, level
                s.add(row)

    def _seal(self, s: Session, loaded: Loaded, position: int, text: str, actor: str) -> str:
        """Seal ``text`` as the seat's answer; once every seat's is in, apply them all as one
        log entry (the reveal), in seat order."""
        rules = loaded.rules
        try:
            norm = rules.own_input(loaded.state, position, text)
        except MoveRejected as exc:
            raise IllegalMove(exc.message, words=exc.words,
                              legal=rules.options(loaded.state, position),
                              index=exc.index) from None
        s.add(SealedOrder(game_id=loaded.game_id, decision_seq=loaded.decision_seq,
                          seat=position, input=norm, actor=actor))
        s.flush()
        loaded.sealed[position] = norm
        if not loaded.to_act():
            reveal = "; ".join(loaded.sealed[p] for p in sorted(loaded.sealed))
            try:
                outcomes = rules.apply(loaded.state, reveal)
            except MoveRejected as exc:  # every part was checked alone: a bug if they clash
                raise IllegalMove(exc.message, legal=[], index=exc.index) from None
            self._append(s, loaded, None, reveal, outcomes, actor=actor)
            loaded.sealed = {}
        return norm

    def _settle(self, s: Session, loaded: Loaded) -> None:
        winners = loaded.rules.winners(loaded.state)
        if winners is not None and loaded.game.status == ACTIVE:
            loaded.game.status = FINISHED
            loaded.game.finished_at = utcnow()
            loaded.game.winner = ",".join(winners)
            s.add(loaded.game)

    def _owned_active(self, s: Session, uid: str, creator_token: str | None) -> Loaded:
        """The running game ``uid`` with fresh seats, checked against the creator token
        (None: an admin acting)."""
        if creator_token is not None:
            self._creator_game(s, uid, creator_token)
        loaded = self._load(s, uid, fresh_seats=True)
        self._check_active(loaded)
        return loaded

    def _check_active(self, loaded: Loaded) -> None:
        if loaded.game.status != ACTIVE:
            raise NotPlaying(f"game {loaded.game.uid} is {loaded.game.status}")

    def _pause_in(self, s: Session, loaded: Loaded, reason: str, *, actor: str,
                  at: datetime, position: int | None = None) -> None:
        game = loaded.game
        before = loaded.seq
        game.paused_at = at
        game.pause_reason = reason[:200]
        s.add(game)
        self._append(s, loaded, position, f"{PAUSE} {reason}"[:200], [], kind=PAUSE, actor=actor)
        self._emit(s, GameEvent("paused", game, loaded.seats, before, loaded.seq, loaded,
                                at=at, actor=actor, position=position))

    def _resume_in(self, s: Session, loaded: Loaded, *, actor: str, position: int | None,
                   at: datetime) -> None:
        game = loaded.game
        assert game.paused_at is not None
        paused_for = max(0.0, (_aware(at) - _aware(game.paused_at)).total_seconds())
        before = loaded.seq
        game.paused_at = None
        game.pause_reason = None
        s.add(game)
        self._append(s, loaded, position, RESUME, [], kind=RESUME, actor=actor)
        self._play_bots(s, loaded)  # a seat given to the computer while the game was paused
        self._settle(s, loaded)
        self._emit(s, GameEvent("resumed", game, loaded.seats, before, loaded.seq, loaded,
                                at=at, actor=actor, position=position,
                                detail={"paused_seconds": int(paused_for)}))

    def _hand_over_in(self, s: Session, loaded: Loaded, position: int, to: str, *,
                      actor: str, level: str | None = None) -> None:
        """The computer takes the seat (``to`` is "computer", or "invite" when the owner is to
        invite someone new, the computer playing meanwhile), at ``level`` (None: the seat's
        own, easy unless chosen); a note in the log says so."""
        seat = loaded.seat(position)
        seat.is_bot = True
        if level is not None:
            seat.bot_level = level
        s.add(seat)
        self._append(s, loaded, position, f"{HANDOVER} {to}", [], kind=HANDOVER, actor=actor)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _is_move_key_clash(exc: IntegrityError) -> bool:
    """Whether ``exc`` is two submissions taking the same (game, seq) of the move log."""
    diag = getattr(exc.orig, "diag", None)
    constraint = getattr(diag, "constraint_name", None)
    if constraint is not None:
        return constraint in ("pk_moves", "pk_snapshots")
    text = str(exc.orig)
    return "moves.game_id, moves.seq" in text or "snapshots.game_id, snapshots.seq" in text

