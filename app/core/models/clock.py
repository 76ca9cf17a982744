"""The clock's tables: the deadline rows of pending decisions, players' away dates, the clock's
last tick, and the decisions owed by normal and strong computer seats (played by the worker)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, DateTime, ForeignKey, Index, Integer, String, UniqueConstraint, text
from sqlmodel import Field, SQLModel

from .base import utcnow


class Deadline(SQLModel, table=True):
    """A reminder or timeout for one seat's pending decision, claimed atomically by one
    scheduler. A timeout row keeps what its due time is computed from (when the decision opened,
    the time allowed, extra time granted by pauses and outages), so that a vacation or a change
    of quiet hours can recompute it; reminder rows follow their timeout row."""

    __tablename__ = "deadlines"
    __table_args__ = (
        UniqueConstraint("game_id", "seq", "seat", "kind"),
        Index(
            "ix_deadlines_open_due",
            "due_at",
            postgresql_where=text("done_at IS NULL"),
            sqlite_where=text("done_at IS NULL"),
        ),
        Index(
            "ix_deadlines_open_game",
            "game_id",
            "seq",
            postgresql_where=text("done_at IS NULL"),
            sqlite_where=text("done_at IS NULL"),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=False, index=True)
    )
    seq: int
    """The decision it belongs to: the log entry after which it opened."""
    seat: int
    kind: str = Field(max_length=20)
    """``timeout`` or ``reminder-N`` (the N-th reminder point)."""
    due_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    opened_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    allowance_seconds: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )
    extra_seconds: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )
    claimed_by: str | None = Field(default=None, max_length=100)
    claimed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    done_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    result: str | None = Field(default=None, max_length=40)


class Absence(SQLModel, table=True):
    """A player's away dates (vacation), for every game of their address: their deadlines
    stretch over it (``stretch``), or the computer plays for them meanwhile (``computer``)."""

    __tablename__ = "absences"

    id: int | None = Field(default=None, primary_key=True)
    email: str = Field(max_length=254, index=True)
    starts_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    ends_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    mode: str = Field(default="stretch", max_length=20)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    cancelled_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))


class ClockTick(SQLModel, table=True):
    """When the scheduler last processed the clock (one row per clock; ``main`` for games), so
    that a long outage is noticed and a health check can report the worker's last tick."""

    __tablename__ = "clock_ticks"

    name: str = Field(sa_column=Column(String(40), primary_key=True))
    last_tick_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    worker: str = Field(default="", max_length=100)
    processed: int = 0


class BotTurn(SQLModel, table=True):
    """A decision a normal or strong computer seat owes, written in the transaction of the move that
    handed it the turn and played by a scheduler (:mod:`app.features.clock.botturns`), never in a
    web request. Claimed atomically (``claimed_by``, ``claimed_at``: a lease); ``done_at`` and
    ``result`` (``played``, ``stale``) once settled. One row per decision and seat."""

    __tablename__ = "bot_turns"
    __table_args__ = (
        UniqueConstraint("game_id", "decision_seq", "seat"),
        Index(
            "ix_bot_turns_open",
            "created_at",
            postgresql_where=text("done_at IS NULL"),
            sqlite_where=text("done_at IS NULL"),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=False, index=True)
    )
    decision_seq: int
    """The decision it answers: the log entry after which it opened."""
    seat: int
    level: str = Field(max_length=10)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    claimed_by: str | None = Field(default=None, max_length=100)
    claimed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    attempts: int = Field(default=0, sa_column=Column(Integer, nullable=False, server_default="0"))
    """How many times a worker claimed it (a decision whose search keeps failing is given up,
    the game then waiting as for a player who does not answer)."""
    done_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    result: str | None = Field(default=None, max_length=20)
