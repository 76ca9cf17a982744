"""Takebacks: a player asks to take back their own last move; every other human seat agrees.

The rules (docs/tour.md; refusals are catalogue messages):

- The move taken back is the asker's own last move (a ``move`` entry of their seat, made by
  the player: not one the clock or the computer made for them). After it the log may hold only
  the computer's moves for computer seats, which are taken back with it; a move by anyone else,
  a revealed plan, a rollback, a resignation or a hand-over means it is no longer the last move.
- Nothing hidden may have come out since the state before it: no die rolled, no tile or card
  drawn, no shuffle, no plan revealed, and after it no card of another seat shown (the
  computer's answer in its window included: :meth:`app.games.base.Ruleset.cards_shown`).
  Each game says what that is (:meth:`app.games.base.Ruleset.reveals_hidden`, comparing the
  state before the move with the state now: its random source's draws, its face-down piles),
  and any entry since with a random outcome recorded counts too. So a takeback never lets its
  player see chance and choose again (the same inputs would meet the same dice: the source is
  seeded).
- One request at a time per game (a partial unique index), on an active, unpaused game.
- Every other human seat answers (computer seats do not vote): by a signed link from the mail
  (``/t/<token>``: GET shows the request, POST answers), on the game page, through the API or
  the command line. A seat answers once, for itself only. With no other human seat, the
  takeback is applied at once.
- All agree: a ``rollback`` entry is appended (actor ``player``, the asker's seat) and the game
  goes on from the state before the move; everyone is told by the rollback notice. Someone
  refuses, or the deadline (a ``takeback-<id>`` row of the clock's deadlines table, claimed
  atomically like the others) passes first: nothing changes and the asker is told.
- The game does not wait: any new log entry (a move by anyone, a pause) lapses the pending
  request, which then can no longer be agreed to. Only the worker's normal and strong computer
  seats (app/features/clock/botturns.py) hold their move while a request is pending.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final
from weakref import WeakKeyDictionary

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlalchemy import func
from sqlmodel import Session, col, select

from app.core.i18n import N_
from app.core.models import (
    ACTIVE,
    COMPUTER,
    MOVE,
    PAUSE,
    PLAYER,
    RESUME,
    ROLLBACK,
    Deadline,
    Game,
    Move,
    Takeback,
    utcnow,
)
from app.features.clock.timekeeper import install as install_timekeeper
from app.features.live.feed import game_changed
from app.games.ui import game_ui
from app.mail.notify import TAKEBACK, TAKEBACK_RESULT, enqueue_notice, is_human
from app.service import (
    BadRequest,
    Forbidden,
    GameEvent,
    GameMovedOn,
    GameService,
    Loaded,
    NotFound,
    NotPlaying,
    ServiceError,
)
from app.service.errors import Phrase, Words
from app.service.records import iso_time

TAKEBACK_PREFIX: Final = "takeback-"
"""The kind of a takeback's deadline row: ``takeback-<id>``."""
TAKEBACK_HOURS: Final = 24
"""How long the other players have to answer."""
PENDING, AGREED, REFUSED, EXPIRED, LAPSED = "pending", "agreed", "refused", "expired", "lapsed"
AGREE, REFUSE = "agree", "refuse"
LINK_SALT: Final = "titanpost.takeback-link"
LINK_MAX_AGE: Final = 7 * 24 * 3600

NOT_RUNNING: Final = N_("the game is not running: there is nothing to take back")
PAUSED_NOW: Final = N_("the game is paused: a move can be taken back once it resumes")
COMPUTER_SEAT: Final = N_("the computer plays this seat now: it takes nothing back")
NOTHING: Final = N_("you have made no move that can be taken back")
NOT_LAST: Final = N_(
    "your last move is no longer the last one: {player} has played since, so it cannot be "
    "taken back")
HIDDEN: Final = N_(
    "chance or hidden information has come out since your move ({what}): it cannot be taken "
    "back")
ALREADY: Final = N_("a takeback is already waiting for an answer in this game")
NO_REQUEST: Final = N_("no takeback is waiting for an answer in this game")
NOT_VOTER: Final = N_("this takeback is not yours to answer")
ANSWERED: Final = N_("you have already answered this takeback")
LAPSED_NOW: Final = N_("the game moved on since the takeback was asked: it no longer applies")


def _hidden_since(loaded: Loaded) -> Words:
    """The refusal of a takeback after something hidden came out, in its game's words."""
    return HIDDEN, {"what": Phrase(game_ui(loaded.game.ruleset).hidden_since)}


@dataclass(frozen=True)
class TakebackLink:
    """What a takeback link carries: the game, the answering seat and the request."""

    game: str
    seat: int
    takeback: int


def make_token(secret_key: str, seat_secret: str, link: TakebackLink) -> str:
    """A link token, signed with the server key and the answering seat's own secret (so it
    answers for that seat alone)."""
    return URLSafeTimedSerializer(secret_key + seat_secret, salt=LINK_SALT).dumps(
        {"g": link.game, "s": link.seat, "t": link.takeback})


def read_token(token: str, secret_key: str, seat_secret: str) -> TakebackLink:
    """The link in ``token``; ValueError("expired" / "forged" / "malformed") otherwise."""
    try:
        data = URLSafeTimedSerializer(secret_key + seat_secret, salt=LINK_SALT).loads(
            token, max_age=LINK_MAX_AGE)
    except SignatureExpired:
        raise ValueError("expired") from None
    except BadSignature:
        raise ValueError("forged") from None
    if not (isinstance(data, dict) and isinstance(data.get("g"), str)
            and type(data.get("s")) is int and type(data.get("t")) is int):
        raise ValueError("malformed")
    return TakebackLink(data["g"], data["s"], data["t"])


def takeback_json(row: Takeback) -> dict[str, Any]:
    """A request as the API, the pages and the command line show it (seats 0-based)."""
    return {
        "id": row.id, "seat": row.seat, "move_seq": row.move_seq, "head_seq": row.head_seq,
        "status": row.status, "voters": list(row.voters),
        "answers": {int(k): v for k, v in row.answers.items()},
        "waiting_for": [p for p in row.voters if str(p) not in row.answers],
        "due_at": _iso(row.due_at), "created_at": _iso(row.created_at),
        "closed_at": _iso(row.closed_at), "rollback_seq": row.rollback_seq,
    }


class Takebacks:
    """Asking for, answering and expiring takebacks, on a game service's database."""

    def __init__(self, service: GameService) -> None:
        self.service = service
        self.settings = service.settings

    # ---------------------------------------------------------------- asking

    def ask(self, uid: str, position: int, *, at: datetime | None = None) -> dict[str, Any]:
        """Seat ``position`` asks to take back its last move: refused with the reason, applied
        at once when no other person plays, else waiting for the others' answers."""
        at = at or utcnow()
        with self.service.session(write=True) as s:
            loaded = self._locked(s, uid)
            self._lapse_stale(s, loaded, at)
            if self._pending_row(s, loaded) is not None:
                raise BadRequest("a takeback is already waiting for an answer in this game",
                                 words=(ALREADY, {}))
            move_seq = self._takeable(s, loaded, position)
            voters = [seat.position for seat in loaded.seats
                      if seat.position != position and is_human(seat)]
            row = Takeback(game_id=loaded.game_id, seat=position, move_seq=move_seq,
                           head_seq=loaded.seq, voters=voters, answers={},
                           due_at=at + timedelta(hours=TAKEBACK_HOURS), created_at=at)
            s.add(row)
            s.flush()
            if voters:
                self._open(s, loaded, row)
            else:
                self._apply(s, loaded, row, at)
            answer = self._answer_body(s, row, loaded)
            s.commit()
        self.service._remember(loaded)
        return answer

    def _takeable(self, s: Session, loaded: Loaded, position: int) -> int:
        """The entry seat ``position`` may take back now, or the refusal saying why not."""
        game = loaded.game
        if game.status != ACTIVE or loaded.state is None:
            raise NotPlaying(f"game {game.uid} is {game.status}: nothing to take back",
                             words=(NOT_RUNNING, {}))
        if game.paused_at is not None:
            raise NotPlaying(f"game {game.uid} is paused", words=(PAUSED_NOW, {}))
        if loaded.seat(position).is_bot:
            raise Forbidden("the computer plays this seat now", words=(COMPUTER_SEAT, {}))
        mine, since = self._last_move(s, loaded, position)
        self._nobody_else_since(loaded, since)
        rules = loaded.rules
        before, _ = self.service._rebuild(s, game, rules, mine - 1)
        after_mine, _ = self.service._rebuild(s, game, rules, mine)
        if (any(entry.outcomes and any(entry.outcomes) for entry in since)
                or rules.reveals_hidden(before, loaded.state)
                or (len(since) > 1 and rules.cards_shown(after_mine, loaded.state))):
            raise BadRequest("chance or hidden information has come out since your move",
                             words=_hidden_since(loaded))
        return mine

    @staticmethod
    def _last_move(s: Session, loaded: Loaded, position: int) -> tuple[int, list[Move]]:
        """The seat's own last move (made by its player) and the log from it on; refused
        when there is none, or when a rollback came after it (taken back already)."""
        mine = s.exec(select(func.max(Move.seq)).where(
            Move.game_id == loaded.game_id, Move.seat == position, Move.kind == MOVE,
            Move.actor == PLAYER)).one()
        since = [] if not mine else list(s.exec(
            select(Move).where(Move.game_id == loaded.game_id, col(Move.seq) >= mine)
            .order_by(col(Move.seq))).all())
        if not mine or any(entry.kind == ROLLBACK for entry in since):
            raise BadRequest("you have made no move that can be taken back", words=(NOTHING, {}))
        return int(mine), since

    @staticmethod
    def _nobody_else_since(loaded: Loaded, since: list[Move]) -> None:
        """After the move only notes (a pause, a resume) and the computer's moves for its
        own seats may follow: a reveal of sealed answers is hidden information come out,
        anything else someone else's play, which a takeback would undo."""
        bots = {seat.position for seat in loaded.seats if seat.is_bot}
        for entry in since[1:]:
            if entry.kind in (PAUSE, RESUME):
                continue
            if entry.kind == MOVE and entry.seat is None:
                raise BadRequest("chance or hidden information has come out since your move",
                                 words=_hidden_since(loaded))
            if not (entry.kind == MOVE and entry.actor == COMPUTER and entry.seat in bots):
                name = loaded.seat(entry.seat).player_name if entry.seat is not None else ""
                raise BadRequest(f"your last move is no longer the last one: {name} has "
                                 "played since", words=(NOT_LAST, {"player": name}))

    def _open(self, s: Session, loaded: Loaded, row: Takeback) -> None:
        """The request's deadline row and the mail asking each voter, with its link."""
        assert row.id is not None
        game_changed(s, loaded.game.uid)
        asker = loaded.seat(row.seat)
        s.add(Deadline(game_id=loaded.game_id, seq=loaded.decision_seq, seat=row.seat,
                       kind=f"{TAKEBACK_PREFIX}{row.id}", due_at=row.due_at,
                       opened_at=row.created_at))
        move = s.exec(select(Move).where(Move.game_id == loaded.game_id,
                                         Move.seq == row.move_seq)).one()
        for position in row.voters:
            seat = loaded.seat(position)
            enqueue_notice(s, self.settings, game=loaded.game, seat=seat, kind=TAKEBACK,
                           seq=row.head_seq, extra=f"t{row.id}", payload={
                               "takeback": row.id, "player": asker.player_name,
                               "position": row.seat, "move": row.move_seq,
                               "input": loaded.rules.public_input(move.input),
                               "due_at": _iso(row.due_at),
                               "link": self.link(loaded.game.uid, seat.position, seat.secret,
                                                 row.id)})

    def link(self, uid: str, position: int, seat_secret: str, takeback_id: int) -> str:
        """The address that answers takeback ``takeback_id`` as seat ``position``."""
        token = make_token(self.settings.secret_key, seat_secret,
                           TakebackLink(uid, position, takeback_id))
        return f"{self.settings.base_url}/t/{token}"

    # ---------------------------------------------------------------- answering

    def answer(self, uid: str, position: int, takeback_id: int | None, agree: bool, *,
               at: datetime | None = None) -> dict[str, Any]:
        """Seat ``position`` answers the pending request (``takeback_id``: the one it was
        asked about, None: whichever is pending). The last agreement applies it; a refusal
        closes it and tells the asker."""
        at = at or utcnow()
        with self.service.session(write=True) as s:
            loaded = self._locked(s, uid)
            row = self._row_to_answer(s, loaded, takeback_id, position, at)
            answers = dict(row.answers)
            answers[str(position)] = AGREE if agree else REFUSE
            row.answers = answers
            if not agree:
                self._close(s, loaded, row, REFUSED, at, by=position)
            elif all(str(p) in answers for p in row.voters):
                self._apply(s, loaded, row, at)
            s.add(row)
            game_changed(s, uid)
            answer = self._answer_body(s, row, loaded)
            s.commit()
        self.service._remember(loaded)
        return answer

    def _row_to_answer(self, s: Session, loaded: Loaded, takeback_id: int | None,
                       position: int, at: datetime) -> Takeback:
        """The pending request seat ``position`` may answer now, or the refusal."""
        if takeback_id is not None:
            row = s.get(Takeback, takeback_id)
            if row is None or row.game_id != loaded.game_id:
                raise NotFound(f"no takeback {takeback_id} in game {loaded.game.uid}",
                               words=(NO_REQUEST, {}))
        else:
            found = self._pending_row(s, loaded)
            if found is None:
                raise NotFound("no takeback is waiting for an answer", words=(NO_REQUEST, {}))
            row = found
        if position not in row.voters:
            raise Forbidden("this takeback is not yours to answer", words=(NOT_VOTER, {}))
        if str(position) in row.answers:
            raise BadRequest("you have already answered this takeback", words=(ANSWERED, {}))
        if row.status != PENDING:
            raise GameMovedOn(f"this takeback is {row.status}", words=(NO_REQUEST, {}))
        if self._stale(loaded, row):
            self._close(s, loaded, row, LAPSED, at)
            s.commit()
            raise GameMovedOn("the game moved on since the takeback was asked",
                              words=(LAPSED_NOW, {}))
        return row

    def _apply(self, s: Session, loaded: Loaded, row: Takeback, at: datetime) -> None:
        """Take the move back: a ``rollback`` entry to the state before it, the computer's
        answers after it, the rollback notice to everyone (the event's listeners)."""
        service = self.service
        game = loaded.game
        before = loaded.seq
        to = row.move_seq - 1
        with service._race_lost(s, game.uid, row.seat):
            loaded.state, _ = service._rebuild(s, game, loaded.rules, to)
            service._append(s, loaded, row.seat, f"{ROLLBACK} {to}", [], kind=ROLLBACK,
                            actor=PLAYER)
            row.rollback_seq = loaded.seq
            self._close(s, loaded, row, AGREED, at)
            service._play_bots(s, loaded)
            service._settle(s, loaded)
            service._emit(s, GameEvent("rolled_back", game, loaded.seats, before, loaded.seq,
                                       loaded, actor=PLAYER, position=row.seat,
                                       detail={"to": to, "takeback": row.seat}))
            s.flush()

    def _close(self, s: Session, loaded: Loaded, row: Takeback, status: str, at: datetime,
               *, by: int | None = None) -> None:
        """End the request; its deadline row is done; the asker hears of a refusal or an
        expiry (an agreement is told to everyone by the rollback notice; a lapse by the move
        that lapsed it)."""
        game_changed(s, loaded.game.uid)
        row.status, row.closed_at = status, at
        s.add(row)
        deadline = s.exec(select(Deadline).where(
            Deadline.game_id == loaded.game_id,
            Deadline.kind == f"{TAKEBACK_PREFIX}{row.id}")).first()
        if deadline is not None and deadline.done_at is None:
            deadline.done_at, deadline.result = at, status
            s.add(deadline)
        if status in (REFUSED, EXPIRED):
            asker = loaded.seat(row.seat)
            enqueue_notice(s, self.settings, game=loaded.game, seat=asker,
                           kind=TAKEBACK_RESULT, seq=row.head_seq, extra=f"t{row.id}",
                           payload={"takeback": row.id, "status": status, "move": row.move_seq,
                                    "by": None if by is None else loaded.seat(by).player_name})

    # ---------------------------------------------------------------- the clock

    def expire(self, s: Session, row: Deadline, now: datetime) -> None:
        """The clock's handler of a due ``takeback-<id>`` row (claimed by this worker): the
        request expires unless it was answered meanwhile; the row is done either way."""
        takeback = s.get(Takeback, int(row.kind.removeprefix(TAKEBACK_PREFIX)))
        if takeback is not None and takeback.status == PENDING:
            game = s.get(Game, row.game_id)
            assert game is not None
            loaded = self._locked(s, game.uid)
            self._close(s, loaded, takeback, LAPSED if self._stale(loaded, takeback)
                        else EXPIRED, now)
        if row.done_at is None:
            row.done_at, row.result = now, "expired"
            s.add(row)

    # ---------------------------------------------------------------- reading

    def refusal(self, uid: str, position: int) -> ServiceError | None:
        """Why seat ``position`` cannot ask to take back its last move now: the refusal
        :meth:`ask` would give, found without asking anyone or writing anything; None when it
        can ask. Every reason is public (the game's status, whose move is last, whether chance
        or a card came out since), so the button may say it before anyone clicks."""
        with self.service.session() as s:
            loaded = self.service.load(s, uid)
            row = self._pending_row(s, loaded)
            if row is not None and not self._stale(loaded, row):
                return BadRequest("a takeback is already waiting for an answer in this game",
                                  words=(ALREADY, {}))
            try:
                self._takeable(s, loaded, position)
            except ServiceError as exc:
                return exc
        return None

    def pending(self, uid: str) -> dict[str, Any] | None:
        """The request waiting for answers in game ``uid`` (None: none, or lapsed)."""
        with self.service.session() as s:
            loaded = self.service.load(s, uid)
            row = self._pending_row(s, loaded)
            if row is None or self._stale(loaded, row):
                return None
            return self._json(s, row, loaded)

    def _answer_body(self, s: Session, row: Takeback, loaded: Loaded) -> dict[str, Any]:
        return {"takeback": self._json(s, row, loaded), "seq": loaded.seq,
                "decision_seq": loaded.decision_seq}

    def _json(self, s: Session, row: Takeback, loaded: Loaded) -> dict[str, Any]:
        body = takeback_json(row)
        move = s.exec(select(Move).where(Move.game_id == loaded.game_id,
                                         Move.seq == row.move_seq)).first()
        body["input"] = loaded.rules.public_input(move.input) if move is not None else None
        body["player"] = loaded.seat(row.seat).player_name
        return body

    # ---------------------------------------------------------------- shared

    def _locked(self, s: Session, uid: str) -> Loaded:
        """The game read after its row is locked: requests, answers and moves of one game
        take turns (on SQLite the write transaction holds the database's lock already)."""
        found = s.exec(select(Game.id).where(Game.uid == uid).with_for_update()).first()
        if found is None:
            raise NotFound(f"no game '{uid}'")
        return self.service._load(s, uid, fresh_seats=True)

    @staticmethod
    def _pending_row(s: Session, loaded: Loaded) -> Takeback | None:
        return s.exec(select(Takeback).where(Takeback.game_id == loaded.game_id,
                                             Takeback.status == PENDING)).first()

    @staticmethod
    def _stale(loaded: Loaded, row: Takeback) -> bool:
        """Whether the log grew since the request (a move, a pause: it lapsed)."""
        return loaded.seq != row.head_seq

    def _lapse_stale(self, s: Session, loaded: Loaded, at: datetime) -> None:
        row = self._pending_row(s, loaded)
        if row is not None and self._stale(loaded, row):
            self._close(s, loaded, row, LAPSED, at)
            s.flush()


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else iso_time(moment)


_INSTALLED: WeakKeyDictionary[GameService, Takebacks] = WeakKeyDictionary()


def install(service: GameService) -> Takebacks:
    """The takebacks of ``service`` (made once), their deadline rows handled by its clock."""
    found = _INSTALLED.get(service)
    if found is None:
        found = _INSTALLED[service] = Takebacks(service)
        install_timekeeper(service).row_handlers[TAKEBACK_PREFIX] = found.expire
    return found
