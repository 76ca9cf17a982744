"""A seat's answers: a move submitted (or sealed, for a simultaneous decision), a retry told it was
applied, a stale one told the game moved on; a resignation; and the clock acting for a seat
whose time ran out."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress
from datetime import datetime
from functools import cached_property
from typing import Any, Final

from sqlmodel import Session, col, select

from app.core.i18n import N_
from app.core.models import (
    ABANDONED,
    ACTIVE,
    CLOCK,
    FINISHED,
    MOVE,
    OPEN,
    PLAYER,
    RESIGN,
    STATE_KINDS,
    TIMEOUT,
    Game,
    Move,
    SealedOrder,
    utcnow,
)
from app.features.clock.arithmetic import ClockSettings
from app.features.clock.pausewords import pause_reason_timeout
from app.games.base import NORMAL, MoveRejected, Ruleset

from .errors import MAX_INPUT, BadRequest, Forbidden, GameMovedOn, IllegalMove, NotPlaying, Words
from .records import GameEvent, Loaded
from .refusals import RefusalLimit
from .writing import MAX_BOT_MOVES, LogWriting

MOVED_ON_REVEALED: Final = N_(
    "the game moved on: the answers to that decision have been revealed; here is the current "
    "state")

MOVED_ON_LATER: Final = N_(
    "the game moved on: you answered the decision after move {expected}, but {moves} moves have "
    "been made; here is the current state")

TAKES_NO_MOVES: Final = {OPEN: N_("the game has not started yet: it takes no moves"),
                         FINISHED: N_("the game is over: it takes no more moves"),
                         ABANDONED: N_("the game was abandoned: it takes no more moves")}

NO_MOVES_NOW: Final = N_("the game takes no moves now")
NOT_AN_INPUT: Final = N_("'{input}' is not a move this game knows: choose one of the options")

EMPTY_INPUT: Final = N_("the input is empty: choose one of the options")
LONG_INPUT: Final = N_("the input is longer than {limit} characters: choose one of the options")

COMPUTER_PLAYS_SEAT: Final = N_(
    "the computer plays this seat now: its player no longer moves for it")

SEALED: Final = N_(
    "you have already answered this decision ({answer}): a sealed answer cannot be changed")


class MoveCommands(LogWriting):
    """Submitting, resigning and timing out."""

    def submit(self, uid: str, position: int, expected_seq: int, text: str) -> dict[str, Any]:
        """Apply a seat's submission answering the decision after ``expected_seq`` moves."""
        _check_input(text)
        with self.session(write=True) as s:
            return self._submit_in(s, self._load(s, uid, for_move=True), position,
                                   expected_seq, text)

    def submit_as(self, uid: str, token: str, expected_seq: int, text: str) -> dict[str, Any]:
        """:meth:`submit` for the seat whose API token is ``token``, the token checked in the
        move's own transaction, by the statement that reads the game (one transaction and
        one statement fewer than looking the token up first: see bench/api.py). Refused as
        the API refuses a token (401, 404, 403), before the input is looked at."""
        with self.session(write=True) as s:
            loaded, position = self._load_as(s, uid, token)
            _check_input(text)
            return self._submit_in(s, loaded, position, expected_seq, text)

    def _submit_in(self, s: Session, loaded: Loaded, position: int, expected_seq: int,
                   text: str) -> dict[str, Any]:
        """:meth:`submit` in the command's session, its game read; a seat over its limit of
        refused submissions is refused before its input is read, and each refusal counts."""
        limit = self.refusal_limit
        limit.check(loaded.game.uid, position)
        try:
            return self._submit_checked(s, loaded, position, expected_seq, text)
        except (IllegalMove, Forbidden):
            limit.count(loaded.game.uid, position)
            raise

    @cached_property
    def refusal_limit(self) -> RefusalLimit:
        return RefusalLimit(self.settings.rate_limit_refusals, self.settings.rate_limit_storage)

    def _submit_checked(self, s: Session, loaded: Loaded, position: int, expected_seq: int,
                        text: str) -> dict[str, Any]:
        uid = loaded.game.uid
        rules = loaded.rules
        try:
            norm = rules.normalise(text)
        except MoveRejected as exc:  # (the engine's reason is English: said as ours)
            raise IllegalMove(exc.message, words=exc.words or (NOT_AN_INPUT, {"input": text}),
                              legal=self._legal_for(loaded, position)) from None
        current = loaded.decision_seq <= expected_seq <= loaded.seq
        if not current and loaded.game.status in (ACTIVE, FINISHED):
            return self._stale(s, loaded, position, expected_seq, norm, text)
        if loaded.game.status != ACTIVE:
            raise NotPlaying(
                f"game {uid} is {loaded.game.status}: it takes no moves",
                words=(TAKES_NO_MOVES.get(loaded.game.status, NO_MOVES_NOW), {}),
                **self._state_body(loaded, position),
            )
        if position in loaded.sealed:  # a retry, or a change of a final secret answer
            return self._resealed(loaded, position, text)
        to_act = loaded.to_act()
        if position not in to_act:
            raise Forbidden(
                self._not_yours(loaded, to_act), words=self._not_yours_words(loaded, to_act),
                **self._state_body(loaded, position),
            )
        if loaded.seat(position).is_bot:  # resigned, handed over or given away
            raise Forbidden(f"the computer plays seat {position + 1} now: its player no longer "
                            "moves for it", words=(COMPUTER_PLAYS_SEAT, {}),
                            **self._state_body(loaded, position))
        if rules.simultaneous(loaded.state):
            return self._submit_sealed(s, uid, position, expected_seq, text, norm)
        before = loaded.seq
        with self._race_lost(s, uid, position):
            self._lift_pause_for(s, loaded, position)
            try:
                outcomes, stop = rules.apply_chain(loaded.state, norm, position)
            except MoveRejected as exc:
                raise IllegalMove(exc.message, words=exc.words, legal=exc.legal,
                                  index=exc.index) from None
            self._append(s, loaded, position, norm if stop is None else stop.played, outcomes)
            self._play_bots(s, loaded)
            self._settle(s, loaded)
            self._emit(s, GameEvent("moved", loaded.game, loaded.seats, before,
                                    loaded.seq, loaded, position=position))
            s.commit()
        self._remember(loaded, done=True)
        answer = {"applied": True, **self._state_body(loaded, position)}
        if stop is not None:
            answer["unplayed"] = stop.to_json()
        return answer

    def _submit_sealed(self, s: Session, uid: str, position: int, expected_seq: int,
                       text: str, norm: str) -> dict[str, Any]:
        """Seal a seat's secret answer to a simultaneous decision; the last one reveals all.

        The game row is locked first, so that of two last answers arriving together one sees
        the other's sealed row and reveals (on SQLite the write transaction already holds the
        database's lock)."""
        s.exec(select(Game.id).where(Game.uid == uid).with_for_update()).all()
        loaded = self._load(s, uid)
        if expected_seq < loaded.decision_seq:  # revealed meanwhile
            return self._stale(s, loaded, position, expected_seq, norm, text)
        if position in loaded.sealed:
            return self._resealed(loaded, position, text)
        before = loaded.seq
        with self._race_lost(s, uid, position):
            self._lift_pause_for(s, loaded, position)
            self._seal(s, loaded, position, text, PLAYER)
            self._play_bots(s, loaded)
            self._settle(s, loaded)
            kind = "moved" if loaded.seq > before else "sealed"
            self._emit(s, GameEvent(kind, loaded.game, loaded.seats, before, loaded.seq, loaded,
                                    position=position,
                                    detail={"decision_seq": loaded.decision_seq}))
            s.commit()
        self._remember(loaded, done=True)
        return {"applied": True, "sealed": True, **self._state_body(loaded, position)}

    def _resealed(self, loaded: Loaded, position: int, text: str) -> dict[str, Any]:
        """A seat answering a simultaneous decision it has already answered (still sealed):
        the same answer again (a retry) is reported as applied; another one is refused, a
        sealed answer being final."""
        given = loaded.sealed[position]
        with suppress(MoveRejected):
            if loaded.rules.own_input(loaded.state, position, text) == given:
                return {"applied": True, "sealed": True, "already_applied": True,
                        **self._state_body(loaded, position)}
        raise Forbidden(f"you have already answered this decision ({given}): a sealed "
                        "answer cannot be changed", words=(SEALED, {"answer": given}),
                        **self._state_body(loaded, position))

    def _lift_pause_for(self, s: Session, loaded: Loaded, position: int) -> None:
        """A paused game takes no moves, except that the player whose missed deadline paused
        it ends that pause by answering: the game then resumes (a note in the log)."""
        game = loaded.game
        if game.paused_at is None:
            return
        if game.pause_reason != pause_reason_timeout(position):
            raise NotPlaying(
                f"game {game.uid} is paused ({game.pause_reason or 'by its owner'}): it takes "
                "no moves until it is resumed",
                **self._state_body(loaded, position),
            )
        self._resume_in(s, loaded, actor=PLAYER, position=position, at=utcnow())

    def _stale(
        self, s: Session, loaded: Loaded, position: int, expected: int, norm: str, text: str
    ) -> dict[str, Any]:
        """A submission answering the decision pending after entry ``expected``, which is no
        longer pending: the answer given to it, sent again (a retry), is reported as applied
        (to a simultaneous decision: the answer the seat sealed, which the reveal played);
        anything else is told that the game moved on."""
        answer = self._answer_after(s, loaded, expected)
        if answer is not None and answer.seat is None and answer.kind == MOVE:  # a reveal
            if not self._sealed_the_same(s, loaded, position, expected, text):
                raise GameMovedOn(
                    "the game moved on: the answers to that decision have been revealed; here "
                    "is the current state", words=(MOVED_ON_REVEALED, {}),
                    **self._state_body(loaded, position))
        elif answer is None or answer.seat != position or not _began_with(norm, answer.input):
            raise GameMovedOn(
                f"the game moved on: you answered the decision after move {expected}, "
                f"but {loaded.seq} moves have been made; here is the current state",
                words=(MOVED_ON_LATER, {"expected": expected, "moves": loaded.seq}),
                **self._state_body(loaded, position),
            )
        return {"applied": True, "already_applied": True, "applied_seq": answer.seq,
                **self._state_body(loaded, position)}

    @staticmethod
    def _answer_after(s: Session, loaded: Loaded, expected: int) -> Move | None:
        """The log entry that answered the decision pending after entry ``expected``."""
        if not 0 <= expected < loaded.seq:
            return None
        return s.exec(
            select(Move)
            .where(Move.game_id == loaded.game_id, Move.seq > expected,
                   col(Move.kind).in_(STATE_KINDS))
            .order_by(col(Move.seq))
            .limit(1)
        ).first()

    def _sealed_the_same(self, s: Session, loaded: Loaded, position: int, expected: int,
                         text: str) -> bool:
        """Whether ``text`` is the answer seat ``position`` sealed to the simultaneous decision
        pending after entry ``expected`` (the same once put in the seat's own notation, as the
        sealing did, in the state that decision was asked in)."""
        opened = self._decision_seq(s, loaded.game_id, expected, [])
        sealed = s.get(SealedOrder, (loaded.game_id, opened, position))
        if sealed is None:
            return False
        state, _ = self._rebuild(s, loaded.game, loaded.rules, opened)
        try:
            return loaded.rules.own_input(state, position, text) == sealed.input
        except MoveRejected:
            return False

    @staticmethod
    def _not_yours_words(loaded: Loaded, to_act: list[int]) -> Words:
        if not to_act:
            return N_("no decision is pending"), {}
        names = ", ".join(loaded.seat(p).player_name for p in to_act)
        return N_("it is not your decision: waiting for {players}"), {"players": names}

    def _not_yours(self, loaded: Loaded, to_act: list[int]) -> str:
        if not to_act:
            return "no decision is pending"
        names = ", ".join(f"seat {p + 1} ({loaded.seat(p).player_name})" for p in to_act)
        return f"it is not your decision: waiting for {names}"

    def resign(self, uid: str, position: int) -> dict[str, Any]:
        """The player leaves; the computer plays their seat from now on."""
        with self.session(write=True) as s:
            loaded = self._load(s, uid, fresh_seats=True)
            if loaded.game.status != ACTIVE:
                raise NotPlaying(f"game {uid} is {loaded.game.status}")
            seat = loaded.seat(position)
            if seat.resigned_at is not None:
                raise BadRequest(f"seat {position + 1} has already resigned")
            seat.resigned_at = utcnow()
            seat.is_bot = True
            s.add(seat)
            before = loaded.seq
            with self._race_lost(s, uid, position):
                self._append(s, loaded, position, RESIGN, [], kind=RESIGN, actor=PLAYER)
                if loaded.game.paused_at is None:  # else the computer plays on resume
                    self._play_bots(s, loaded)
                self._settle(s, loaded)
                self._emit(s, GameEvent("resigned", loaded.game, loaded.seats, before,
                                        loaded.seq, loaded, position=position))
                s.commit()
            return self._summary(loaded)

    def act_for(self, uid: str, position: int, decision_seq: int, *, mode: str, actor: str,
                at: datetime | None = None) -> dict[str, Any]:
        """Act for a seat whose decision (opened after entry ``decision_seq``) ran out of time,
        or whose player is away with the computer playing for them. ``mode``: ``bot`` (the
        computer plays the seat's turn), ``pass`` (pass what can be passed, the computer
        choosing only what cannot), or ``pause`` (the game pauses).

        Does nothing, returning ``{"acted": False}``, when the decision was answered meanwhile
        (or the game ended or paused, then ``"paused"`` is true): this is what keeps an
        answered decision from timing out.
        A missed deadline (``actor`` TIMEOUT) counts against the seat; after the game's
        ``max_missed`` the seat is handed over (``after_missed``).
        """
        at = at or utcnow()
        planned = self._plan_turn(uid, position, decision_seq) if mode == "bot" else None
        with self.session(write=True) as s:
            loaded = self._load(s, uid, fresh_seats=True)
            if not _owes(loaded, position, decision_seq):
                return {"acted": False, "seq": loaded.seq,
                        "paused": loaded.game.paused_at is not None}
            if planned is not None and planned[0] != loaded.seq:
                planned = None  # (the log grew meanwhile: searched again below)
            before = loaded.seq
            with self._race_lost(s, uid, position):
                handover = self._count_missed(s, loaded, position) if actor == TIMEOUT else None
                if mode == "pause" and handover is None:
                    self._pause_in(s, loaded, pause_reason_timeout(position), actor=CLOCK,
                                   at=at, position=position)
                    inputs: list[str] = []
                else:
                    # a seat handed over is not waited for: the computer plays it at once
                    mode = "bot" if mode == "pause" else mode
                    inputs = self._play_for(s, loaded, position, mode, actor,
                                            planned[1] if planned is not None else [])
                if handover is not None:
                    self._hand_over_in(s, loaded, position, handover, actor=CLOCK,
                                       level=NORMAL)
                self._play_bots(s, loaded)
                self._settle(s, loaded)
                self._emit(s, GameEvent(
                    "timed_out", loaded.game, loaded.seats, before, loaded.seq, loaded, at=at,
                    actor=actor, position=position,
                    detail={"mode": mode, "inputs": inputs, "decision_seq": decision_seq,
                            "handover": handover,
                            "level": NORMAL if mode == "bot" else None}))
                s.commit()
            self._remember(loaded)
            self._seat_rows.pop(loaded.game_id, None)  # missed deadlines, bank, computer seat
            return {"acted": True, "mode": mode, "inputs": inputs, "handover": handover,
                    "seq": loaded.seq}

    def _plan_turn(self, uid: str, position: int,
                   decision_seq: int) -> tuple[int, list[str]] | None:
        """The computer's inputs for the seat's turn (the log's length they follow, and the
        inputs), searched on a copy of the game read in a read transaction: a normal-level
        search takes up to 0.15 s a decision, which must not be spent holding the database's
        write lock (on SQLite every other move waits for it). None when the seat owes nothing.
        The engine being deterministic, the inputs play out the same in the write transaction
        when the log has not grown meanwhile."""
        with self.session() as s:
            loaded = self._load(s, uid)
            if not _owes(loaded, position, decision_seq):
                return None
            seq, rules = loaded.seq, loaded.rules
            loaded.state = rules.copy(loaded.state)
            if rules.simultaneous(loaded.state):  # (a secret answer, sealed by the caller)
                return seq, [_for_seat(rules, loaded.state, "bot", position)]
            return seq, [choice for choice, _ in self._turn_for(loaded, position, "bot")]

    def _turn_for(self, loaded: Loaded, position: int, mode: str,
                  planned: list[str] | None = None) -> Iterator[tuple[str, list[list[str]]]]:
        """Play the seat's pending decision in ``loaded``'s state, and the rest of the same
        turn if it is one: each input (``planned`` first, while there are any) and its
        outcomes, the state applied."""
        rules = loaded.rules
        planned = list(planned or [])
        first = rules.pending(loaded.state) or {}
        for played in range(MAX_BOT_MOVES):
            pending = rules.pending(loaded.state) or {}
            if loaded.to_act() != [position] or (
                played and not rules.same_turn(first, pending)
            ):
                break
            choice = planned.pop(0) if planned else _for_seat(rules, loaded.state, mode, None)
            yield choice, rules.apply(loaded.state, choice)

    def _play_for(self, s: Session, loaded: Loaded, position: int, mode: str,
                  actor: str, planned: list[str]) -> list[str]:
        """Answer the seat's pending decision, and the rest of the same turn if it is one
        (``planned``: the inputs worked out beforehand, see :meth:`_plan_turn`)."""
        if loaded.rules.simultaneous(loaded.state):
            choice = (planned[0] if planned
                      else _for_seat(loaded.rules, loaded.state, mode, position))
            return [self._seal(s, loaded, position, choice, actor)]
        inputs: list[str] = []
        for choice, outcomes in self._turn_for(loaded, position, mode, planned):
            self._append(s, loaded, position, choice, outcomes, actor=actor)
            inputs.append(choice)
        return inputs

    def _count_missed(self, s: Session, loaded: Loaded, position: int) -> str | None:
        """Count a missed deadline; the handover due after too many ("computer" or "invite")."""
        seat = loaded.seat(position)
        seat.missed_deadlines += 1
        s.add(seat)
        clock = ClockSettings.of(loaded.game.settings)
        if clock.max_missed and seat.missed_deadlines >= clock.max_missed and not seat.is_bot:
            return clock.after_missed
        return None


def _owes(loaded: Loaded, position: int, decision_seq: int) -> bool:
    """Whether seat ``position`` still owes the running game's decision opened after entry
    ``decision_seq`` (else the clock has nothing to do)."""
    game = loaded.game
    return (game.status == ACTIVE and game.paused_at is None and loaded.state is not None
            and loaded.decision_seq == decision_seq and position in loaded.to_act())


def _for_seat(rules: Ruleset, state: Any, mode: str, seat: int | None) -> str:
    """The input the clock makes for a seat: in ``bot`` mode (a missed deadline, or a
    player away with the computer playing) the computer's choice at normal level (the
    clock runs in the worker, never in a web request); else the ruleset's timeout move."""
    if mode == "bot":
        return rules.bot_move(state, seat, NORMAL)
    return rules.timeout_move(state, mode, seat)


def _check_input(text: Any) -> None:
    """Refuse an empty submission or one longer than :data:`MAX_INPUT` characters."""
    refusal = input_refusal(text)
    if refusal is not None:
        raise refusal


def input_refusal(text: Any, **extra: Any) -> BadRequest | None:
    """The refusal of an empty or overlong input (``extra``: more of the answer), else None."""
    if not isinstance(text, str) or not text.strip():
        return BadRequest("the input is empty", words=(EMPTY_INPUT, {}), **extra)
    if len(text) > MAX_INPUT:
        return BadRequest(f"the input is longer than {MAX_INPUT} characters",
                          words=(LONG_INPUT, {"limit": MAX_INPUT}), **extra)
    return None


def _began_with(sent: str, logged: str) -> bool:
    """Whether the submission ``sent`` is the one logged as ``logged``: the same inputs, or
    more of them after those (a chain that stopped before its end logs the inputs played)."""
    parts, played = sent.split("; "), logged.split("; ")
    return parts[:len(played)] == played
