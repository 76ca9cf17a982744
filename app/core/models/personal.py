"""What belongs to a player rather than to a game's play: a seat's private notes on its game,
and the named groups of friends whose standings are kept together."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, DateTime, ForeignKey, Index, Integer, String, Text
from sqlmodel import Field, SQLModel

from .base import utcnow


class GameNote(SQLModel, table=True):
    """One private note of a seat's player on their game (app/features/notes/): shown to that
    player alone, never to the other seats, spectators, webhooks or another player's export.
    ``author`` is the seat's address when it was written, so that a seat given to someone else
    shows its new player none of the notes; ``seq`` pins it to a log entry (None: the game as a
    whole). Unlike the log, a note may be edited and deleted by its author."""

    __tablename__ = "game_notes"
    __table_args__ = (Index("ix_game_notes_seat_id_id", "seat_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(
        sa_column=Column(Integer, ForeignKey("games.id"), nullable=False, index=True)
    )
    seat_id: int = Field(sa_column=Column(Integer, ForeignKey("seats.id"), nullable=False))
    author: str = Field(sa_column=Column(String(254), nullable=False, index=True))
    seq: int | None = None
    text: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
    updated_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )


class PlayerGroup(SQLModel, table=True):
    """A named group of friends whose standings are shown together (app/features/standings/),
    made by its owner; the addresses that played finished games together form a table without
    one."""

    __tablename__ = "player_groups"

    id: int | None = Field(default=None, primary_key=True)
    uid: str = Field(sa_column=Column(String(32), nullable=False, unique=True))
    name: str = Field(sa_column=Column(String(100), nullable=False))
    owner_email: str = Field(sa_column=Column(String(254), nullable=False, index=True))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )


class PlayerGroupMember(SQLModel, table=True):
    """An address in a group (:class:`PlayerGroup`)."""

    __tablename__ = "player_group_members"

    group_id: int = Field(
        sa_column=Column(Integer, ForeignKey("player_groups.id"), primary_key=True)
    )
    email: str = Field(sa_column=Column(String(254), primary_key=True, index=True))
    added_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(DateTime(timezone=True), nullable=False)
    )
