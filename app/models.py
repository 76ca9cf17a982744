"""Database tables (SQLModel). The move log is the truth; everything else serves it.

``moves`` is append-only: the migrations install triggers that refuse UPDATE and DELETE on it,
and its primary key (game, sequence) is the concurrency control between racing submissions.
``snapshots`` is a cache of engine states that can always be rebuilt from the log.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Column,
    DateTime,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    UniqueConstraint,
)
from sqlmodel import Field, SQLModel

SQLModel.metadata.naming_convention = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

OPEN = "open"
ACTIVE = "active"
FINISHED = "finished"
ABANDONED = "abandoned"
GAME_STATUSES = (OPEN, ACTIVE, FINISHED, ABANDONED)


def utcnow() -> datetime:
    return datetime.now(UTC)


class Game(SQLModel, table=True):
    __tablename__ = "games"

    id: int | None = Field(default=None, primary_key=True)
    uid: str = Field(sa_column=Column(String(32), nullable=False, unique=True, index=True))
    name: str = Field(default="", max_length=200)
    ruleset: str = Field(max_length=40)
    engine_version: int
    variant: str = Field(max_length=40)
    circuits: list[Any] = Field(sa_column=Column(JSON, nullable=False))
    settings: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    status: str = Field(default=OPEN, max_length=20, index=True)
    seed: int = Field(sa_column=Column(BigInteger, nullable=False))
    initial_state: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    """The engine state the game started from (its genesis); the log replays from it."""
    creator_token_hash: str = Field(max_length=64)
    winner: str | None = Field(default=None, max_length=40)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    started_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    finished_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))


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
    titans: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    """Titans chosen for this seat (two in the 2-player variant); empty means random."""
    team: int | None = None
    language: str = Field(default="en", max_length=5)
    notify: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    secret: str = Field(max_length=64)
    """Per-seat secret mixed into the seat's signed links."""
    invite_token_hash: str | None = Field(default=None, max_length=64, index=True)
    accepted_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    is_bot: bool = False
    resigned_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))


class Move(SQLModel, table=True):
    """One submission accepted for a game: append-only (enforced by database triggers)."""

    __tablename__ = "moves"

    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), primary_key=True, autoincrement=False)
    )
    seq: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    seat: int | None = None
    """The seat whose decision it answered (the computer's moves for a seat carry that seat)."""
    input: str = Field(max_length=2000)
    outcomes: list[Any] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    """The random outcomes each input of the submission produced."""
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    prev_hash: str = Field(max_length=64)
    hash: str = Field(max_length=64)


class Snapshot(SQLModel, table=True):
    """A cached engine state after ``seq`` moves: a shortcut, never the truth."""

    __tablename__ = "snapshots"

    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), primary_key=True, autoincrement=False)
    )
    seq: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    state: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))


class ApiToken(SQLModel, table=True):
    """A seat's API token for the command-line client: only its SHA-256 is stored."""

    __tablename__ = "api_tokens"

    id: int | None = Field(default=None, primary_key=True)
    token_hash: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    seat_id: int = Field(
        sa_column=Column(Integer, ForeignKey("seats.id"), nullable=False, index=True)
    )
    label: str = Field(default="", max_length=100)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    revoked_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))


class OutboxMail(SQLModel, table=True):
    """A mail to send, written in the same transaction as the move that caused it."""

    __tablename__ = "outbox"

    id: int | None = Field(default=None, primary_key=True)
    game_id: int | None = Field(
        default=None, sa_column=Column(Integer, ForeignKey("games.id"), index=True)
    )
    seq: int | None = None
    kind: str = Field(max_length=40)
    recipient: str = Field(max_length=254)
    seat_id: int | None = None
    message_id: str = Field(sa_column=Column(String(200), nullable=False, unique=True))
    """Deterministic, so a retried or duplicated send is recognisable."""
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    attempts: int = 0
    next_attempt_at: datetime | None = Field(
        default=None, sa_column=Column(DateTime(timezone=True), index=True)
    )
    sent_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    last_error: str | None = Field(default=None, max_length=2000)


class Deadline(SQLModel, table=True):
    """A reminder or timeout for one pending decision, claimed atomically by one scheduler."""

    __tablename__ = "deadlines"
    __table_args__ = (UniqueConstraint("game_id", "seq", "kind"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=False, index=True)
    )
    seq: int
    """The decision it belongs to: the number of moves in the log when it opened."""
    seat: int
    kind: str = Field(max_length=20)
    due_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False, index=True))
    claimed_by: str | None = Field(default=None, max_length=100)
    claimed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    done_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))


class InboundMail(SQLModel, table=True):
    """A mail that arrived for a reply address (SMTP listener or IMAP poller), queued for the
    worker that applies it. A worker claims rows atomically (``claimed_by``/``claimed_at``);
    ``expected_seq`` and ``input`` are fixed before the move is submitted, so a row processed
    again after a crash is recognised as already applied; ``processed_at`` and ``result`` say
    what became of it."""

    __tablename__ = "inbound_mail"

    id: int | None = Field(default=None, primary_key=True)
    recipient: str = Field(max_length=254)
    game_uid: str = Field(max_length=32, index=True)
    seat: int
    sender: str = Field(default="", max_length=254)
    """The envelope sender (MAIL FROM), or the From header of a polled mail."""
    message_id: str | None = Field(default=None, max_length=250, index=True)
    source: str = Field(default="smtp", max_length=10)
    raw: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    received_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    claimed_by: str | None = Field(default=None, max_length=100)
    claimed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    attempts: int = 0
    """How many times a worker claimed it (a message that keeps failing is given up)."""
    expected_seq: int | None = None
    input: str | None = Field(default=None, max_length=500)
    processed_at: datetime | None = Field(
        default=None, sa_column=Column(DateTime(timezone=True), index=True)
    )
    result: str | None = Field(default=None, max_length=40)
    """applied, duplicate, illegal, moved-on, not-yours, not-playing, unparseable, ignored..."""
    detail: str | None = Field(default=None, max_length=2000)
