"""The game service: every way into a game (web, API, mail, CLI, scheduler) goes through here.

Commands are shaped load -> decide -> append, in one transaction. The move log's primary key
(game, sequence) settles races: of two submissions for the same decision exactly one insert
succeeds, and the other is answered "the game moved on" with the new state.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, NamedTuple, Protocol, TypeVar

from sqlalchemy import Engine, bindparam, func, inspect
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.games import ruleset
from app.games.base import MoveRejected, Ruleset, SeatSetup, SetupError
from app.games.rng import KEYED_SCHEME, SPLITMIX_SCHEME

from . import fairness
from .clock import (
    HANDOVERS,
    TIMEOUT_ACTIONS,
    ClockError,
    ClockSettings,
    Quiet,
    check_reminders,
    zone,
)
from .config import Settings
from .db import session as open_session
from .i18n import LANGUAGES as LANGUAGES  # the languages a seat may choose (re-exported)
from .i18n import N_, translate
from .models import (
    ABANDONED,
    ACTIVE,
    ACTORS,
    ADMIN,
    CLOCK,
    COMPUTER,
    ENTRY_KINDS,
    FINISHED,
    GAME_STATUSES,
    HANDOVER,
    MOVE,
    OPEN,
    OWNER,
    PAUSE,
    PLAYER,
    RESIGN,
    RESUME,
    ROLLBACK,
    STATE_KINDS,
    TIMEOUT,
    ApiToken,
    ChatMessage,
    Game,
    Move,
    SealedOrder,
    Seat,
    Snapshot,
    Webhook,
    utcnow,
)
from .textrules import DIRECTION_MARKS, line_problem, unusable_character

_NOT_IN_ADDRESS = "@\\s\x00-\x1f\x7f-\x9f\ud800-\udfff" + "".join(sorted(DIRECTION_MARKS))
EMAIL = re.compile(f"^[^{_NOT_IN_ADDRESS}]+@[^{_NOT_IN_ADDRESS}]+\\.[^{_NOT_IN_ADDRESS}]+\\Z")
"""An e-mail address as a seat takes it: no space, control, surrogate or direction mark (its
part before the @ is the player's name by default)."""
MAX_EMAIL = 254
MAX_INPUT = 500
MAX_BOT_MOVES = 2000
EXPORT_FORMAT = "titanpost-game"
MAX_CHAT_STORED = 2000
"""The longest chat text the database holds (``chat_messages.text``): what an import takes."""


class AnswerRecorder(Protocol):
    """Writes a request's answer in the transaction of what the request changed: the claim of
    an ``Idempotency-Key`` (app/idempotency.py), so that a repeat of the request is answered
    the same and a crash cannot leave the change without its answer."""

    def record(self, s: Session, result: dict[str, Any]) -> None: ...


def _record(s: Session, idempotency: AnswerRecorder | None, result: dict[str, Any]) -> None:
    if idempotency is not None:
        idempotency.record(s, result)


class ServiceError(Exception):
    """A refusal with an HTTP-like status and a message a person can act on.

    ``message`` is English, for the API and the logs. A refusal a player meets on a page, a
    link or in a mail's answer also carries ``words``: its catalogue message and fields, which
    :meth:`say` puts in the player's language."""

    status = 400

    def __init__(self, message: str, /, *, words: Words | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.words = words
        self.extra = extra

    def say(self, lang: str | None) -> str:
        """The refusal in ``lang``: its catalogue message, else the English ``message``."""
        if self.words is None:
            return self.message
        text, values = self.words
        return translate(lang, text, **values)


Words = tuple[str, dict[str, Any]]
"""A catalogue message id and its ``{fields}``."""


class BadRequest(ServiceError):
    status = 400


class Unauthorized(ServiceError):
    status = 401


@dataclass(frozen=True)
class LineRule:
    """What one kind of one-line text (a name, a pause reason) may be: at most ``limit``
    characters, none of them a control character, a line break or a text-direction mark (see
    app/textrules.py); the two refusals are catalogue messages."""

    limit: int
    bad_character: str
    too_long: str


PLAYER_NAME: Final = LineRule(
    100,
    N_("a player's name is one line with no control character, line break or text-direction "
       "mark (it holds {character})"),
    N_("a player's name is at most {limit} characters (this one has {length})"))
GAME_NAME: Final = LineRule(
    200,
    N_("a game's name is one line with no control character, line break or text-direction "
       "mark (it holds {character})"),
    N_("a game's name is at most {limit} characters (this one has {length})"))
PAUSE_REASON: Final = LineRule(
    200,
    N_("a pause reason is one line with no control character, line break or text-direction "
       "mark (it holds {character})"),
    N_("a pause reason is at most {limit} characters (this one has {length})"))


def checked_line(text: str, rule: LineRule, *, where: str = "") -> str:
    """``text`` trimmed, when it may be ``rule``'s kind of text; else BadRequest saying why
    (its English message after ``where``, e.g. ``seat 2: ``)."""
    text = text.strip()
    character = line_problem(text)
    if character is not None:
        fields: dict[str, Any] = {"character": character}
        raise BadRequest(where + rule.bad_character.format(**fields),
                         words=(rule.bad_character, fields))
    if len(text) > rule.limit:
        fields = {"limit": rule.limit, "length": len(text)}
        raise BadRequest(where + rule.too_long.format(**fields), words=(rule.too_long, fields))
    return text


def is_address(text: str) -> bool:
    """Whether ``text`` (trimmed, lower case) can be a seat's e-mail address."""
    return len(text) <= MAX_EMAIL and EMAIL.match(text) is not None


class Forbidden(ServiceError):
    status = 403


class WrongCreatorToken(Forbidden):
    """The creator token sent is not the game's (a guess, as far as rate limits go)."""


class NotFound(ServiceError):
    status = 404


class GameMovedOn(ServiceError):
    """The submission answered a decision that is no longer pending."""

    status = 409


class NotPlaying(ServiceError):
    """The game is not in a state that accepts this (not started, finished, abandoned)."""

    status = 409


class IllegalMove(ServiceError):
    status = 422


MOVED_ON_REVEALED: Final = N_(
    "the game moved on: the answers to that decision have been revealed; here is the current "
    "state")
MOVED_ON_LATER: Final = N_(
    "the game moved on: you answered the decision after move {expected}, but {moves} moves have "
    "been made; here is the current state")
MOVED_ON_RACED: Final = N_(
    "the game moved on: another submission for this decision arrived first; here is the current "
    "state")
TAKES_NO_MOVES: Final = {OPEN: N_("the game has not started yet: it takes no moves"),
                         FINISHED: N_("the game is over: it takes no more moves"),
                         ABANDONED: N_("the game was abandoned: it takes no more moves")}
NO_MOVES_NOW: Final = N_("the game takes no moves now")
COMPUTER_PLAYS_SEAT: Final = N_(
    "the computer plays this seat now: its player no longer moves for it")
SEALED: Final = N_(
    "you have already answered this decision ({answer}): a sealed answer cannot be changed")


COMPUTER_NAME: Final = N_("Computer")
"""The name of a computer seat given none (stored in English, shown in the reader's language)."""


def find_game(s: Session, uid: str) -> Game:
    """The game with id ``uid``, or NotFound."""
    if not isinstance(uid, str) or not re.fullmatch(r"[0-9a-f]{32}", uid):
        raise NotFound(f"no game '{uid}'")
    game = s.exec(select(Game).where(Game.uid == uid)).first()
    if game is None:
        raise NotFound(f"no game '{uid}'")
    return game


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


def canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def timestamp(moment: datetime) -> str:
    """A stable text form of a stored time (SQLite gives naive UTC values back)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def genesis_hash(initial_state: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(initial_state).encode()).hexdigest()


def move_hash(
    prev_hash: str,
    seq: int,
    seat: int | None,
    text: str,
    outcomes: Any,
    created_at: datetime,
    kind: str = MOVE,
    actor: str = PLAYER,
) -> str:
    """The entry's link in the log's hash chain. The kind and the actor are hashed only when
    they are not the plain defaults, so entries written before they existed keep their hash."""
    fields: dict[str, Any] = {
        "seq": seq, "seat": seat, "input": text, "outcomes": outcomes, "at": timestamp(created_at)
    }
    if kind != MOVE:
        fields["kind"] = kind
    if actor != PLAYER:
        fields["actor"] = actor
    return hashlib.sha256(f"{prev_hash}\n{canonical(fields)}".encode()).hexdigest()


@dataclass
class GameEvent:
    """Something that happened to a game, given to listeners inside its transaction.

    ``kind`` is "created", "invited", "started", "moved", "resigned" or "abandoned". Listeners
    (the mail notifications) write their rows in the same transaction, so an event and what it
    causes are committed together or not at all.
    """

    kind: str
    game: Game
    seats: list[Seat]
    seq_before: int = 0
    seq_after: int = 0
    loaded: Loaded | None = None
    invitations: list[dict[str, Any]] = field(default_factory=list)
    at: datetime = field(default_factory=utcnow)
    """The time the event happens at: now, or the time the scheduler was asked to act as of
    (``titanpost admin tick --now``), so that the deadlines it opens count from then."""
    actor: str = PLAYER
    position: int | None = None
    """The seat that caused the event (the one that moved or resigned), if any."""
    detail: dict[str, Any] = field(default_factory=dict)
    """Kind-specific facts: for "timed_out" the mode, the inputs played and the handover; for
    "resumed" how long the game was paused."""


GameListener = Callable[[Session, GameEvent], None]
Listener = TypeVar("Listener", bound=GameListener)

STATE_CACHE_SIZE = 2000


# Statements run by every request, built once (building one costs more than running it).
_GAME_AND_HEAD = select(
    Game,
    select(func.coalesce(func.max(Move.seq), 0)).where(Move.game_id == Game.id)
    .correlate(Game).scalar_subquery(),
    select(func.count()).select_from(Seat).where(Seat.game_id == Game.id, col(Seat.is_bot))
    .correlate(Game).scalar_subquery(),
    select(func.count()).select_from(Webhook).where(Webhook.game_id == Game.id)
    .correlate(Game).scalar_subquery(),
).where(Game.uid == bindparam("uid"))
_SEATS = select(Seat).where(Seat.game_id == bindparam("game_id")).order_by(col(Seat.position))
_TOKEN_SEAT = (
    select(Game.uid, Seat.position, Seat.email, ApiToken.revoked_at)
    .join(Seat, col(Seat.id) == col(ApiToken.seat_id))
    .join(Game, col(Game.id) == col(Seat.game_id))
    .where(ApiToken.token_hash == bindparam("digest"))
)


@dataclass(frozen=True)
class CachedState:
    seq: int
    state: dict[str, Any]
    head_hash: str
    decision_seq: int


@dataclass
class Loaded:
    """A game read for one command: its rows and its current engine state."""

    game: Game
    seats: list[Seat]
    rules: Ruleset
    state: Any
    seq: int
    head_hash: str
    decision_seq: int = 0
    """The log entry after which the pending decision opened: the last ``move`` entry (notes
    such as a resignation or a pause come after it without changing the decision)."""
    sealed: dict[int, str] = field(default_factory=dict)
    """Secret answers already given to a simultaneous decision, by seat (see SealedOrder)."""
    appended: list[Move] = field(default_factory=list)
    """The log entries this command appended (the session's identity map holds them only
    weakly: listeners read them from here)."""
    webhooks: int | None = None
    """How many webhooks the game has, read with its row (None: not read), so that a move of a
    game without any costs no statement for them."""

    def to_act(self) -> list[int]:
        """The seats that still owe an answer to the pending decision."""
        if self.state is None:
            return []
        return [p for p in self.rules.to_act(self.state) if p not in self.sealed]

    def view(self, position: int | None, spectator: bool = False) -> dict[str, Any]:
        """The state view of seat ``position`` (a spectator's when None or ``spectator``), the
        seats that have sealed an answer shown as having answered."""
        view = self.rules.view(self.state, position, spectator or position is None)
        if not self.sealed:
            return view
        own = self.sealed.get(position) if position is not None and not spectator else None
        return self.rules.mark_sealed(view, sorted(self.sealed), own)

    @property
    def game_id(self) -> int:
        assert self.game.id is not None
        return self.game.id

    def seat(self, position: int) -> Seat:
        for seat in self.seats:
            if seat.position == position:
                return seat
        raise NotFound(f"game {self.game.uid} has no seat {position}")


@dataclass(frozen=True)
class LinkSeat:
    """What a signed link's page needs of the seat it names (see :meth:`GameService.link_seat`).

    ``secret`` verifies the seat's links; ``circuits`` are the game's circuits as stored (names,
    files or inline mappings, for drawing the board).
    """

    game: str
    position: int
    secret: str
    language: str
    name: str
    titans: list[str]
    status: str
    game_name: str
    circuits: list[Any]
    ruleset: str = "titan-race"
    """The game's ruleset name: its UI words the link pages."""


class GameService:
    def __init__(self, engine: Engine, settings: Settings) -> None:
        self.engine = engine
        self.settings = settings
        self._states: OrderedDict[int, CachedState] = OrderedDict()
        self._seat_rows: dict[int, tuple[tuple[str, int, int], list[Seat]]] = {}
        self.listeners: list[GameListener] = []

    def listener(self, kind: type[Listener], make: Callable[[], Listener]) -> Listener:
        """The service's listener of class ``kind``: the one installed, else one made by
        ``make`` and installed now (each kind listens once)."""
        for listener in self.listeners:
            if isinstance(listener, kind):
                return listener
        made = make()
        self.listeners.append(made)
        return made

    def _emit(self, s: Session, event: GameEvent) -> None:
        for listener in self.listeners:
            listener(s, event)

    @contextmanager
    def session(self, *, write: bool = False) -> Iterator[Session]:
        with open_session(self.engine, write=write) as s:
            yield s

    # ------------------------------------------------------------------ lifecycle

    def create_game(
        self,
        *,
        seats: list[dict[str, Any]],
        variant: str = "standard",
        circuits: list[Any] | None = None,
        name: str = "",
        settings: dict[str, Any] | None = None,
        seed: int | None = None,
        rules_name: str = "titan-race",
        owner_email: str | None = None,
        idempotency: AnswerRecorder | None = None,
    ) -> dict[str, Any]:
        """Create a game waiting for its players; return the creator token and invitations.

        ``owner_email`` is told about the game's clock (a pause, a seat to hand over); by
        default the first seat's player is the owner. Without a ``seed`` the game draws a
        secret and is dealt fairly (see app/fairness.py); a ``seed`` (the admin's only) deals
        it with the older generator from that seed, and every seat is told so."""
        rules = self._rules(rules_name)
        name = checked_line(name, GAME_NAME)
        circuits = list(circuits or rules.default_circuits)
        try:
            rules.check_circuits(variant, circuits)
        except SetupError as exc:
            raise BadRequest(str(exc)) from None
        settings = check_game_settings(settings or {})
        rows = [self._seat_row(i, spec) for i, spec in enumerate(seats)]
        if owner_email is not None and owner_email.strip():
            owner_email = owner_email.strip().lower()
            if not is_address(owner_email):
                raise BadRequest(f"the owner's address '{owner_email}' is not an e-mail address")
        else:
            owner_email = next((seat.email for seat, _ in rows if seat.email), None)
        try:
            rules.check_seats(variant, [SeatSetup(seat.position, seat.titans, seat.team)
                                        for seat, _ in rows])
        except SetupError as exc:
            raise BadRequest(str(exc)) from None
        creator_token = new_token()
        game = Game(
            uid=uuid.uuid4().hex,
            name=name,
            ruleset=rules.name,
            engine_version=rules.version,
            variant=variant,
            circuits=circuits,
            settings=settings,
            status=OPEN,
            creator_token_hash=token_hash(creator_token),
            owner_email=owner_email,
            **_new_dealing(seed),
        )
        invitations = []
        with self.session(write=True) as s:
            s.add(game)
            s.flush()
            for seat, invite in rows:
                assert game.id is not None
                seat.game_id = game.id
                s.add(seat)
                if invite is not None:
                    invitations.append(
                        {"position": seat.position, "email": seat.email, "invite_token": invite}
                    )
            s.flush()
            self._emit(s, GameEvent("created", game, [seat for seat, _ in rows],
                                    invitations=invitations))
            created = {"game": game.uid, "creator_token": creator_token,
                       "invitations": invitations}
            _record(s, idempotency, created)
            s.commit()
        return created

    def _seat_row(self, position: int, spec: dict[str, Any]) -> tuple[Seat, str | None]:
        if not isinstance(spec, dict):
            raise BadRequest(f"seat {position}: give an object with an email (or bot: true)")
        bot = bool(spec.get("bot", False))
        email = str(spec.get("email", "")).strip().lower()
        if not bot and not is_address(email):
            raise BadRequest(f"seat {position}: '{email}' is not an e-mail address")
        language = str(spec.get("language", "en"))
        if language not in LANGUAGES:
            raise BadRequest(f"seat {position}: language must be one of {', '.join(LANGUAGES)}")
        titans = spec.get("titans", [])
        if isinstance(titans, str):
            titans = [titans]
        if not isinstance(titans, list) or not all(isinstance(t, str) for t in titans):
            raise BadRequest(f"seat {position}: titans must be a list of Titan names")
        team = spec.get("team")
        if team is not None and not isinstance(team, int):
            raise BadRequest(f"seat {position}: team must be a number")
        notify = spec.get("notify", {})
        if not isinstance(notify, dict):
            raise BadRequest(f"seat {position}: notify must be an object")
        try:
            notify = {k: v for k, v in notify.items() if k not in ("quiet", "timezone")} | (
                check_quiet(spec.get("quiet", notify.get("quiet")),
                            spec.get("timezone", notify.get("timezone"))))
        except BadRequest as exc:
            raise BadRequest(f"seat {position}: {exc.message}") from None
        invite = None if bot else new_token()
        seat = Seat(
            game_id=0,
            position=position,
            player_name=self._player_name(position, spec.get("name"),
                                          COMPUTER_NAME if bot else email.split("@")[0]),
            email=email,
            titans=[t.strip().lower() for t in titans],
            team=team,
            language=language,
            notify=notify,
            secret=secrets.token_hex(32),
            invite_token_hash=token_hash(invite) if invite else None,
            accepted_at=utcnow() if bot else None,
            is_bot=bot,
            contribution=fairness.new_contribution() if bot else None,
        )
        return seat, invite

    @staticmethod
    def _player_name(position: int, given: Any, default: str) -> str:
        """Seat ``position``'s name as a new game's request gives it (else ``default``)."""
        if given is None:
            return default
        if not isinstance(given, str):
            raise BadRequest(f"seat {position}: the name must be text")
        return checked_line(given, PLAYER_NAME, where=f"seat {position}: ") or default

    def accept(self, invite_token: str, *, name: str | None = None,
               contribution: str | None = None,
               idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """A player takes their seat by the invitation; returns their API token (shown once).

        ``contribution`` is the randomness the player's browser or CLI drew for the deal (the
        server draws one when none is given): see app/fairness.py."""
        if contribution is not None and contribution != "":
            try:
                contribution = fairness.check_contribution(contribution)
            except ValueError as exc:
                raise BadRequest(str(exc)) from None
        else:
            contribution = fairness.new_contribution()
        name = checked_line(name, PLAYER_NAME) if name else None
        with self.session(write=True) as s:
            seat = s.exec(
                select(Seat).where(Seat.invite_token_hash == token_hash(invite_token))
            ).first()
            if seat is None:
                raise NotFound("this invitation is unknown or was already used")
            game = s.get(Game, seat.game_id)
            assert game is not None
            if game.status == ACTIVE and seat.is_bot:
                return self._take_over(s, game, seat, name, idempotency)
            if game.status != OPEN:
                raise NotPlaying(f"game {game.uid} has already {game.status}")
            seat.accepted_at = utcnow()
            seat.invite_token_hash = None
            seat.contribution = contribution
            if name:
                seat.player_name = name
            token = new_token()
            assert seat.id is not None
            s.add(ApiToken(token_hash=token_hash(token), seat_id=seat.id, label="invitation"))
            s.add(seat)
            accepted = {"game": game.uid, "position": seat.position, "api_token": token,
                        "commitment": game.dealing_commitment}
            _record(s, idempotency, accepted)
            s.commit()
            return accepted

    def _take_over(self, s: Session, game: Game, seat: Seat, name: str | None,
                   idempotency: AnswerRecorder | None) -> dict[str, Any]:
        """A new player accepts the invitation to a running game's seat (see replace_seat)."""
        loaded = self._load(s, game.uid, fresh_seats=True)
        mine = loaded.seat(seat.position)
        mine.is_bot = False
        mine.invite_token_hash = None
        mine.accepted_at = utcnow()
        mine.resigned_at = None
        mine.missed_deadlines = 0
        if name:
            mine.player_name = name
        s.add(mine)
        before = loaded.seq
        with self._race_lost(s, game.uid, mine.position):
            self._append(s, loaded, mine.position, f"{HANDOVER} player", [], kind=HANDOVER,
                         actor=PLAYER)
            token = new_token()
            assert mine.id is not None
            s.add(ApiToken(token_hash=token_hash(token), seat_id=mine.id, label="invitation"))
            self._emit(s, GameEvent("joined", game, loaded.seats, before, loaded.seq, loaded,
                                    position=mine.position))
            accepted = {"game": game.uid, "position": mine.position, "api_token": token}
            _record(s, idempotency, accepted)
            s.commit()
        self._seat_rows.pop(loaded.game_id, None)
        return accepted

    def invite(self, uid: str, creator_token: str, position: int, email: str, *,
               idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """(Re)issue the invitation of an open seat, to a new address if given."""
        email = email.strip().lower()
        if not is_address(email):
            raise BadRequest(f"'{email}' is not an e-mail address")
        with self.session(write=True) as s:
            game = self._creator_game(s, uid, creator_token)
            if game.status != OPEN:
                raise NotPlaying(f"game {uid} has already {game.status}: no more invitations")
            seat = s.exec(
                select(Seat).where(Seat.game_id == game.id, Seat.position == position)
            ).first()
            if seat is None:
                raise NotFound(f"game {uid} has no seat {position}")
            if seat.accepted_at is not None and not seat.is_bot:
                raise BadRequest(f"seat {position} is already taken")
            invite = new_token()
            seat.email = email
            seat.is_bot = False
            seat.accepted_at = None
            seat.invite_token_hash = token_hash(invite)
            s.add(seat)
            self._emit(s, GameEvent("invited", game, [seat], invitations=[
                {"position": position, "email": email, "invite_token": invite}]))
            invited = {"position": position, "email": email, "invite_token": invite}
            _record(s, idempotency, invited)
            s.commit()
            return invited

    def start(
        self, uid: str, creator_token: str | None, *, fill_with_bots: bool = False,
        idempotency: AnswerRecorder | None = None,
    ) -> dict[str, Any]:
        """Deal, find the first player and open the first decision (``creator_token`` None:
        an admin starting it)."""
        with self.session(write=True) as s:
            game = (self._game(s, uid) if creator_token is None
                    else self._creator_game(s, uid, creator_token))
            if game.status != OPEN:
                raise NotPlaying(f"game {uid} has already {game.status}")
            seats = self._seats(s, game)
            waiting = [seat.position for seat in seats if seat.accepted_at is None]
            if waiting and not fill_with_bots:
                raise NotPlaying(
                    "not every player has accepted yet (waiting for seat "
                    f"{', '.join(map(str, waiting))}); start with bots filling them, or wait"
                )
            for seat in seats:
                if seat.accepted_at is None:
                    seat.is_bot = True
                    seat.accepted_at = utcnow()
                if seat.contribution is None:
                    seat.contribution = fairness.new_contribution()
            rules = self._rules(game.ruleset)
            setups = [
                SeatSetup(
                    seat.position,
                    list(seat.titans),
                    seat.team,
                    bool(seat.notify.get("anytime_windows", False)),
                )
                for seat in seats
            ]
            game.seat_setups = [_setup_json(setup) for setup in setups]
            try:
                initial, titans = rules.start(
                    variant=game.variant, circuits=list(game.circuits), seats=setups,
                    dealing=fairness.dealing(
                        game.rng_scheme, seed=game.seed, secret=game.dealing_secret,
                        contributions=[str(seat.contribution) for seat in seats]),
                )
            except SetupError as exc:
                raise BadRequest(str(exc)) from None
            bank = ClockSettings.of(game.settings).initial_bank()
            for seat, given in zip(seats, titans, strict=True):
                seat.titans = given
                seat.bank_seconds = bank
                s.add(seat)
            game.initial_state = initial
            game.engine_version = rules.version  # (the rules that dealt it, if newer since)
            game.status = ACTIVE
            game.started_at = utcnow()
            s.add(game)
            s.flush()
            loaded = Loaded(game, seats, rules, rules.load(initial), 0, genesis_hash(initial))
            self._play_bots(s, loaded)
            self._settle(s, loaded)
            self._emit(s, GameEvent("started", game, seats, 0, loaded.seq, loaded))
            summary = self._summary(loaded)
            _record(s, idempotency, summary)
            s.commit()
            return summary

    def resign(self, uid: str, position: int) -> dict[str, Any]:
        """The player leaves; the computer plays their seat from now on."""
        with self.session(write=True) as s:
            loaded = self._load(s, uid, fresh_seats=True)
            if loaded.game.status != ACTIVE:
                raise NotPlaying(f"game {uid} is {loaded.game.status}")
            seat = loaded.seat(position)
            if seat.resigned_at is not None:
                raise BadRequest(f"seat {position} has already resigned")
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

    # ------------------------------------------------------------------ the clock

    def pause(self, uid: str, creator_token: str | None, *, reason: str = "",
              actor: str = OWNER, at: datetime | None = None) -> dict[str, Any]:
        """Stop the game's clock (and its moves) until :meth:`resume`; the owner's pause needs
        the creator token (None: an admin's)."""
        at = at or utcnow()
        reason = checked_line(reason, PAUSE_REASON)
        with self.session(write=True) as s:
            loaded = self._owned_active(s, uid, creator_token)
            if loaded.game.paused_at is not None:
                raise BadRequest(f"game {uid} is already paused ({loaded.game.pause_reason})")
            with self._race_lost(s, uid, None):
                self._pause_in(s, loaded, reason or "by its owner", actor=actor, at=at)
                s.commit()
            return self._summary(loaded)

    def resume(self, uid: str, creator_token: str | None, *, actor: str = OWNER,
               at: datetime | None = None) -> dict[str, Any]:
        """Restart a paused game's clock; its open deadlines move on by the pause's length."""
        at = at or utcnow()
        with self.session(write=True) as s:
            loaded = self._owned_active(s, uid, creator_token)
            if loaded.game.paused_at is None:
                raise BadRequest(f"game {uid} is not paused")
            with self._race_lost(s, uid, None):
                self._resume_in(s, loaded, actor=actor, position=None, at=at)
                s.commit()
            return self._summary(loaded)

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
        with self.session(write=True) as s:
            loaded = self._load(s, uid, fresh_seats=True)
            state = loaded.state
            if (loaded.game.status != ACTIVE or loaded.game.paused_at is not None
                    or state is None or loaded.decision_seq != decision_seq
                    or position not in loaded.to_act()):
                return {"acted": False, "seq": loaded.seq,
                        "paused": loaded.game.paused_at is not None}
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
                    inputs = self._play_for(s, loaded, position, mode, actor)
                if handover is not None:
                    self._hand_over_in(s, loaded, position, handover, actor=CLOCK)
                self._play_bots(s, loaded)
                self._settle(s, loaded)
                self._emit(s, GameEvent(
                    "timed_out", loaded.game, loaded.seats, before, loaded.seq, loaded, at=at,
                    actor=actor, position=position,
                    detail={"mode": mode, "inputs": inputs, "decision_seq": decision_seq,
                            "handover": handover}))
                s.commit()
            self._remember(loaded)
            self._seat_rows.pop(loaded.game_id, None)  # missed deadlines, bank, computer seat
            return {"acted": True, "mode": mode, "inputs": inputs, "handover": handover,
                    "seq": loaded.seq}

    def _play_for(self, s: Session, loaded: Loaded, position: int, mode: str,
                  actor: str) -> list[str]:
        """Answer the seat's pending decision, and the rest of the same turn if it is one."""
        rules = loaded.rules
        if rules.simultaneous(loaded.state):
            return [self._seal(s, loaded, position,
                               rules.timeout_move(loaded.state, mode, position), actor)]
        first = rules.pending(loaded.state) or {}
        inputs: list[str] = []
        for _ in range(MAX_BOT_MOVES):
            pending = rules.pending(loaded.state) or {}
            if loaded.to_act() != [position] or (
                inputs and not rules.same_turn(first, pending)
            ):
                break
            choice = rules.timeout_move(loaded.state, mode)
            self._append(s, loaded, position, choice, rules.apply(loaded.state, choice),
                         actor=actor)
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

    def _hand_over_in(self, s: Session, loaded: Loaded, position: int, to: str, *,
                      actor: str) -> None:
        """The computer takes the seat (``to`` is "computer", or "invite" when the owner is to
        invite someone new, the computer playing meanwhile); a note in the log says so."""
        seat = loaded.seat(position)
        seat.is_bot = True
        s.add(seat)
        self._append(s, loaded, position, f"{HANDOVER} {to}", [], kind=HANDOVER, actor=actor)

    def rollback(self, uid: str, to: int, *, actor: str = ADMIN) -> dict[str, Any]:
        """Take the game back to the state after log entry ``to``: a ``rollback`` entry is
        appended (the log stays append-only and the entries rolled back stay in it), a
        finished game runs again, and the decision pending then is asked anew. The dice are
        the seeded ones: the same inputs roll the same again."""
        with self.session(write=True) as s:
            loaded = self._load(s, uid, fresh_seats=True)
            game = loaded.game
            if game.status not in (ACTIVE, FINISHED) or loaded.state is None:
                raise NotPlaying(f"game {uid} is {game.status}: there is nothing to roll back")
            if not 0 <= to < loaded.seq:
                raise BadRequest(f"roll back to an entry from 0 to {loaded.seq - 1} "
                                 f"(the game has {loaded.seq})")
            before = loaded.seq
            with self._race_lost(s, uid, None):
                loaded.state, _ = self._rebuild(s, game, loaded.rules, to)
                self._append(s, loaded, None, f"{ROLLBACK} {to}", [], kind=ROLLBACK,
                             actor=actor)
                if game.status == FINISHED:
                    game.status, game.winner, game.finished_at = ACTIVE, None, None
                    s.add(game)
                if game.paused_at is None:
                    self._play_bots(s, loaded)
                self._settle(s, loaded)
                self._emit(s, GameEvent("rolled_back", game, loaded.seats, before, loaded.seq,
                                        loaded, actor=actor, detail={"to": to}))
                s.commit()
            self._remember(loaded)
            return self._summary(loaded)

    def replace_seat(self, uid: str, creator_token: str | None, position: int,
                     email: str | None, *,
                     idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """Give a seat of a running game to someone new (an invitation to ``email``; the
        computer plays the seat until it is accepted) or to the computer (``email`` None).
        ``creator_token`` None is an admin acting."""
        if email is not None:
            email = email.strip().lower()
            if not is_address(email):
                raise BadRequest(f"'{email}' is not an e-mail address")
        actor = ADMIN if creator_token is None else OWNER
        with self.session(write=True) as s:
            loaded = self._owned_active(s, uid, creator_token)
            seat = loaded.seat(position)
            before = loaded.seq
            invite = None
            with self._race_lost(s, uid, position):
                if email is None:
                    if seat.is_bot and seat.invite_token_hash is None:
                        raise BadRequest(f"the computer already plays seat {position}")
                    seat.invite_token_hash = None
                    self._hand_over_in(s, loaded, position, "computer", actor=actor)
                else:
                    invite = new_token()
                    seat.email = email
                    seat.invite_token_hash = token_hash(invite)
                    self._hand_over_in(s, loaded, position, "invite", actor=actor)
                self._revoke_tokens(s, seat)
                seat.secret = secrets.token_hex(32)  # the old player's links stop working
                seat.missed_deadlines = 0
                if loaded.game.paused_at is None:  # else the computer plays on resume
                    self._play_bots(s, loaded)
                self._settle(s, loaded)
                invitations = [] if invite is None else [
                    {"position": position, "email": email, "invite_token": invite}]
                self._emit(s, GameEvent("replaced", loaded.game, loaded.seats, before,
                                        loaded.seq, loaded, invitations=invitations,
                                        actor=actor, position=position))
                result: dict[str, Any] = {"game": uid, "position": position, "seq": loaded.seq}
                if invite is not None:
                    result |= {"email": email, "invite_token": invite}
                _record(s, idempotency, result)
                s.commit()
            self._seat_rows.pop(loaded.game_id, None)
            return result

    @staticmethod
    def _revoke_tokens(s: Session, seat: Seat) -> None:
        for row in s.exec(select(ApiToken).where(ApiToken.seat_id == seat.id,
                                                 col(ApiToken.revoked_at).is_(None))).all():
            row.revoked_at = utcnow()
            s.add(row)

    def abandon(self, uid: str, creator_token: str) -> dict[str, Any]:
        with self.session(write=True) as s:
            game = self._creator_game(s, uid, creator_token)
            if game.status in (FINISHED, ABANDONED):
                raise NotPlaying(f"game {uid} has already {game.status}")
            game.status = ABANDONED
            game.finished_at = utcnow()
            s.add(game)
            self._emit(s, GameEvent("abandoned", game, self._seats(s, game)))
            s.commit()
            return {"game": uid, "status": ABANDONED}

    # ------------------------------------------------------------------ moves

    def submit(self, uid: str, position: int, expected_seq: int, text: str) -> dict[str, Any]:
        """Apply a seat's submission answering the decision after ``expected_seq`` moves."""
        if not isinstance(text, str) or not text.strip():
            raise BadRequest("the input is empty")
        if len(text) > MAX_INPUT:
            raise BadRequest(f"the input is longer than {MAX_INPUT} characters")
        with self.session(write=True) as s:
            loaded = self._load(s, uid)
            rules = loaded.rules
            try:
                norm = rules.normalise(text)
            except MoveRejected as exc:
                raise IllegalMove(exc.message, legal=self._legal_for(loaded, position)) from None
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
                raise Forbidden(f"the computer plays seat {position} now: its player no longer "
                                "moves for it", words=(COMPUTER_PLAYS_SEAT, {}),
                                **self._state_body(loaded, position))
            if rules.simultaneous(loaded.state):
                return self._submit_sealed(s, uid, position, expected_seq, text, norm)
            before = loaded.seq
            with self._race_lost(s, uid, position):
                self._lift_pause_for(s, loaded, position)
                try:
                    outcomes = rules.apply(loaded.state, norm, position)
                except MoveRejected as exc:
                    raise IllegalMove(exc.message, words=exc.words, legal=exc.legal,
                                      index=exc.index) from None
                self._append(s, loaded, position, norm, outcomes)
                self._play_bots(s, loaded)
                self._settle(s, loaded)
                self._emit(s, GameEvent("moved", loaded.game, loaded.seats, before,
                                        loaded.seq, loaded, position=position))
                s.commit()
            self._remember(loaded)
            return {"applied": True, **self._state_body(loaded, position)}

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
        self._remember(loaded)
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
        elif answer is None or answer.seat != position or answer.input != norm:
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
        names = ", ".join(f"seat {p} ({loaded.seat(p).player_name})" for p in to_act)
        return f"it is not your decision: waiting for {names}"

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
        entry = Move(game_id=loaded.game_id, seq=seq, seat=position, kind=kind, actor=actor,
                     input=norm, outcomes=outcomes, created_at=now,
                     prev_hash=loaded.head_hash, hash=digest)
        s.add(entry)
        s.flush()
        loaded.appended.append(entry)
        loaded.seq = seq
        loaded.head_hash = digest
        if kind in STATE_KINDS:
            loaded.decision_seq = seq
        every = max(1, self.settings.snapshot_every)
        if seq % every == 0:
            s.add(Snapshot(game_id=loaded.game_id, seq=seq, state=loaded.rules.dump(loaded.state)))

    def _play_bots(self, s: Session, loaded: Loaded) -> None:
        """Let the computer answer every decision that belongs to a computer seat."""
        bots = {seat.position for seat in loaded.seats if seat.is_bot}
        rules = loaded.rules
        for _ in range(MAX_BOT_MOVES):
            to_act = loaded.to_act()
            if to_act and rules.simultaneous(loaded.state):
                mine = [p for p in to_act if p in bots]
                for position in mine:
                    self._seal(s, loaded, position, rules.bot_move(loaded.state, position),
                               COMPUTER)
                if not mine:
                    return
                continue
            if not to_act or not set(to_act) <= bots:
                return
            choice = rules.bot_move(loaded.state)
            self._append(s, loaded, to_act[0], choice, rules.apply(loaded.state, choice),
                         actor=COMPUTER)

    def _settle(self, s: Session, loaded: Loaded) -> None:
        winners = loaded.rules.winners(loaded.state)
        if winners is not None and loaded.game.status == ACTIVE:
            loaded.game.status = FINISHED
            loaded.game.finished_at = utcnow()
            loaded.game.winner = ",".join(winners)
            s.add(loaded.game)

    # ------------------------------------------------------------------ reading

    def _rules(self, name: str) -> Ruleset:
        try:
            return ruleset(name)
        except SetupError as exc:
            raise BadRequest(str(exc)) from None

    def _game(self, s: Session, uid: str) -> Game:
        return find_game(s, uid)

    def _creator_game(self, s: Session, uid: str, creator_token: str) -> Game:
        game = self._game(s, uid)
        if not secrets.compare_digest(game.creator_token_hash, token_hash(creator_token or "")):
            raise WrongCreatorToken("only the game's creator (with the creator token) may do "
                                    "this")
        return game

    def _seats(self, s: Session, game: Game) -> list[Seat]:
        return list(s.exec(_SEATS, params={"game_id": game.id}).all())

    def _load(
        self, s: Session, uid: str, upto: int | None = None, *, fresh_seats: bool = False
    ) -> Loaded:
        """Read a game and rebuild its state after its last move (or move ``upto``).

        The state comes from this process's cache when it holds the same move count, else from
        the latest snapshot and the moves after it. The move count is read from the database
        every time, so a cached state is never stale.
        """
        game, head_seq, bots, hooks = self._game_and_head(s, uid)
        seats = self._seats_of(s, game, (game.status, bots, head_seq), fresh=fresh_seats)
        rules = self._rules(game.ruleset)
        if game.initial_state is None:
            return Loaded(game, seats, rules, None, 0, "", webhooks=hooks)
        assert game.id is not None
        seq = head_seq if upto is None else max(0, min(head_seq, upto))
        cached = self._states.get(game.id)
        if cached is not None and cached.seq == seq:
            return self._with_sealed(s, Loaded(game, seats, rules, rules.load(cached.state), seq,
                                                cached.head_hash, cached.decision_seq,
                                                webhooks=hooks))
        state, moves = self._rebuild(s, game, rules, seq)
        if seq == 0:
            head_hash = genesis_hash(game.initial_state)
        elif moves:
            head_hash = moves[-1].hash
        else:
            head_hash = s.exec(
                select(Move.hash).where(Move.game_id == game.id, Move.seq == seq)
            ).one()
        loaded = Loaded(game, seats, rules, state, seq, head_hash,
                        self._decision_seq(s, game.id, seq, moves), webhooks=hooks)
        if upto is None:
            self._remember(loaded)
        return self._with_sealed(s, loaded)

    @staticmethod
    def _with_sealed(s: Session, loaded: Loaded) -> Loaded:
        """Read the answers sealed so far when the pending decision is a simultaneous one (one
        indexed query; none for a game that never has such decisions)."""
        if loaded.state is None or not loaded.rules.simultaneous(loaded.state):
            return loaded
        rows = s.exec(select(SealedOrder).where(
            SealedOrder.game_id == loaded.game_id,
            SealedOrder.decision_seq == loaded.decision_seq)).all()
        loaded.sealed = {row.seat: row.input for row in rows}
        return loaded

    def _rebuild(self, s: Session, game: Game, rules: Ruleset,
                 seq: int) -> tuple[Any, list[Move]]:
        """The engine state after entry ``seq``, from the latest snapshot at or before it and
        the entries after that (returned too); a rollback entry rebuilds the state it names."""
        assert game.id is not None and game.initial_state is not None
        snap = s.exec(
            select(Snapshot)
            .where(Snapshot.game_id == game.id, Snapshot.seq <= seq)
            .order_by(col(Snapshot.seq).desc())
            .limit(1)
        ).first()
        base_seq = snap.seq if snap is not None else 0
        state = rules.load(snap.state if snap is not None else game.initial_state)
        moves = list(s.exec(
            select(Move)
            .where(Move.game_id == game.id, Move.seq > base_seq, Move.seq <= seq)
            .order_by(col(Move.seq))
        ).all())
        for move in moves:
            if move.kind == MOVE:
                rules.apply(state, move.input)
            elif move.kind == ROLLBACK:
                state, _ = self._rebuild(s, game, rules, rollback_target(move.input, move.seq))
        return state, moves

    @staticmethod
    def _decision_seq(s: Session, game_id: int, seq: int, moves: Any) -> int:
        """The last entry at or before ``seq`` that changed the state (a move or a rollback; 0
        if none): where the pending decision opened."""
        for move in reversed(moves):
            if move.kind in STATE_KINDS:
                return int(move.seq)
        found = s.exec(
            select(func.max(Move.seq)).where(
                Move.game_id == game_id, Move.seq <= seq, col(Move.kind).in_(STATE_KINDS)
            )
        ).one()
        return int(found or 0)

    def forget_seats(self, uid: str) -> None:
        """Drop this process's copy of a game's seats (after a change made outside commands)."""
        with self.session() as s:
            game = self._game(s, uid)
        if game.id is not None:
            self._seat_rows.pop(game.id, None)

    def load(self, s: Session, uid: str, upto: int | None = None) -> Loaded:
        """A game's rows and its state after its last move (or move ``upto``), read in the
        caller's session: for modules that render from a game (mail) inside their own reads."""
        return self._load(s, uid, upto)

    def seats(self, s: Session, game: Game) -> list[Seat]:
        """A game's seats in seat order, read in the caller's session."""
        return self._seats(s, game)

    def _game_and_head(self, s: Session, uid: str) -> tuple[Game, int, int, int]:
        """The game row, how many moves its log holds, how many seats the computer plays and
        how many webhooks it has, in one query."""
        if not isinstance(uid, str) or not re.fullmatch(r"[0-9a-f]{32}", uid):
            raise NotFound(f"no game '{uid}'")
        row = s.exec(_GAME_AND_HEAD, params={"uid": uid}).first()
        if row is None:
            raise NotFound(f"no game '{uid}'")
        return row[0], int(row[1]), int(row[2]), int(row[3])

    def _seats_of(self, s: Session, game: Game, key: tuple[str, int, int], *,
                  fresh: bool) -> list[Seat]:
        """The game's seats; reads reuse this process's copy while the game's status, its
        computer seats and its log length are unchanged (``key``: seats change before the
        start, and with log entries: a time bank, a missed deadline, a resignation).
        Commands that change seats ask for ``fresh`` rows of their own session. A copy read
        by a transaction that then failed (the database went away during its flush) is read
        again: that rollback expired its rows, which cannot be refreshed outside their
        session."""
        assert game.id is not None
        cached = self._seat_rows.get(game.id)
        if (not fresh and cached is not None and cached[0] == key
                and not any(inspect(seat).expired_attributes for seat in cached[1])):
            return cached[1]
        seats = self._seats(s, game)
        if not fresh:
            self._seat_rows[game.id] = (key, seats)
            if len(self._seat_rows) > STATE_CACHE_SIZE:
                self._seat_rows.clear()
        return seats

    def _remember(self, loaded: Loaded) -> None:
        """Keep the state after a committed (or freshly loaded) move for the next request."""
        if loaded.state is None:
            return
        states = self._states
        states[loaded.game_id] = CachedState(
            loaded.seq, loaded.rules.dump(loaded.state), loaded.head_hash, loaded.decision_seq
        )
        states.move_to_end(loaded.game_id)
        while len(states) > STATE_CACHE_SIZE:
            states.popitem(last=False)

    def _legal_for(self, loaded: Loaded, position: int | None) -> list[str]:
        if loaded.state is None or position not in loaded.to_act():
            return []
        return loaded.rules.options(loaded.state, position)

    def _summary(self, loaded: Loaded) -> dict[str, Any]:
        game = loaded.game
        to_act = loaded.to_act() if loaded.state is not None else []
        return {
            "game": game.uid,
            "name": game.name,
            "ruleset": game.ruleset,
            "variant": game.variant,
            "circuits": [c if isinstance(c, str) else c.get("name") for c in game.circuits],
            "status": game.status,
            "seq": loaded.seq,
            "decision_seq": loaded.decision_seq,
            "paused": game.paused_at is not None,
            "pause_reason": game.pause_reason,
            "to_act": to_act,
            "sealed": sorted(loaded.sealed),
            "winner": game.winner,
            "fairness": fairness_summary(game, loaded.seats),
            "seats": [
                {
                    "position": seat.position,
                    "name": seat.player_name,
                    "titans": seat.titans,
                    "team": seat.team,
                    "bot": seat.is_bot,
                    "accepted": seat.accepted_at is not None,
                    "resigned": seat.resigned_at is not None,
                    "missed_deadlines": seat.missed_deadlines,
                    "bank_seconds": seat.bank_seconds,
                }
                for seat in loaded.seats
            ],
        }

    def _state_body(
        self, loaded: Loaded, position: int | None, spectator: bool = False
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"game": self._summary(loaded), "seq": loaded.seq,
                                "decision_seq": loaded.decision_seq, "you": position}
        if loaded.state is not None:
            body["view"] = loaded.view(position, spectator)
        if position is not None and position in loaded.sealed:
            body["sealed"] = loaded.sealed[position]
        return body

    def state(self, uid: str, position: int | None) -> dict[str, Any]:
        """A seat's view of the game (a spectator's when ``position`` is None)."""
        with self.session() as s:
            loaded = self._load(s, uid)
            if position is None:
                self._check_spectators(loaded.game)
            return self._state_body(loaded, position)

    @staticmethod
    def _check_spectators(game: Game) -> None:
        if not game.settings.get("spectators", True):
            raise Forbidden("this game has no spectators: only its players may look at it")

    def ensure_exists(self, uid: str) -> None:
        """Raise NotFound unless game ``uid`` exists."""
        with self.session() as s:
            self._game(s, uid)

    def preview(self, uid: str, position: int, option: str) -> dict[str, Any] | None:
        """The spectator view after ``position`` answers with ``option``, when that is known in
        advance: None when the option involves chance (a roll, a shuffle, a stolen card), so
        that no preview reveals a random outcome before the player commits.

        Raises IllegalMove when the option is not legal for that seat now.
        """
        with self.session() as s:
            loaded = self._load(s, uid)
            rules = loaded.rules
            if loaded.state is None or position not in loaded.to_act():
                raise IllegalMove("this decision is not yours", legal=[])
            if rules.simultaneous(loaded.state):
                return None  # an answer sealed until all are in shows nothing beforehand
            trial = rules.load(rules.dump(loaded.state))
            try:
                outcomes = rules.apply(trial, option, position)
            except MoveRejected as exc:
                raise IllegalMove(exc.message, words=exc.words, legal=exc.legal,
                                  index=exc.index) from None
            if any(outcomes):
                return None
            return rules.view(trial, None, True)

    def link_seat(self, uid: str, position: int) -> LinkSeat:
        """The seat ``position`` of game ``uid`` with its link secret (read fresh, not cached);
        raises NotFound for an unknown game or seat."""
        with self.session() as s:
            game = self._game(s, uid)
            seat = s.exec(
                select(Seat).where(Seat.game_id == game.id, Seat.position == position)
            ).first()
            if seat is None:
                raise NotFound(f"game {uid} has no seat {position}")
            return LinkSeat(
                game=game.uid,
                position=seat.position,
                secret=seat.secret,
                language=seat.language,
                name=seat.player_name,
                titans=list(seat.titans),
                status=game.status,
                game_name=game.name,
                circuits=list(game.circuits),
                ruleset=game.ruleset,
            )

    def move_after(self, uid: str, seq: int) -> dict[str, Any] | None:
        """The first engine move after log entry ``seq`` (``seq``, ``seat``, ``input``,
        ``created_at``...): the answer to the decision that opened there; None if none yet."""
        with self.session() as s:
            game = self._game(s, uid)
            assert game.id is not None
            move = s.exec(
                select(Move)
                .where(Move.game_id == game.id, Move.seq > seq, col(Move.kind).in_(STATE_KINDS))
                .order_by(col(Move.seq))
                .limit(1)
            ).first()
            if move is None:
                return None
            return {k: v for k, v in _move_json(move).items() if k != "outcomes"}

    def options(self, uid: str, position: int) -> dict[str, Any]:
        with self.session() as s:
            loaded = self._load(s, uid)
            pending = loaded.rules.pending(loaded.state) if loaded.state is not None else None
            mine = loaded.state is not None and position in loaded.to_act()
            return {
                "seq": loaded.seq,
                "yours": mine,
                "pending": pending if mine else _without_options(pending),
                "options": loaded.rules.options(loaded.state, position) if mine else [],
            }

    def log(self, uid: str, position: int | None = None) -> dict[str, Any]:
        """The move log as players see it: dice are public once rolled, hidden cards are not."""
        with self.session() as s:
            game = self._game(s, uid)
            if position is None:
                self._check_spectators(game)
            moves = s.exec(
                select(Move).where(Move.game_id == game.id).order_by(col(Move.seq))
            ).all()
            rules = self._rules(game.ruleset)
            return {
                "game": uid,
                "moves": [
                    _move_json(m) | {
                        "input": m.input if m.seat == position and position is not None
                        else rules.public_input(m.input),
                        "outcomes": rules.redact_outcomes(m.outcomes),
                    }
                    for m in moves
                ],
            }

    def my_games(self, email: str) -> list[dict[str, Any]]:
        with self.session() as s:
            rows = s.exec(
                select(Game, Seat)
                .join(Seat, col(Seat.game_id) == col(Game.id))
                .where(Seat.email == email.lower())
                .order_by(col(Game.created_at).desc())
            ).all()
            result = []
            for game, seat in rows:
                seq = s.exec(
                    select(func.count()).select_from(Move).where(Move.game_id == game.id)
                ).one()
                result.append(
                    {
                        "game": game.uid,
                        "name": game.name,
                        "status": game.status,
                        "variant": game.variant,
                        "position": seat.position,
                        "seq": seq,
                        "winner": game.winner,
                    }
                )
            return result

    def seat_for_token(self, token: str) -> tuple[str, int, str]:
        """(game uid, seat position, email) of a valid API token.

        Read from the database on every request, never cached: a token revoked by a seat
        replacement in one process must be refused at once by every other process too. It is
        one lookup by the token's unique hash, a few columns and no ORM objects (see
        bench/api.py for what it costs).
        """
        with self.session() as s:
            row = s.exec(_TOKEN_SEAT, params={"digest": token_hash(token)}).first()
        if row is None or row[3] is not None:
            raise Unauthorized("the API token is unknown or revoked")
        return row[0], row[1], row[2]

    # ------------------------------------------------------------------ admin

    def state_at(self, uid: str, seq: int) -> dict[str, Any]:
        """The full view after ``seq`` moves, rebuilt from the log."""
        with self.session() as s:
            loaded = self._load(s, uid, upto=seq)
            if seq < 0 or seq > loaded.seq:
                raise NotFound(f"game {uid} has no move {seq} (it has {loaded.seq})")
            return self._state_body(loaded, None) | {
                "view": loaded.rules.view(loaded.state, None, False)
                if loaded.state is not None
                else None
            }

    def replay(self, uid: str) -> dict[str, Any]:
        """Every move with the full view after it, for the admin replay."""
        with self.session() as s:
            game = self._game(s, uid)
            if game.initial_state is None:
                return {"game": uid, "steps": []}
            rules = self._rules(game.ruleset)
            moves = s.exec(
                select(Move).where(Move.game_id == game.id).order_by(col(Move.seq))
            ).all()
            replay = LogReplay(rules, game.initial_state, [(m.kind, m.input) for m in moves])
            steps = [{"seq": 0, "move": None, "view": rules.view(replay.state, None, False)}]
            for move in moves:
                replay.step(move.seq, move.kind, move.input)
                steps.append(
                    {
                        "seq": move.seq,
                        "move": _move_json(move),
                        "view": rules.view(replay.state, None, False),
                    }
                )
            return {"game": uid, "steps": steps}

    def fairness(self, uid: str, position: int | None) -> dict[str, Any]:
        """The game's fairness record: the commitment while it runs; once it is over, all that
        recomputing its deal and every random outcome of its log needs (the published secret,
        the seats' contributions and set-up, the log with every outcome)."""
        with self.session() as s:
            game = self._game(s, uid)
            if position is None:
                self._check_spectators(game)
            seats = self._seats(s, game)
            record: dict[str, Any] = {
                "format": fairness.RECORD_FORMAT, "game": game.uid, "ruleset": game.ruleset,
                "engine_version": game.engine_version, "variant": game.variant,
                "status": game.status,
                **fairness_summary(game, seats),
            }
            if record["published"] and game.initial_state is not None:
                moves = s.exec(
                    select(Move).where(Move.game_id == game.id).order_by(col(Move.seq))
                ).all()
                record |= {
                    "circuits": game.circuits,
                    "seats": seat_setups_of(game, seats),
                    "moves": [{"seq": m.seq, "kind": m.kind, "input": m.input,
                               "outcomes": m.outcomes} for m in moves],
                }
            return record

    def export(self, uid: str) -> dict[str, Any]:
        with self.session() as s:
            game = self._game(s, uid)
            seats = self._seats(s, game)
            moves = s.exec(
                select(Move).where(Move.game_id == game.id).order_by(col(Move.seq))
            ).all()
            return {
                "format": EXPORT_FORMAT,
                "version": 1,
                "game": {
                    "uid": game.uid,
                    "name": game.name,
                    "ruleset": game.ruleset,
                    "engine_version": game.engine_version,
                    "variant": game.variant,
                    "circuits": game.circuits,
                    "settings": game.settings,
                    "status": game.status,
                    "seed": game.seed,
                    "rng_scheme": game.rng_scheme,
                    "dealing_secret": game.dealing_secret,
                    "dealing_commitment": game.dealing_commitment,
                    "seed_chosen": game.seed_chosen,
                    "seat_setups": game.seat_setups,
                    "initial_state": game.initial_state,
                    "winner": game.winner,
                    "created_at": _iso(game.created_at),
                    "started_at": _iso(game.started_at),
                    "finished_at": _iso(game.finished_at),
                },
                "seats": [
                    {
                        "position": seat.position,
                        "name": seat.player_name,
                        "email": seat.email,
                        "titans": seat.titans,
                        "team": seat.team,
                        "language": seat.language,
                        "notify": seat.notify,
                        "bot": seat.is_bot,
                        "accepted": seat.accepted_at is not None,
                        "resigned": seat.resigned_at is not None,
                        "contribution": seat.contribution,
                    }
                    for seat in seats
                ],
                "moves": [
                    _move_json(m) | {"prev_hash": m.prev_hash, "hash": m.hash} for m in moves
                ],
                "owner_email": game.owner_email,
                "chat": [
                    {"seat": m.seat, "created_at": timestamp(m.created_at), "text": m.text}
                    for m in s.exec(select(ChatMessage).where(ChatMessage.game_id == game.id)
                                    .order_by(col(ChatMessage.id))).all()
                ],
            }

    def import_game(self, data: dict[str, Any], *,
                    idempotency: AnswerRecorder | None = None) -> dict[str, Any]:
        """Recreate an exported game (a new id and new tokens); it must replay identically.

        Every field is checked (type, size, known values) before anything is stored, so a
        damaged or hand-made export is refused with what is wrong, never half-stored."""
        if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
            raise BadRequest(f"not a {EXPORT_FORMAT} export")
        try:
            meta, seat_rows, log = read_export(data)
            chat = read_chat_export(data, {row["position"] for row in seat_rows})
            if meta["initial_state"] is None and log:
                raise ValueError("a game that never started has no moves")
            problems = [] if meta["initial_state"] is None else self._verify_rows(
                meta["ruleset"], meta["initial_state"], log
            )
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise BadRequest(f"the export is incomplete or malformed: {exc}") from None
        if problems:
            raise BadRequest("the export does not replay: " + "; ".join(problems[:5]))
        creator_token = new_token()
        with self.session(write=True) as s:
            game = Game(uid=uuid.uuid4().hex, creator_token_hash=token_hash(creator_token),
                        **meta)
            s.add(game)
            s.flush()
            assert game.id is not None
            for row in seat_rows:
                s.add(Seat(game_id=game.id, secret=secrets.token_hex(32), **row))
            for entry in log:
                s.add(Move(game_id=game.id, **entry._asdict()))
            for message in chat:  # (in the export's order: their ids keep it)
                s.add(ChatMessage(game_id=game.id, **message))
                s.flush()
            imported = {"game": game.uid, "creator_token": creator_token}
            _record(s, idempotency, imported)
            s.commit()
            return imported

    def verify_all(self) -> dict[str, list[str]]:
        """Replay every started game; map each game that disagrees to what is wrong."""
        report: dict[str, list[str]] = {}
        for uid in self.started_games():
            problems = self.verify(uid)
            if problems:
                report[uid] = problems
        return report

    def started_games(self) -> list[str]:
        """The ids of every game that has started (so has a log to verify), oldest first."""
        with self.session() as s:
            return list(s.exec(
                select(Game.uid).where(col(Game.started_at).is_not(None)).order_by(col(Game.id))
            ).all())

    def verify(self, uid: str) -> list[str]:
        """Replay game ``uid`` from its log: the sequence, the hash chain, the recorded dice
        and the cached snapshots. What is wrong, or nothing (also for a game not started)."""
        with self.session() as s:
            game = self._game(s, uid)
            if game.initial_state is None:  # never started: nothing to replay
                return []
            moves = s.exec(
                select(Move).where(Move.game_id == game.id).order_by(col(Move.seq))
            ).all()
            problems = self._verify_rows(
                game.ruleset,
                game.initial_state,
                [
                    LogRow(m.seq, m.seat, m.input, m.outcomes, m.created_at, m.prev_hash,
                           m.hash, m.kind, m.actor)
                    for m in moves
                ],
            )
            return problems + self._verify_snapshots(s, game)

    def _verify_rows(
        self,
        rules_name: str,
        initial: dict[str, Any],
        rows: list[LogRow],
    ) -> list[str]:
        rules = self._rules(rules_name)
        problems: list[str] = []
        replay = LogReplay(rules, initial, [(row.kind, row.input) for row in rows])
        prev = genesis_hash(initial)
        for index, row in enumerate(rows):
            seq, seat, text, outcomes, created_at, prev_hash, digest, kind, actor = row
            if seq != index + 1:
                problems.append(f"move {seq}: expected sequence number {index + 1}")
                break
            if prev_hash != prev:
                problems.append(f"move {seq}: its previous hash does not match move {seq - 1}")
            if move_hash(prev_hash, seq, seat, text, outcomes, created_at, kind,
                         actor) != digest:
                problems.append(f"move {seq}: its hash does not match its content")
            prev = digest
            if kind not in ENTRY_KINDS or actor not in ACTORS:
                problems.append(f"move {seq}: unknown kind '{kind}' or actor '{actor}'")
                continue
            try:
                produced = replay.step(seq, kind, text)
            except MoveRejected as exc:
                problems.append(f"move {seq} ('{text}') no longer applies: {exc.message}")
                break
            except ValueError as exc:
                problems.append(f"move {seq}: {exc}")
                break
            if produced is not None and produced != outcomes:
                problems.append(
                    f"move {seq}: recorded random outcomes {outcomes} "
                    f"but the replay produced {produced}"
                )
        return problems

    def _verify_snapshots(self, s: Session, game: Game) -> list[str]:
        problems: list[str] = []
        assert game.id is not None and game.initial_state is not None
        rules = self._rules(game.ruleset)
        snaps = {snap.seq: snap.state for snap in
                 s.exec(select(Snapshot).where(Snapshot.game_id == game.id)).all()}
        if not snaps:
            return problems
        moves = s.exec(select(Move).where(Move.game_id == game.id).order_by(col(Move.seq))).all()
        replay = LogReplay(rules, game.initial_state, [(m.kind, m.input) for m in moves])
        for move in moves:
            try:
                replay.step(move.seq, move.kind, move.input)
            except (MoveRejected, ValueError):
                return problems  # the log check reports it (later snapshots cannot be checked)
            if move.seq in snaps and rules.dump(replay.state) != snaps.pop(move.seq):
                problems.append(f"the snapshot at move {move.seq} differs from the replay")
        problems += [f"the snapshot at move {seq} has no log entry" for seq in sorted(snaps)]
        return problems


GAME_SETTINGS: dict[str, tuple[type, Any, Any]] = {
    "deadline_hours": (int, 0, 24 * 30),
    "reaction_hours": (int, 1, 24 * 30),
    "bank_hours": (int, 0, 24 * 30),
    "increment_hours": (int, 0, 24 * 7),
    "reminders": (list, None, None),
    "on_timeout": (str, (*TIMEOUT_ACTIONS, "default"), None),
    "max_missed": (int, 0, 50),
    "after_missed": (str, HANDOVERS, None),
    "spectators": (bool, None, None),
}
"""Per-game options: the clock (see app.clock.SETTINGS_HELP; "default" is the older name of the
"pass" timeout action) and spectator access."""


def check_game_settings(settings: Any) -> dict[str, Any]:
    if not isinstance(settings, dict):
        raise BadRequest("settings must be an object")
    unknown = sorted(set(settings) - set(GAME_SETTINGS))
    if unknown:
        raise BadRequest(f"unknown setting {', '.join(unknown)}; the settings are "
                         f"{', '.join(GAME_SETTINGS)}")
    for key, value in settings.items():
        kind, low, high = GAME_SETTINGS[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise BadRequest(f"setting {key} must be a {kind.__name__}")
        if kind is int and not low <= value <= high:
            raise BadRequest(f"setting {key} must be between {low} and {high}")
        if kind is str and value not in low:
            raise BadRequest(f"setting {key} must be one of {', '.join(low)}")
    checked = dict(settings)
    try:
        if "reminders" in checked:
            checked["reminders"] = check_reminders(checked["reminders"])
        clock = ClockSettings.of(checked)
    except ClockError as exc:
        raise BadRequest(str(exc)) from None
    if clock.deadline is not None and clock.reaction > clock.deadline:
        raise BadRequest("reaction_hours must not be longer than deadline_hours")
    return checked


def check_quiet(quiet: Any, timezone: Any) -> dict[str, str]:
    """A player's clock preferences (quiet hours and time zone), checked."""
    if quiet is not None and not isinstance(quiet, str):
        raise BadRequest("quiet hours must be text such as 22:00-08:00")
    if timezone is not None and not isinstance(timezone, str):
        raise BadRequest("the time zone must be a name such as Europe/Warsaw")
    try:
        Quiet.parse(quiet or None, timezone or None)
        if timezone:
            zone(timezone)
    except ClockError as exc:
        raise BadRequest(str(exc)) from None
    prefs: dict[str, str] = {}
    if quiet:
        prefs["quiet"] = quiet.replace(" ", "")
    if timezone:
        prefs["timezone"] = timezone
    return prefs


def rollback_target(text: str, seq: int) -> int:
    """The entry a ``rollback N`` entry at ``seq`` goes back to (ValueError if malformed)."""
    parts = text.split()
    if len(parts) != 2 or parts[0] != ROLLBACK or not parts[1].isdigit():
        raise ValueError(f"'{text}' is not 'rollback N'")
    target = int(parts[1])
    if not 0 <= target < seq:
        raise ValueError(f"rollback at entry {seq} to entry {target}: only earlier entries")
    return target


class LogReplay:
    """A log replayed entry by entry from its initial state: moves are applied, notes are
    skipped, and a ``rollback N`` entry goes back to the state after entry N (kept for it: the
    entries that rollbacks name are known in advance, from ``entries``)."""

    def __init__(self, rules: Ruleset, initial: dict[str, Any],
                 entries: list[tuple[str, str]]) -> None:
        self.rules = rules
        self.state = rules.load(initial)
        self._wanted: set[int] = set()
        for index, (kind, text) in enumerate(entries, start=1):
            if kind == ROLLBACK:
                with suppress(ValueError):  # a bad one is reported when it is reached
                    self._wanted.add(rollback_target(text, index))
        self._kept: dict[int, dict[str, Any]] = {}
        if 0 in self._wanted:
            self._kept[0] = rules.dump(self.state)

    def step(self, seq: int, kind: str, text: str) -> list[list[str]] | None:
        """Apply entry ``seq``; the random outcomes of a move, None for other entries.
        Raises MoveRejected for a move that does not apply, ValueError for a bad rollback."""
        produced = None
        if kind == MOVE:
            produced = self.rules.apply(self.state, text)
        elif kind == ROLLBACK:
            target = rollback_target(text, seq)
            self.state = self.rules.load(self._kept[target])
        if seq in self._wanted:
            self._kept[seq] = self.rules.dump(self.state)
        return produced


class LogRow(NamedTuple):
    """One log entry as verification reads it (from the database or from an export)."""

    seq: int
    seat: int | None
    input: str
    outcomes: Any
    created_at: datetime
    prev_hash: str
    hash: str
    kind: str
    actor: str


def read_export(data: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]],
                                                list[LogRow]]:
    """The game, seat and log rows of an export, every field checked: ValueError (or
    KeyError for a missing one) names the first that is wrong."""
    meta, seats, moves = data["game"], data["seats"], data["moves"]
    _typed(meta, dict, "game")
    _typed(seats, list, "seats")
    _typed(moves, list, "moves")
    status = meta["status"]
    if status not in GAME_STATUSES:
        raise ValueError(f"game.status must be one of {', '.join(GAME_STATUSES)}")
    game = {
        "name": _text(meta.get("name", ""), "game.name", 200),
        "ruleset": _text(meta["ruleset"], "game.ruleset", 40),
        "engine_version": _whole(meta["engine_version"], "game.engine_version"),
        "variant": _text(meta["variant"], "game.variant", 40),
        "circuits": _typed(meta["circuits"], list, "game.circuits"),
        "settings": _typed(meta.get("settings", {}), dict, "game.settings"),
        "status": status,
        "seed": _whole(meta["seed"], "game.seed"),
        **_dealing_of_export(meta),
        "initial_state": _typed(meta["initial_state"], dict, "game.initial_state", True),
        "winner": _text(meta.get("winner"), "game.winner", 40, True),
        "owner_email": _text(data.get("owner_email"), "owner_email", 254, True),
        "started_at": _moment(meta.get("started_at"), "game.started_at"),
        "finished_at": _moment(meta.get("finished_at"), "game.finished_at"),
    }
    seat_rows = [_seat_row_of(_typed(row, dict, "seats[]")) for row in seats]
    positions = [row["position"] for row in seat_rows]
    if len(set(positions)) != len(positions):
        raise ValueError("two seats have the same position")
    return game, seat_rows, [_log_row_of(_typed(row, dict, "moves[]")) for row in moves]


def read_chat_export(data: dict[str, Any], positions: set[int]) -> list[dict[str, Any]]:
    """The chat rows of an export (its optional ``chat`` list, oldest first), every field
    checked: a message's seat must be one of the game's (or null, the system's), its text 1 to
    :data:`MAX_CHAT_STORED` characters, its time given. An export made before exports carried
    the chat has none."""
    messages = _typed(data.get("chat", []), list, "chat")
    rows: list[dict[str, Any]] = []
    for item in messages:
        row = _typed(item, dict, "chat[]")
        for key in ("seat", "text", "created_at"):
            if key not in row:
                raise ValueError(f"chat[].{key} is missing")
        seat = None if row["seat"] is None else _whole(row["seat"], "chat[].seat")
        if seat is not None and seat not in positions:
            raise ValueError(f"chat[].seat {seat} is not a seat of the game")
        text = _text(row["text"], "chat[].text", MAX_CHAT_STORED)
        if not text.strip():
            raise ValueError("chat[].text is empty")
        created_at = _moment(row["created_at"], "chat[].created_at")
        if created_at is None:
            raise ValueError("chat[].created_at is empty")
        rows.append({"seat": seat, "text": text, "created_at": created_at})
    return rows


def _seat_row_of(row: dict[str, Any]) -> dict[str, Any]:
    position = _whole(row["position"], "seats[].position")
    if not 0 <= position < 6:
        raise ValueError("seats[].position must be 0 to 5")
    titans = _typed(row["titans"], list, "seats[].titans")
    for titan in titans:
        _text(titan, "seats[].titans[]", 40)
    return {
        "position": position,
        "player_name": _text(row["name"], "seats[].name", 100),
        "email": _text(row["email"], "seats[].email", 254),
        "titans": titans,
        "team": None if row["team"] is None else _whole(row["team"], "seats[].team"),
        "language": _text(row.get("language", "en"), "seats[].language", 5),
        "notify": _typed(row.get("notify", {}), dict, "seats[].notify"),
        "is_bot": _typed(row["bot"], bool, "seats[].bot"),
        "accepted_at": utcnow() if _typed(row["accepted"], bool, "seats[].accepted") else None,
        "resigned_at": utcnow() if _typed(row["resigned"], bool, "seats[].resigned") else None,
        "contribution": _text(row.get("contribution"), "seats[].contribution", 128, True),
    }


def _log_row_of(row: dict[str, Any]) -> LogRow:
    created_at = _moment(row["created_at"], "moves[].created_at")
    if created_at is None:
        raise ValueError("moves[].created_at is missing")
    return LogRow(
        seq=_whole(row["seq"], "moves[].seq"),
        seat=None if row["seat"] is None else _whole(row["seat"], "moves[].seat"),
        input=_text(row["input"], "moves[].input", MAX_INPUT),
        outcomes=_typed(row["outcomes"], list, "moves[].outcomes"),
        created_at=created_at,
        prev_hash=_text(row["prev_hash"], "moves[].prev_hash", 64),
        hash=_text(row["hash"], "moves[].hash", 64),
        kind=_text(row.get("kind", MOVE), "moves[].kind", 20),
        actor=_text(row.get("actor", PLAYER), "moves[].actor", 20),
    )


def _typed(value: Any, kind: type, what: str, optional: bool = False) -> Any:
    if (value is None and optional) or (isinstance(value, kind) and
                                         (kind is bool or not isinstance(value, bool))):
        return value
    raise ValueError(f"{what} must be {'a' if kind is not int else 'a whole'} {kind.__name__}")


def _whole(value: Any, what: str) -> int:
    number: int = _typed(value, int, what)
    if not -(2**63) <= number < 2**63:
        raise ValueError(f"{what} is out of range")
    return number


def _text(value: Any, what: str, longest: int, optional: bool = False) -> Any:
    text = _typed(value, str, what, optional)
    if text is not None and len(text) > longest:
        raise ValueError(f"{what} is longer than {longest} characters")
    character = None if text is None else unusable_character(text)
    if character is not None:
        raise ValueError(f"{what} holds {character}, which no text may hold")
    return text


def _moment(value: Any, what: str) -> datetime | None:
    text = _typed(value, str, what, True)
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{what} is not an ISO 8601 time: {text[:40]!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _new_dealing(seed: int | None) -> dict[str, Any]:
    """A new game's dealing columns: a fresh secret and its commitment, or the chosen seed."""
    if seed is not None:
        return {"seed": seed, "rng_scheme": SPLITMIX_SCHEME, "seed_chosen": True}
    secret = fairness.new_secret()
    return {"seed": 0, "rng_scheme": KEYED_SCHEME, "dealing_secret": secret.hex(),
            "dealing_commitment": fairness.commitment(secret)}


def _setup_json(setup: SeatSetup) -> dict[str, Any]:
    return {"position": setup.position, "titans": list(setup.titans), "team": setup.team,
            "anytime_windows": setup.anytime_windows}


def _dealing_of_export(meta: dict[str, Any]) -> dict[str, Any]:
    """The dealing columns of an exported game (an export made before fair dealing: the
    older generator from its seed)."""
    scheme = meta.get("rng_scheme", SPLITMIX_SCHEME)
    if scheme not in (SPLITMIX_SCHEME, KEYED_SCHEME):
        raise ValueError(f"game.rng_scheme must be {SPLITMIX_SCHEME} or {KEYED_SCHEME}")
    return {
        "rng_scheme": scheme,
        "dealing_secret": _text(meta.get("dealing_secret"), "game.dealing_secret", 64, True),
        "dealing_commitment": _text(meta.get("dealing_commitment"), "game.dealing_commitment",
                                    64, True),
        "seed_chosen": _typed(meta.get("seed_chosen", False), bool, "game.seed_chosen"),
        "seat_setups": _typed(meta.get("seat_setups"), list, "game.seat_setups", True),
    }


def game_over(game: Game) -> bool:
    return game.status in (FINISHED, ABANDONED)


def fairness_summary(game: Game, seats: list[Seat]) -> dict[str, Any]:
    """What every seat and spectator may know of the dealing: the commitment (and whether the
    admin chose the seed) while the game runs; the secret (or seed) and the seats'
    contributions once it is over."""
    summary: dict[str, Any] = {"scheme": game.rng_scheme, "commitment": game.dealing_commitment,
                               "seed_chosen": game.seed_chosen, "published": game_over(game)}
    if game_over(game) and game.initial_state is not None:
        if game.rng_scheme == KEYED_SCHEME:
            summary["secret"] = game.dealing_secret
        else:
            summary["seed"] = game.seed
        summary["contributions"] = [seat.contribution for seat in seats]
    return summary


def seat_setups_of(game: Game, seats: list[Seat]) -> list[dict[str, Any]]:
    """What each seat asked for at the start (a game started before fair dealing kept only
    what it was given, which deals the same: pieces are drawn from a stream of their own)."""
    if game.seat_setups is not None:
        return list(game.seat_setups)
    return [{"position": seat.position, "titans": list(seat.titans), "team": seat.team,
             "anytime_windows": bool(seat.notify.get("anytime_windows", False))}
            for seat in seats]


def pause_reason_timeout(position: int) -> str:
    """The reason a game paused on seat ``position``'s missed deadline (its answer resumes)."""
    return f"waiting for seat {position}, whose time ran out"


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


def _without_options(pending: dict[str, Any] | None) -> dict[str, Any] | None:
    if pending is None:
        return None
    return {k: v for k, v in pending.items() if k != "options"}


def _iso(moment: datetime | None) -> str | None:
    return timestamp(moment) if moment is not None else None


def _move_json(move: Move) -> dict[str, Any]:
    return {
        "seq": move.seq,
        "seat": move.seat,
        "kind": move.kind,
        "actor": move.actor,
        "input": move.input,
        "outcomes": move.outcomes,
        "created_at": timestamp(move.created_at),
    }
