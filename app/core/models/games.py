"""A game's tables: the game, its seats, its move log, sealed orders and snapshots, and the words
of a game's statuses, log entries and actors. The move log is the truth; everything else serves it.

``moves`` is append-only: the migrations install triggers that refuse UPDATE and DELETE on it,
and its primary key (game, sequence) is the concurrency control between racing submissions.
``snapshots`` is a cache of engine states that can always be rebuilt from the log.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy import false as sa_false
from sqlmodel import Field, SQLModel

from app.games.rng import SPLITMIX_SCHEME

from .base import utcnow

OPEN = "open"
ACTIVE = "active"
FINISHED = "finished"
ABANDONED = "abandoned"
GAME_STATUSES = (OPEN, ACTIVE, FINISHED, ABANDONED)

MOVE = "move"
RESIGN = "resign"
HANDOVER = "handover"
PAUSE = "pause"
RESUME = "resume"
ROLLBACK = "rollback"
ABANDON = "abandon"
ENTRY_KINDS = (MOVE, RESIGN, HANDOVER, PAUSE, RESUME, ROLLBACK, ABANDON)
"""Kinds of log entries: ``move`` is an input for the rules engine; ``rollback N`` (an admin's)
takes the game back to the state after entry N, the entries in between staying in the log; the
others are notes of what happened to the game (a resignation, a seat handed to someone else, a
pause, the owner abandoning a started game: its last entry) that the engine never sees, kept in
the same append-only log so that it tells the whole story."""
STATE_KINDS = (MOVE, ROLLBACK)
"""Entries that change the game state, so that a new decision opens after them."""

PLAYER = "player"
COMPUTER = "computer"
TIMEOUT = "timeout"
AWAY = "away"
OWNER = "owner"
ADMIN = "admin"
CLOCK = "clock"
ACTORS = (PLAYER, COMPUTER, TIMEOUT, AWAY, OWNER, ADMIN, CLOCK)
"""Who made a log entry: the seat's player, the computer playing a computer seat, the computer
acting on a passed deadline, the computer playing for a player away in computer mode, the game's
owner, an admin, or the clock (a pause on timeout, a handover after missed deadlines)."""
REACTIONS = "reactions"
"""The key of a seat's standing choice in its settings (``Seat.notify``)."""


class Game(SQLModel, table=True):
    __tablename__ = "games"

    id: int | None = Field(default=None, primary_key=True)
    uid: str = Field(sa_column=Column(String(32), nullable=False, unique=True, index=True))
    name: str = Field(default="", max_length=200)
    ruleset: str = Field(max_length=40)
    engine_version: int
    variant: str = Field(max_length=40)
    setup: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    """The game's setup in its own terms (the game's own JSON): see
    :meth:`app.games.base.Ruleset.check_setup`."""
    settings: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    status: str = Field(default=OPEN, max_length=20, index=True)
    seed: int = Field(sa_column=Column(BigInteger, nullable=False))
    """The admin's chosen seed (``seed_chosen``): since commitment version 2 the secret is derived
    from it (app/features/fairness/dealing.py); before, the older generator (``rng_scheme``
    splitmix64) dealt from it, as it dealt every game created before fair dealing."""
    rng_scheme: str = Field(
        default=SPLITMIX_SCHEME,
        sa_column=Column(String(20), nullable=False, server_default=SPLITMIX_SCHEME),
    )
    """How the game's chance is drawn: ``hmac-sha256`` from a secret and the seats'
    contributions, or ``splitmix64`` from ``seed`` (games created before fair dealing, and games
    an admin dealt from a chosen seed)."""
    dealing_secret: str | None = Field(default=None, max_length=64)
    """The server's 256-bit secret (hex): never shown to anyone until the game is over."""
    dealing_commitment: str | None = Field(default=None, max_length=64)
    """Shown to every seat from the start: SHA-256 of the secret and the game's facts
    (``commitment_version`` 2), or of the secret alone (1). Fixed once set: a database
    trigger refuses to change it, or any column it covers (migration 0019)."""
    commitment_version: int | None = Field(default=None)
    """How ``dealing_commitment`` was made (app/features/fairness/dealing.py): 2 for every game
    created since version 2, 1 before it, None for a game without a commitment (created before fair
    dealing)."""
    committed_uid: str | None = Field(default=None, max_length=32)
    """The game id inside a version 2 commitment: the game's own, or for a game imported from
    an export, the id of the game it was exported from (its players were shown that
    commitment)."""
    seed_chosen: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default=sa_false())
    )
    """The admin chose the seed: the deal was known before the game began, and seats are told."""
    seat_setups: list[Any] | None = Field(default=None, sa_column=Column(JSON))
    """What each seat asked for at the start (pieces, team, reaction windows): the set-up
    that the dealing is checked against once the game is over. Kept in the fields the
    fairness record has always had (the older fields of :data:`app.games.apiwords.OLDER_PIECES`,
    and ``anytime_windows``), so that records players downloaded still verify
    (app/features/fairness/records.py)."""
    initial_state: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    """The engine state the game started from (its genesis); the log replays from it."""
    creator_token_hash: str = Field(max_length=64)
    owner_email: str | None = Field(default=None, max_length=254)
    """Where the owner (creator) is told about the game's clock (a pause, a seat to replace)."""
    paused_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    """Set while the game is paused: its deadlines do not run (they shift on resume)."""
    pause_reason: str | None = Field(default=None, max_length=200)
    winner: str | None = Field(default=None, max_length=40)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    started_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    finished_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    rematch_of: int | None = Field(
        default=None,
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=True, unique=True, index=True),
    )
    """The finished game this one is the rematch of: unique, so a game has one rematch at most
    (app/features/rematch/rematches.py)."""


class Seat(SQLModel, table=True):
    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("game_id", "position"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=False, index=True)
    )
    position: int
    player_name: str = Field(default="", max_length=100)
    email: str = Field(default="", max_length=254, index=True)
    pieces: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    """The seat's pieces in its game's own terms (the game's own JSON): before the start what
    the seat asked for (empty: drawn at random), from the start what it plays."""
    language: str = Field(default="en", max_length=5)
    notify: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    """The player's own settings of the seat: ``mail``, ``quiet`` and ``timezone``,
    ``anytime_windows`` (public, part of the deal) and ``reactions`` (:data:`REACTIONS`,
    private: the standing choice that answers the seat's windows)."""
    secret: str = Field(max_length=64)
    """Per-seat secret mixed into the seat's signed links."""
    invite_token_hash: str | None = Field(default=None, max_length=64, index=True)
    accepted_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    is_bot: bool = False
    bot_level: str = Field(
        default="easy", sa_column=Column(String(10), nullable=False, server_default="easy")
    )
    """The level the computer plays the seat at while it plays it (one of
    :data:`app.games.base.BOT_LEVELS`): easy is played inside the move that hands it the turn,
    normal and strong by the worker (:mod:`app.features.clock.botturns`). The clock sets normal when
    it hands a seat over after too many missed deadlines."""
    bank_seconds: int | None = None
    """What is left of the seat's time bank (None: the game has no bank)."""
    missed_deadlines: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )
    resigned_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    contribution: str | None = Field(default=None, max_length=128)
    """The seat's own randomness (hex), given when the seat was taken after the commitment
    was shown, mixed into the game's key so that the server alone cannot choose the deal."""
    declined_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    """When the player of a rematch's seat, kept for them, said no to playing again
    (app/features/rematch/rematches.py): the rematch waits for the others' choice."""
    invited_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    """When the seat's pending invitation was made (its token's hash is ``invite_token_hash``):
    an invitation never accepted is purged after the retention time (app/features/retention/)."""
    forgotten_at: datetime | None = Field(default=None,
                                          sa_column=Column(DateTime(timezone=True)))
    """When the seat's player asked to be forgotten (app/features/privacy/): its address is
    gone and its name is "a former player"; the log it played stays whole."""


class Move(SQLModel, table=True):
    """One submission accepted for a game: append-only (enforced by database triggers)."""

    __tablename__ = "moves"

    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), primary_key=True, autoincrement=False)
    )
    seq: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    seat: int | None = None
    """The seat whose decision it answered (the computer's moves for a seat carry that seat)."""
    kind: str = Field(
        default=MOVE, sa_column=Column(String(20), nullable=False, server_default=MOVE)
    )
    """One of ENTRY_KINDS: only ``move`` entries are inputs for the engine."""
    actor: str = Field(
        default=PLAYER, sa_column=Column(String(20), nullable=False, server_default=PLAYER)
    )
    """Who made the entry (one of ACTORS)."""
    input: str = Field(max_length=2000)
    outcomes: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    """The random outcomes each input of the submission produced."""
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    prev_hash: str = Field(max_length=64)
    hash: str = Field(max_length=64)


class SealedOrder(SQLModel, table=True):
    """One seat's secret answer to a simultaneous decision, kept until every answer is in.

    A game whose seats decide at once, behind a screen
    (:meth:`app.games.base.Ruleset.simultaneous`), seals each seat's answer here (never shown
    to anyone but its seat) and the log gets one entry, the reveal, holding every answer, when
    the last one arrives. The primary key (game, decision, seat) lets a seat seal once per
    decision; rows are append-only like the log.
    """

    __tablename__ = "sealed_orders"

    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), primary_key=True, autoincrement=False)
    )
    decision_seq: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    """The log entry after which the decision opened (``Loaded.decision_seq``)."""
    seat: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    input: str = Field(max_length=2000)
    actor: str = Field(
        default=PLAYER, sa_column=Column(String(20), nullable=False, server_default=PLAYER)
    )
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )


class Snapshot(SQLModel, table=True):
    """A cached engine state after ``seq`` moves: a shortcut, never the truth."""

    __tablename__ = "snapshots"

    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), primary_key=True, autoincrement=False)
    )
    seq: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    state: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
