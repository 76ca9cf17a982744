"""What a game's players say to one another: the game's chat, and the requests to take back a
move (with the course a request takes)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Column, DateTime, ForeignKey, Index, Integer, text
from sqlmodel import Field, SQLModel

from .base import utcnow


class ChatMessage(SQLModel, table=True):
    """One message of a game's chat: append-only, public to the game's seats and (when the
    game allows spectators) its spectators; never a place for hidden information."""

    __tablename__ = "chat_messages"
    __table_args__ = (Index("ix_chat_messages_game_id_id", "game_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(sa_column=Column(Integer, ForeignKey("games.id"), nullable=False))
    seat: int | None = None
    """The position of the seat that wrote it; None for a message of the system."""
    text: str = Field(max_length=2000)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )


TAKEBACK_STATUSES = ("pending", "agreed", "refused", "expired", "lapsed")
"""A takeback request's course: asked and waiting for the other players, then taken back (all
agreed), refused by one of them, expired at its deadline, or lapsed (the game moved on first)."""


class Takeback(SQLModel, table=True):
    """A player's request to take back their own last move (see app/features/takeback/takebacks.py).
    At most one is pending per game (the partial unique index); ``voters`` are the other human seats
    when it was asked, ``answers`` what each said (by position, as text keys: JSON). The request
    stands for the log as it was (``head_seq`` entries): any entry after that lapses it."""

    __tablename__ = "takebacks"
    __table_args__ = (
        Index(
            "ix_takebacks_one_pending",
            "game_id",
            unique=True,
            postgresql_where=text("status = 'pending'"),
            sqlite_where=text("status = 'pending'"),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=False, index=True)
    )
    seat: int
    """The asking seat."""
    move_seq: int
    """The log entry taken back: the game goes back to the state before it."""
    head_seq: int
    """How many entries the log had when it was asked."""
    voters: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    answers: dict[str, str] = Field(default_factory=dict,
                                    sa_column=Column(JSON, nullable=False))
    status: str = Field(default="pending", max_length=20)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    due_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    closed_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    rollback_seq: int | None = None
    """The ``rollback`` entry that applied it, once all agreed."""
