"""What every table module stands on: the metadata's naming convention (set here, before any
table is defined, so that every constraint and index is named by it), and two helpers of the
tables and their users (:func:`table_of`, :func:`utcnow`)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Table
from sqlmodel import SQLModel

SQLModel.metadata.naming_convention = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def table_of(model: type[SQLModel]) -> Table:
    """The Core table of a table model, for statements built without the ORM (SQLModel does
    not type ``__table__``)."""
    table: Table = model.__table__  # type: ignore[attr-defined]
    return table


def utcnow() -> datetime:
    return datetime.now(UTC)
