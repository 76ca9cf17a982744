"""The clock's rows inside a game transaction (app/features/clock/rows.py), on SQLite and
PostgreSQL: the one read of a game event gives what the separate reads give, and the one write of
its changes and new rows sets only what changed."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import update
from sqlmodel import col, select

from app.core.config import Settings
from app.core.models import Absence, Deadline, Game, utcnow
from app.features.clock.rows import (
    TIMEOUT_KIND,
    ClockRows,
    NewDeadline,
    ReadDeadline,
    clock_input_rows,
    clock_inputs,
    seats_and_away,
)
from app.listeners import build_service
from app.service import GameService

H = timedelta(hours=1)


@pytest.fixture
def service(migrated_database_url: str) -> Iterator[GameService]:
    built = build_service(Settings.from_env({"TITANPOST_DATABASE_URL": migrated_database_url,
                                             "TITANPOST_ENV": "test"}))
    yield built
    built.engine.dispose()


def new_game(service: GameService) -> str:
    """A started three-seat game on a 24-hour clock, two decisions answered, and two away
    dates (one cancelled) of one of its players and one of a player of no seat."""
    created = service.create_game(seats=[{"email": f"p{i}@example.com"} for i in range(3)],
                                  seed=5, settings={"deadline_hours": 24})
    for invitation in created["invitations"]:
        service.accept(invitation["invite_token"])
    uid = str(created["game"])
    service.start(uid, created["creator_token"])
    for _ in range(2):
        with service.session() as s:
            loaded = service.load(s, uid)
            (position,) = loaded.to_act()
            seq, text = loaded.seq, loaded.rules.bot_move(loaded.state)
        assert service.submit(uid, position, seq, text)["applied"] is True
    now = utcnow()
    with service.session(write=True) as s:
        s.add(Absence(email="p1@example.com", starts_at=now + H, ends_at=now + 5 * H))
        s.add(Absence(email="p1@example.com", starts_at=now + 9 * H, ends_at=now + 12 * H,
                      mode="computer"))
        s.add(Absence(email="p1@example.com", starts_at=now, ends_at=now + H,
                      cancelled_at=now))
        s.add(Absence(email="nobody@example.com", starts_at=now, ends_at=now + H))
        s.commit()
    return uid


def test_one_read_gives_what_the_separate_reads_give(service: GameService) -> None:
    uid = new_game(service)
    with service.session() as s:
        loaded = service.load(s, uid)
        rows, seats, book = clock_inputs(s, loaded.game_id, loaded.decision_seq)
        apart = ClockRows.read(s, loaded.game_id, loaded.decision_seq)
        apart_seats, apart_book = seats_and_away(s, loaded.game_id)
        all_rows = s.exec(select(Deadline).where(Deadline.game_id == loaded.game_id)).all()
    assert len({row.seq for row in all_rows}) > 1  # old decisions' rows, not read
    assert sorted(row.id or 0 for row in rows.rows if isinstance(row, Deadline)) == sorted(
        row.id or 0 for row in apart.rows if isinstance(row, Deadline))
    assert len(rows.rows) == len(apart.rows) > 0
    assert {p: seat.id for p, seat in seats.items()} == {
        p: seat.id for p, seat in apart_seats.items()}
    assert sorted(seats) == [0, 1, 2]
    assert book.intervals == apart_book.intervals
    assert sorted(book.intervals) == [("p1@example.com", "computer"),
                                      ("p1@example.com", "stretch")]
    # each seat comes once with each of its player's away dates (once with none), never
    # again with the deadline rows, which come alone
    with service.session() as s:
        read = clock_input_rows(s, loaded.game_id, loaded.decision_seq)
    assert sorted(seat.position for seat, _, _, _ in read if seat is not None) == [0, 1, 1, 2]
    assert all(seat is None for seat, _, deadline, _ in read if deadline is not None)


@pytest.mark.parametrize("plain", [False, True], ids=["session's rows", "a move's own rows"])
def test_one_write_sets_only_what_changed_and_inserts_the_new_rows(
        service: GameService, plain: bool) -> None:
    uid = new_game(service)
    with service.session(write=True) as s:
        loaded = service.load(s, uid)
        rows, _, _ = clock_inputs(s, loaded.game_id, loaded.decision_seq, plain=plain)
        (timeout,) = [row for row in rows.open_rows() if row.kind == TIMEOUT_KIND]
        assert isinstance(timeout, ReadDeadline if plain else Deadline)
        assert timeout.id is not None
        # a column changed in the database after the read (not in the row read): the write
        # must not undo it
        s.execute(update(Deadline).where(col(Deadline.id) == timeout.id)
                  .values(claimed_by="another worker")
                  .execution_options(synchronize_session=False))
        assert timeout.claimed_by is None
        closed = rows.close(utcnow(), "answered", seq=timeout.seq)
        assert timeout in closed
        rows.add(NewDeadline(game_id=loaded.game_id, seq=loaded.seq + 100, seat=timeout.seat,
                             kind=TIMEOUT_KIND, due_at=utcnow() + 24 * H, opened_at=utcnow(),
                             allowance_seconds=24 * 3600))
        rows.write(s)
        assert not any((isinstance(row, ReadDeadline) and row.changed())
                       or (isinstance(row, Deadline) and s.is_modified(row)) for row in closed)
        # written, the rows are clean: the commit's flush has nothing of them to look at
        assert not [row for row in s.dirty if isinstance(row, Deadline)]
        assert rows.new == []
        s.commit()
    with service.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        written = {row.id: row for row in s.exec(
            select(Deadline).where(Deadline.game_id == game.id)).all()}
    assert written[timeout.id].claimed_by == "another worker"
    assert written[timeout.id].done_at is not None
    assert written[timeout.id].result == "answered"
    (new,) = [row for row in written.values() if row.seq == loaded.seq + 100]
    assert (new.seat, new.kind, new.allowance_seconds, new.done_at) == (
        timeout.seat, TIMEOUT_KIND, 24 * 3600, None)


def test_a_move_reads_its_seats_with_the_clock_rows(service: GameService) -> None:
    """A move reads the game's seats, its deadline rows and away dates in one statement, which
    the clock uses for the move's event: five statements in all (the game with its head, that
    read, the log entry, the outbox rows, the deadline rows; on PostgreSQL a sixth, the NOTIFY
    that tells the open pages, app/features/live/feed.py), and the rows the clock writes are
    those of a read after the move: the answered decision's closed, the next one's opened."""
    from sqlalchemy import event

    uid = new_game(service)
    with service.session() as s:
        loaded = service.load(s, uid)
        (position,) = loaded.to_act()
        seq, answered, text = loaded.seq, loaded.decision_seq, loaded.rules.bot_move(loaded.state)
    service.forget_seats(uid)
    seen: list[str] = []

    def count(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        if not statement.lstrip().upper().startswith("BEGIN"):
            seen.append(statement)

    event.listen(service.engine, "before_cursor_execute", count)
    try:
        moved = service.submit(uid, position, seq, text)
    finally:
        event.remove(service.engine, "before_cursor_execute", count)
    assert moved["applied"] is True
    notify = 1 if service.engine.dialect.name == "postgresql" else 0
    assert len(seen) == 5 + notify, seen
    with service.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        rows = s.exec(select(Deadline).where(Deadline.game_id == game.id)).all()
    assert {(row.result, row.done_at is None) for row in rows if row.seq == answered} == {
        ("answered", False)}
    (pending,) = moved["game"]["to_act"]
    opened = [row for row in rows if row.seq == moved["decision_seq"]]
    assert {(row.seat, row.kind, row.done_at) for row in opened
            if row.kind == TIMEOUT_KIND} == {(pending, TIMEOUT_KIND, None)}
