"""What the service's parts pass between them and record: tokens and their hashes (the log's
hash chain is app/core/logchain.py's), a game as one command reads it (:class:`Loaded`), the events
listeners receive, and the published facts of a game's dealing."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, Protocol, TypeVar

from sqlmodel import Session, select

from app.core.logchain import head_digest, timestamp
from app.core.models import ABANDONED, FINISHED, PLAYER, Game, Move, Seat, utcnow
from app.games import DEFAULT_GAME
from app.games.base import Ruleset
from app.games.rng import KEYED_SCHEME

from .errors import NotFound


class AnswerRecorder(Protocol):
    """Writes a request's answer in the transaction of what the request changed: the claim of
    an ``Idempotency-Key`` (app/web/idempotency.py), so that a repeat of the request is answered
    the same and a crash cannot leave the change without its answer."""

    def record(self, s: Session, result: dict[str, Any]) -> None: ...


def record_answer(s: Session, idempotency: AnswerRecorder | None, result: dict[str, Any]) -> None:
    if idempotency is not None:
        idempotency.record(s, result)


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
    """Kind-specific facts: for "timed_out" the mode, the inputs played, the handover and the
    computer's level (normal in ``bot`` mode); for a normal or strong computer seat's move
    played by the worker its level; for "resumed" how long the game was paused."""


GameListener = Callable[[Session, GameEvent], None]


Listener = TypeVar("Listener", bound=GameListener)


class Entry(NamedTuple):
    """A log entry as a command appends it: the columns of :class:`~app.core.models.Move`, in a
    plain tuple (building the ORM instance cost more than the INSERT that writes it)."""

    game_id: int
    seq: int
    seat: int | None
    kind: str
    actor: str
    input: str
    outcomes: list[Any]
    created_at: datetime
    prev_hash: str
    hash: str


@dataclass(frozen=True)
class CachedState:
    """A game's engine state after entry ``seq`` as this process last saw it committed: the
    engine's own object, never handed out itself (each command gets a copy)."""

    seq: int
    state: Any
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
    appended: list[Entry] = field(default_factory=list)
    """The log entries this command appended (written without the ORM: listeners read them
    from here)."""
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

    def result(self, position: int | None = None) -> dict[str, Any] | None:
        """A finished game's ranking (:meth:`Ruleset.placings`): ``places``, every seat's
        ``position``, ``name``, ``bot``, ``pieces``, ``place`` (shared by seats the rules leave
        tied; None with a ``note`` saying why the rules give none) and score ``parts``, best
        first; ``you``, the entry of seat ``position`` (None for a spectator). None while the
        game runs and for an abandoned game."""
        if self.game.status != FINISHED or self.state is None:
            return None
        by_position = {seat.position: seat for seat in self.seats}
        pieces = {seat.position: self.rules.piece_names(seat.pieces) for seat in self.seats}
        places = [placing.to_json() | {"name": by_position[placing.position].player_name,
                                       "bot": by_position[placing.position].is_bot,
                                       "pieces": pieces[placing.position]}
                  for placing in self.rules.placings(self.state, pieces)
                  if placing.position in by_position]
        you = next((entry for entry in places if entry["position"] == position), None)
        return {"places": places, "you": you}

    @property
    def game_id(self) -> int:
        assert self.game.id is not None
        return self.game.id

    def seat(self, position: int) -> Seat:
        for seat in self.seats:
            if seat.position == position:
                return seat
        raise NotFound(f"game {self.game.uid} has no seat {position + 1}")


@dataclass(frozen=True)
class LinkSeat:
    """What a signed link's page needs of the seat it names (see :meth:`GameService.link_seat`).

    ``secret`` verifies the seat's links; ``pieces`` are the names of the seat's pieces
    (:meth:`~app.games.base.Ruleset.piece_names`); ``setup`` is the game's setup as stored
    (``Game.setup``: for drawing the board).
    """

    game: str
    position: int
    secret: str
    language: str
    name: str
    pieces: list[str]
    status: str
    game_name: str
    setup: dict[str, Any]
    ruleset: str = DEFAULT_GAME
    """The game's ruleset name: its UI words the link pages."""


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


def game_over(game: Game) -> bool:
    return game.status in (FINISHED, ABANDONED)


def fairness_summary(game: Game, seats: list[Seat], head: tuple[int, str] | None = None
                     ) -> dict[str, Any]:
    """What every seat and spectator may know of the dealing: the commitment and its version,
    whether the admin chose the seed, the rules version once the game started, and ``head``
    (the log's length and newest hash, as :func:`~app.core.logchain.head_digest` shows it, for a
    player's client to keep) while the game runs; the secret (and a chosen seed) and the
    seats' contributions once it is over."""
    summary: dict[str, Any] = {"scheme": game.rng_scheme, "commitment": game.dealing_commitment,
                               "commitment_version": game.commitment_version,
                               "seed_chosen": game.seed_chosen, "published": game_over(game)}
    if game.initial_state is not None:
        summary["engine_version"] = game.engine_version
    if head is not None and game.initial_state is not None:
        summary["log_head"] = {"seq": head[0], "digest": head_digest(head[1])}
    if game_over(game) and game.initial_state is not None:
        if game.rng_scheme == KEYED_SCHEME:
            summary["secret"] = game.dealing_secret
        if game.rng_scheme != KEYED_SCHEME or game.seed_chosen:
            summary["seed"] = game.seed
        summary["contributions"] = [seat.contribution for seat in seats]
    return summary


def iso_time(moment: datetime | None) -> str | None:
    return timestamp(moment) if moment is not None else None


def move_json(move: Move) -> dict[str, Any]:
    return {
        "seq": move.seq,
        "seat": move.seat,
        "kind": move.kind,
        "actor": move.actor,
        "input": move.input,
        "outcomes": move.outcomes,
        "created_at": timestamp(move.created_at),
    }

