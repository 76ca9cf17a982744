"""The move log's hash chain catches a tampered row in the database.

The log is append-only (triggers refuse UPDATE and DELETE, see test_service.py). Here someone
with the database's owner rights switches the triggers off and changes a row as a forger
would: an input, the recorded dice, the seat, the time, who made it, a row whose own hash is
recomputed to match, a deleted row. ``GameService.verify`` and ``titanpost admin verify`` name
the game and the move; an untouched game beside it is not reported (``admin verify`` on SQLite
and PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import select

from app.core.models import Game, Move
from app.service import GameService, move_hash
from tests.apifixtures import bot_game, make_service, run_titanpost

pytest_plugins = ["tests.apifixtures"]

MOVES = Move.__table__  # type: ignore[attr-defined]
SQLITE_TRIGGERS = {"moves_no_update": "UPDATE", "moves_no_delete": "DELETE"}
PG_TRIGGER = "moves_no_update_or_delete"


@contextmanager
def triggers_off(svc: GameService) -> Iterator[sa.Connection]:
    """A transaction on the database with the append-only triggers switched off."""
    with svc.engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text(f"ALTER TABLE moves DISABLE TRIGGER {PG_TRIGGER}"))
            yield conn
            conn.execute(sa.text(f"ALTER TABLE moves ENABLE TRIGGER {PG_TRIGGER}"))
        else:
            for name in SQLITE_TRIGGERS:
                conn.execute(sa.text(f"DROP TRIGGER {name}"))
            yield conn
            for name, event in SQLITE_TRIGGERS.items():
                conn.execute(sa.text(
                    f"CREATE TRIGGER {name} BEFORE {event} ON moves BEGIN SELECT RAISE(ABORT, "
                    "'the move log is append-only: moves cannot be changed or deleted'); END"))


def rows_of(svc: GameService, uid: str) -> tuple[int, list[Move]]:
    with svc.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        assert game.id is not None
        return game.id, list(s.exec(select(Move).where(Move.game_id == game.id)
                                    .order_by(Move.seq)).all())  # type: ignore[arg-type]


def _victim(moves: list[Move]) -> Move:
    """A move in the middle of the log that recorded dice."""
    return next(m for m in moves[len(moves) // 3:] if m.outcomes)


def _change(**values: Any) -> Callable[[sa.Connection, int, Move], None]:
    def tamper(conn: sa.Connection, game_id: int, move: Move) -> None:
        conn.execute(sa.update(MOVES).where(MOVES.c.game_id == game_id,
                                            MOVES.c.seq == move.seq).values(**values))
    return tamper


def _other_dice(conn: sa.Connection, game_id: int, move: Move) -> None:
    changed = [str(o).replace("1", "2") if "1" in str(o) else str(o) + " 1"
               for o in move.outcomes]
    _change(outcomes=changed)(conn, game_id, move)


def _other_input(conn: sa.Connection, game_id: int, move: Move) -> None:
    _change(input="end" if move.input != "end" else "pass")(conn, game_id, move)


def _seat(conn: sa.Connection, game_id: int, move: Move) -> None:
    _change(seat=(move.seat or 0) + 1)(conn, game_id, move)


def _later(conn: sa.Connection, game_id: int, move: Move) -> None:
    _change(created_at=move.created_at + timedelta(seconds=1))(conn, game_id, move)


def _input_with_its_hash(conn: sa.Connection, game_id: int, move: Move) -> None:
    """A forger who recomputes the changed row's own hash: the next row's link breaks."""
    text = move.input + " "
    digest = move_hash(move.prev_hash, move.seq, move.seat, text, move.outcomes,
                       move.created_at, move.kind, move.actor)
    _change(input=text, hash=digest)(conn, game_id, move)


def _delete(conn: sa.Connection, game_id: int, move: Move) -> None:
    conn.execute(sa.delete(MOVES).where(MOVES.c.game_id == game_id, MOVES.c.seq == move.seq))


TAMPERINGS: dict[str, tuple[Callable[[sa.Connection, int, Move], None], str]] = {
    "input": (_other_input, "its hash does not match its content"),
    "dice": (_other_dice, "its hash does not match its content"),
    "seat": (_seat, "its hash does not match its content"),
    "time": (_later, "its hash does not match its content"),
    "actor": (_change(actor="admin"), "its hash does not match its content"),
    "kind": (_change(kind="pause"), "its hash does not match its content"),
    "hash recomputed": (_input_with_its_hash, "its previous hash does not match"),
    "row deleted": (_delete, "expected sequence number"),
}


@pytest.fixture
def sqlite_service(tmp_path: Path) -> Iterator[GameService]:
    """Each way of tampering on SQLite (the check is the same code on both databases; the
    test of ``admin verify`` below runs on both)."""
    svc = make_service(f"sqlite:///{tmp_path / 'tamper.db'}", TITANPOST_SNAPSHOT_EVERY="2")
    yield svc
    svc.engine.dispose()


@pytest.mark.parametrize("how", sorted(TAMPERINGS))
def test_a_tampered_row_is_named(sqlite_service: GameService, how: str) -> None:
    service = sqlite_service
    tamper, symptom = TAMPERINGS[how]
    uid = bot_game(service, circuits=["anglieh"])
    assert service.verify(uid) == []
    game_id, moves = rows_of(service, uid)
    victim = _victim(moves)
    with triggers_off(service) as conn:
        tamper(conn, game_id, victim)

    problems = service.verify(uid)
    # (a forged row's own hash may match: then the link from the next row breaks)
    named = victim.seq + 1 if how in ("hash recomputed", "row deleted") else victim.seq
    assert any(p.startswith(f"move {named}") and symptom in p for p in problems), problems
    assert set(service.verify_all()) == {uid}


def test_admin_verify_names_the_tampered_game(service: GameService, titanpost: str) -> None:
    untouched = bot_game(service)
    uid = bot_game(service, circuits=["anglieh"])
    game_id, moves = rows_of(service, uid)
    victim = _victim(moves)
    with triggers_off(service) as conn:
        _other_dice(conn, game_id, victim)
    result = run_titanpost(titanpost, "admin", "verify",
                           database_url=service.settings.database_url)
    assert result.returncode == 1, result.stdout + result.stderr
    assert uid in result.stderr and f"move {victim.seq}" in result.stderr
    assert untouched not in result.stderr + result.stdout
    # the append-only triggers are back: the log still refuses changes
    with pytest.raises(sa.exc.IntegrityError), service.engine.begin() as conn:
        conn.execute(sa.update(MOVES).where(MOVES.c.game_id == game_id).values(seat=0))
