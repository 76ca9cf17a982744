"""A game's setup and a seat's pieces in the game's own terms.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27

``games.setup`` (JSON) replaces ``games.circuits`` and ``seats.pieces`` (JSON) replaces
``seats.titans`` and ``seats.team``, which spoke Titan Race alone. Each row is moved by its
game's ruleset (``games.ruleset``):

- Titan Race: ``circuits`` becomes ``{"circuits": circuits}``; a seat's Titans and team become
  ``{"titans": titans}``, with ``"team": n`` when the seat has a team.
- The Great Race stored its start city as ``circuits = ["alger"]`` and a seat's crew as
  ``titans = ["blue"]``: they become ``{"start": "alger"}`` and ``{"crew": "blue"}`` (``{}`` for
  a seat that has asked for no crew yet).

The mapping is written out here rather than taken from the rulesets, so that this revision
moves the rows the same way whatever the code becomes. ``games.seat_setups`` (the fairness
record of what the seats asked for) keeps its fields. The downgrade moves the rows back.

On SQLite, batch mode copies ``games`` and ``seats`` to drop their columns; ``moves`` is not
touched, so its append-only triggers stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

GREAT_RACE = "great-race"
"""The one ruleset (besides ``titan-race``) that has games at this revision."""

GAMES = sa.table(
    "games", sa.column("id", sa.Integer()), sa.column("ruleset", sa.String()),
    sa.column("circuits", sa.JSON()), sa.column("setup", sa.JSON()),
)
SEATS = sa.table(
    "seats", sa.column("id", sa.Integer()), sa.column("game_id", sa.Integer()),
    sa.column("titans", sa.JSON()), sa.column("team", sa.Integer()),
    sa.column("pieces", sa.JSON()),
)


def setup_of(ruleset: str, circuits: list[Any]) -> dict[str, Any]:
    """A game's setup from its circuits column."""
    if ruleset == GREAT_RACE:
        return {"start": circuits[0]} if circuits else {}
    return {"circuits": list(circuits)}


def circuits_of(ruleset: str, setup: dict[str, Any]) -> list[Any]:
    """A game's circuits column from its setup."""
    if ruleset == GREAT_RACE:
        return [setup["start"]] if "start" in setup else []
    return list(setup.get("circuits") or [])


def pieces_of(ruleset: str, titans: list[str], team: int | None) -> dict[str, Any]:
    """A seat's pieces from its titans and team columns."""
    pieces: dict[str, Any] = {}
    if ruleset == GREAT_RACE:
        if titans:
            pieces["crew"] = titans[0]
    else:
        pieces["titans"] = list(titans)
    if team is not None:
        pieces["team"] = team
    return pieces


def fields_of(ruleset: str, pieces: dict[str, Any]) -> tuple[list[str], int | None]:
    """A seat's titans and team columns from its pieces."""
    if ruleset == GREAT_RACE:
        titans = [pieces["crew"]] if "crew" in pieces else []
    else:
        titans = list(pieces.get("titans") or [])
    return titans, pieces.get("team")


def _rulesets() -> dict[int, str]:
    rows = op.get_bind().execute(sa.select(GAMES.c.id, GAMES.c.ruleset)).all()
    return {int(game_id): str(ruleset) for game_id, ruleset in rows}


def _update(table: sa.TableClause, rows: list[dict[str, Any]]) -> None:
    """Set the columns of ``rows`` (each with its ``row_id``) in one executemany."""
    if rows:  # (the other keys of the rows are the columns SET)
        op.get_bind().execute(table.update().where(table.c.id == sa.bindparam("row_id")), rows)


def upgrade() -> None:
    op.add_column("games", sa.Column("setup", sa.JSON(), nullable=True))
    op.add_column("seats", sa.Column("pieces", sa.JSON(), nullable=True))
    bind = op.get_bind()
    rulesets = _rulesets()
    _update(GAMES, [{"row_id": game_id, "setup": setup_of(rulesets[game_id], circuits or [])}
                    for game_id, circuits in bind.execute(
                        sa.select(GAMES.c.id, GAMES.c.circuits)).all()])
    _update(SEATS, [{"row_id": seat_id, "pieces": pieces_of(rulesets[game_id], titans or [], team)}
                    for seat_id, game_id, titans, team in bind.execute(
                        sa.select(SEATS.c.id, SEATS.c.game_id, SEATS.c.titans, SEATS.c.team)
                    ).all()])
    with op.batch_alter_table("games") as batch:
        batch.alter_column("setup", existing_type=sa.JSON(), nullable=False)
        batch.drop_column("circuits")
    with op.batch_alter_table("seats") as batch:
        batch.alter_column("pieces", existing_type=sa.JSON(), nullable=False)
        batch.drop_column("team")
        batch.drop_column("titans")


def downgrade() -> None:
    op.add_column("games", sa.Column("circuits", sa.JSON(), nullable=True))
    op.add_column("seats", sa.Column("titans", sa.JSON(), nullable=True))
    op.add_column("seats", sa.Column("team", sa.Integer(), nullable=True))
    bind = op.get_bind()
    rulesets = _rulesets()
    _update(GAMES, [{"row_id": game_id, "circuits": circuits_of(rulesets[game_id], setup or {})}
                    for game_id, setup in bind.execute(
                        sa.select(GAMES.c.id, GAMES.c.setup)).all()])
    seats = []
    for seat_id, game_id, pieces in bind.execute(
            sa.select(SEATS.c.id, SEATS.c.game_id, SEATS.c.pieces)).all():
        titans, team = fields_of(rulesets[game_id], pieces or {})
        seats.append({"row_id": seat_id, "titans": titans, "team": team})
    _update(SEATS, seats)
    with op.batch_alter_table("seats") as batch:
        batch.alter_column("titans", existing_type=sa.JSON(), nullable=False)
        batch.drop_column("pieces")
    with op.batch_alter_table("games") as batch:
        batch.alter_column("circuits", existing_type=sa.JSON(), nullable=False)
        batch.drop_column("setup")
