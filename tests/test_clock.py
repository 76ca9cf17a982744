"""The clock at work, on SQLite and PostgreSQL: games walked through time with
``titanpost admin tick --now`` (and :meth:`Timekeeper.process_due`), checked in the database
(deadlines, outbox, moves, seats) and through the game service.

Moves submitted by players carry the real time, ticks a chosen one: every moment a test ticks
at is computed from what the database holds (when the decision opened, when it is due).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest
from click.testing import CliRunner
from sqlmodel import col, select

from app.core.config import Settings
from app.core.models import Deadline, Game, Move, OutboxMail, Seat, utcnow
from app.features.clock.arithmetic import aware
from app.features.clock.timekeeper import TickReport, Timekeeper, install
from app.listeners import build_service
from app.service import Forbidden, GameMovedOn, GameService, NotPlaying
from cli.main import main as titanpost_main
from tests.apifixtures import run_titanpost

pytestmark = pytest.mark.usefixtures("quick_searches")  # (how well computers play: not here)

SEED = 6
"""On kaldheira with three seats, seat 2 picks first: pick, start, move, end."""
H = timedelta(hours=1)
S = timedelta(seconds=1)


def env(url: str) -> dict[str, str]:
    return {"TITANPOST_DATABASE_URL": url, "TITANPOST_ENV": "test"}


@dataclass
class Table:
    uid: str
    creator: str
    emails: dict[int, str]


@dataclass
class Clock:
    """A migrated database with a game service (mail and clock listeners installed)."""

    url: str
    service: GameService

    @property
    def keeper(self) -> Timekeeper:
        return install(self.service)

    # ------------------------------------------------------------------ games

    def new_game(self, settings: dict[str, Any] | None = None, *, seats: int = 3,
                 seed: int = SEED, circuits: list[str] | None = None, prefix: str = "p",
                 bots: tuple[int, ...] = (), **seat_extra: Any) -> Table:
        specs: list[dict[str, Any]] = [
            {"bot": True} if i in bots else {"email": f"{prefix}{i}@example.com", **seat_extra}
            for i in range(seats)]
        created = self.service.create_game(seats=specs, seed=seed, settings=settings or {},
                                           circuits=circuits)
        for inv in created["invitations"]:
            self.service.accept(inv["invite_token"])
        self.service.start(created["game"], created["creator_token"])
        return Table(created["game"], created["creator_token"],
                     {i: f"{prefix}{i}@example.com" for i in range(seats) if i not in bots})

    def acting(self, uid: str) -> tuple[int, int]:
        """(the seat to act, the seq its answer must name)."""
        state = self.service.state(uid, None)
        (position,) = state["game"]["to_act"]
        return position, int(state["seq"])

    def computer_choice(self, uid: str) -> str:
        with self.service.session() as s:
            loaded = self.service.load(s, uid)
            return loaded.rules.bot_move(loaded.state)

    def play(self, uid: str, decisions: int = 1) -> list[tuple[int, str]]:
        """Answer ``decisions`` decisions as their players, with the computer's choices."""
        played = []
        for _ in range(decisions):
            position, seq = self.acting(uid)
            text = self.computer_choice(uid)
            result = self.service.submit(uid, position, seq, text)
            assert result["applied"] is True
            played.append((position, text))
        return played

    def finish_turn(self, uid: str) -> int:
        """Answer every decision of the current seat's turn; return that seat."""
        position, _ = self.acting(uid)
        while self.service.state(uid, None)["game"]["to_act"] == [position]:
            self.play(uid)
        return position

    # ------------------------------------------------------------------ time

    def tick(self, now: datetime, **kwargs: Any) -> TickReport:
        kwargs.setdefault("max_gap", None)
        return self.keeper.process_due(now, **kwargs)

    def cli_tick(self, now: datetime, max_gap: int | None = 0) -> str:
        """``titanpost admin tick --now NOW --max-gap MAX_GAP`` (in this process; no
        ``--max-gap`` when None)."""
        gap = [] if max_gap is None else ["--max-gap", str(max_gap)]
        result = CliRunner().invoke(
            titanpost_main, ["admin", "tick", "--now", now.isoformat(), *gap],
            env=env(self.url), catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert result.output.startswith(f"tick at {now.isoformat()}: "), result.output
        return result.output

    # ------------------------------------------------------------------ the database

    def game_row(self, uid: str) -> Game:
        with self.service.session() as s:
            return s.exec(select(Game).where(Game.uid == uid)).one()

    def deadlines(self, uid: str, *, open_only: bool = False, seq: int | None = None,
                  kind: str | None = None) -> list[Deadline]:
        game_id = self.game_row(uid).id
        with self.service.session() as s:
            query = select(Deadline).where(Deadline.game_id == game_id)
            if open_only:
                query = query.where(col(Deadline.done_at).is_(None))
            if seq is not None:
                query = query.where(Deadline.seq == seq)
            if kind is not None:
                query = query.where(Deadline.kind == kind)
            return list(s.exec(query.order_by(col(Deadline.seq), col(Deadline.kind))).all())

    def timeout(self, uid: str) -> Deadline:
        """The open timeout row of the game (there is one seat to act)."""
        (row,) = [r for r in self.deadlines(uid, open_only=True) if r.kind.startswith("timeout")]
        return row

    def due(self, uid: str) -> datetime:
        return aware(self.timeout(uid).due_at)

    def opened(self, uid: str) -> datetime:
        opened_at = self.timeout(uid).opened_at
        assert opened_at is not None
        return aware(opened_at)

    def mails(self, uid: str | None = None, kind: str | None = None) -> list[OutboxMail]:
        with self.service.session() as s:
            query = select(OutboxMail)
            if uid is not None:
                query = query.where(OutboxMail.game_id == self.game_row(uid).id)
            if kind is not None:
                query = query.where(OutboxMail.kind == kind)
            return list(s.exec(query.order_by(col(OutboxMail.id))).all())

    def moves(self, uid: str, after: int = 0) -> list[Move]:
        game_id = self.game_row(uid).id
        with self.service.session() as s:
            return list(s.exec(select(Move).where(Move.game_id == game_id, Move.seq > after)
                               .order_by(col(Move.seq))).all())

    def seat(self, uid: str, position: int) -> Seat:
        game_id = self.game_row(uid).id
        with self.service.session() as s:
            return s.exec(select(Seat).where(Seat.game_id == game_id,
                                             Seat.position == position)).one()

    def new_service(self) -> GameService:
        return build_service(Settings.from_env(env(self.url)))


@pytest.fixture
def clock(migrated_database_url: str) -> Iterator[Clock]:
    service = build_service(Settings.from_env(env(migrated_database_url)))
    yield Clock(migrated_database_url, service)
    service.engine.dispose()


def by_actor(moves: list[Move]) -> list[tuple[int | None, str, str, str]]:
    return [(m.seat, m.kind, m.actor, m.input) for m in moves]


# ====================================================================== the walk-through


def test_a_game_walked_through_time(clock: Clock) -> None:
    """Reminders at 50% and 2h before, each once; then the timeout: the computer plays the
    late seat's whole turn, and the next player's clock starts at the tick."""
    table = clock.new_game({"deadline_hours": 24})
    uid = table.uid
    late, seq = clock.acting(uid)
    assert seq == 0
    opened = clock.opened(uid)
    rows = {r.kind: r for r in clock.deadlines(uid)}
    assert sorted(rows) == ["reminder-1", "reminder-2", "timeout"]
    assert aware(rows["timeout"].due_at) == opened + 24 * H
    assert rows["timeout"].allowance_seconds == 24 * 3600
    assert aware(rows["reminder-1"].due_at) == opened + 12 * H
    assert aware(rows["reminder-2"].due_at) == opened + 22 * H
    assert {r.seat for r in rows.values()} == {late}

    assert "0 due" in clock.cli_tick(opened + H)
    assert clock.mails(uid, "reminder") == []

    # the 50% point
    out = clock.cli_tick(opened + 12 * H + S)
    assert "1 due, 1 reminders, 0 timeouts" in out
    (reminder,) = clock.mails(uid, "reminder")
    assert reminder.recipient == table.emails[late] and reminder.seq == 0
    assert reminder.payload["action"] == "bot" and reminder.payload["hours"] == 12
    assert aware(datetime.fromisoformat(reminder.payload["due_at"])) == opened + 24 * H
    assert clock.deadlines(uid, kind="reminder-1")[0].result == "sent"
    # ... only once: again at the same time, and later
    assert "0 due" in clock.cli_tick(opened + 12 * H + S)
    assert "0 due" in clock.cli_tick(opened + 13 * H)
    assert len(clock.mails(uid, "reminder")) == 1

    # two hours before
    assert "1 reminders" in clock.cli_tick(opened + 22 * H)
    assert "0 due" in clock.cli_tick(opened + 23 * H)
    reminders = clock.mails(uid, "reminder")
    assert len(reminders) == 2 and len({m.message_id for m in reminders}) == 2
    assert clock.mails(uid, "deadline") == []
    assert clock.moves(uid) == []

    # the deadline: the computer plays the seat's whole turn
    now = opened + 24 * H + S
    out = clock.cli_tick(now)
    assert "1 due, 0 reminders, 1 timeouts" in out
    assert f"seat {late + 1}: bot" in out  # (seats are numbered from 1)
    moves = clock.moves(uid)
    assert moves and all((m.seat, m.kind, m.actor) == (late, "move", "timeout") for m in moves)
    assert moves[0].input.startswith("pick ") and moves[-1].input == "end"
    after, seq = clock.acting(uid)
    assert after != late and seq == moves[-1].seq
    (deadline,) = clock.mails(uid, "deadline")
    assert deadline.recipient == table.emails[late] and deadline.seq == 0
    assert deadline.payload["action"] == "bot" and deadline.payload["missed"] == 1
    assert deadline.payload["inputs"] == [m.input for m in moves]
    assert deadline.payload["handover"] is None
    assert clock.seat(uid, late).missed_deadlines == 1
    assert clock.seat(uid, late).is_bot is False
    fired = clock.deadlines(uid, seq=0)
    assert {r.kind: r.result for r in fired} == {
        "timeout": "timed out", "reminder-1": "sent", "reminder-2": "sent"}
    assert all(r.done_at is not None for r in fired)
    # the next player's decision counts from the tick
    assert clock.timeout(uid).seat == after
    assert clock.opened(uid) == now and clock.due(uid) == now + 24 * H
    # the log as players see it
    log = clock.service.log(uid)["moves"]
    assert [e["actor"] for e in log] == ["timeout"] * len(moves)

    # nothing more at the same time or a little later
    assert "0 due" in clock.cli_tick(now)
    assert "0 due" in clock.cli_tick(now + H)
    assert len(clock.moves(uid)) == len(moves)
    assert len(clock.mails(uid, "deadline")) == 1
    assert clock.service.verify_all() == {}


# (the command's reading of --now is the same on either database: one is enough for three runs
# of the command)
@pytest.mark.parametrize("migrated_database_url", ["sqlite"], indirect=True)
def test_the_tick_command_refuses_a_bad_time(clock: Clock, titanpost: str) -> None:
    done = run_titanpost(titanpost, "admin", "tick", "--now", "next tuesday", "--max-gap", "0",
                         database_url=clock.url, TITANPOST_ENV="test")
    assert done.returncode == 2, done
    assert "'next tuesday' is not an ISO time" in done.stderr
    assert "--now" in done.stderr
    result = CliRunner().invoke(titanpost_main, ["admin", "tick", "--now", "2026-13-01T00:00"],
                                env=env(clock.url))
    assert result.exit_code == 2 and "is not an ISO time" in result.output
    # a time without a zone is UTC
    done = run_titanpost(titanpost, "admin", "tick", "--now", "2030-01-01T12:00",
                         database_url=clock.url, TITANPOST_ENV="test")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("tick at 2030-01-01T12:00:00+00:00: 0 due")


def test_ticks_in_two_threads_at_once_act_once(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 24})
    uid = table.uid
    opened = clock.opened(uid)
    other = clock.new_service()
    keepers = [clock.keeper, install(other)]

    def both(now: datetime) -> list[TickReport]:
        barrier = threading.Barrier(2)
        reports: list[TickReport] = []

        def run(index: int) -> None:
            barrier.wait()
            reports.append(keepers[index].process_due(now, worker=f"thread-{index}"))

        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert len(reports) == 2
        return reports

    try:
        reports = both(opened + 12 * H + S)
        assert sum(r.reminders for r in reports) == 1
        assert sum(r.failed for r in reports) == 0
        assert len(clock.mails(uid, "reminder")) == 1
        reports = both(opened + 24 * H + S)
        assert sum(r.timeouts for r in reports) == 1
        # the 2h point, due too, is sent, or dropped by the timeout that came first
        assert sum(r.claimed for r in reports) == 2
        assert sum(r.reminders for r in reports) <= 1
        (point,) = clock.deadlines(uid, seq=0, kind="reminder-2")
        assert point.result == ("sent" if sum(r.reminders for r in reports) else "dropped")
        assert sum(r.failed for r in reports) == 0
        timeouts = [m for m in clock.moves(uid) if m.actor == "timeout"]
        assert timeouts and timeouts[-1].input == "end"
        assert len(clock.mails(uid, "deadline")) == 1
        assert len(clock.mails(uid, "reminder")) == 1 + sum(r.reminders for r in reports)
        assert clock.seat(uid, timeouts[0].seat or 0).missed_deadlines == 1
    finally:
        other.engine.dispose()


# ====================================================================== what a timeout does


def test_timeout_pass_plays_only_what_must_be_played(clock: Clock) -> None:
    uid = clock.new_game({"deadline_hours": 24, "on_timeout": "pass"}).uid
    late, _ = clock.acting(uid)
    due = clock.due(uid)
    report = clock.tick(due + S)
    assert report.timeouts == 1
    moves = clock.moves(uid)
    assert all((m.seat, m.actor) == (late, "timeout") for m in moves)
    inputs = [m.input for m in moves]
    # pick, start and move cannot be passed: the computer chooses; then the turn ends
    assert [i.split()[0] for i in inputs] == ["pick", "start", "move", "end"]
    (mail,) = clock.mails(uid, "deadline")
    assert mail.payload["action"] == "pass" and mail.payload["inputs"] == inputs


def test_timeout_pass_in_a_reaction_window(clock: Clock) -> None:
    # estenggaard, seed 50: seat 1 gets a reaction window (dispel or pass) in seat 0's turn
    uid = clock.new_game({"deadline_hours": 48, "reaction_hours": 6, "on_timeout": "pass"},
                         seed=50, circuits=["estenggaard"]).uid
    clock.play(uid, 34)
    pending = clock.service.options(uid, 1)
    assert pending["pending"]["kind"] == "react"
    assert pending["options"] == ["play dispel", "pass"]
    row = clock.timeout(uid)
    assert (row.kind, row.seat, row.allowance_seconds) == ("timeout-quick", 1, 6 * 3600)
    due = clock.due(uid)
    assert due == clock.opened(uid) + 6 * H
    before = len(clock.moves(uid))
    assert clock.tick(due - S).timeouts == 0
    assert clock.tick(due + S).timeouts == 1
    (move,) = clock.moves(uid, after=before)
    assert (move.seat, move.actor, move.input) == (1, "timeout", "pass")
    assert clock.acting(uid)[0] == 0  # back to the turn's player, who was not late
    assert clock.seat(uid, 1).missed_deadlines == 1
    assert clock.seat(uid, 0).missed_deadlines == 0


def test_timeout_pass_for_the_pirates(clock: Clock) -> None:
    # dead-mans-lagoon, seed 105: seat 2 meets the pirates on its first move
    uid = clock.new_game({"deadline_hours": 24, "on_timeout": "pass"}, seed=105,
                         circuits=["dead-mans-lagoon"]).uid
    clock.play(uid, 3)
    assert clock.service.options(uid, 2)["options"] == ["discard last-shield", "lose"]
    row = clock.timeout(uid)
    assert (row.kind, row.allowance_seconds) == ("timeout-quick", 12 * 3600)
    before = len(clock.moves(uid))
    assert clock.tick(clock.due(uid) + S).timeouts == 1
    (move, *_) = clock.moves(uid, after=before)
    assert (move.seat, move.actor, move.input) == (2, "timeout", "lose")


def test_timeout_pause_until_the_late_player_answers(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 24, "on_timeout": "pause"})
    uid = table.uid
    late, seq = clock.acting(uid)
    due = clock.due(uid)
    report = clock.tick(due + S)
    assert report.timeouts == 1
    game = clock.game_row(uid)
    assert game.paused_at is not None and aware(game.paused_at) == due + S
    assert game.pause_reason == f"waiting for seat {late}, whose time ran out"
    # (a key, as stored; the admin reads the late player's name and seat, numbered from 1)
    listed = CliRunner().invoke(titanpost_main, ["admin", "games"],
                                env=env(clock.url), catch_exceptions=False).output
    name = clock.seat(uid, late).player_name
    assert f"paused   waiting for {name} (seat {late + 1}), whose time ran out" in listed, listed
    (note,) = clock.moves(uid)
    assert (note.seat, note.kind, note.actor) == (late, "pause", "clock")
    paused = clock.mails(uid, "paused")
    # the others are told of the pause; the late player hears it from the deadline mail
    others = [email for position, email in table.emails.items() if position != late]
    assert sorted(m.recipient for m in paused) == sorted(others)
    (deadline,) = clock.mails(uid, "deadline")
    assert deadline.payload["action"] == "pause" and deadline.payload["inputs"] == []
    assert clock.seat(uid, late).missed_deadlines == 1
    state = clock.service.state(uid, None)
    assert state["game"]["paused"] is True and state["decision_seq"] == seq

    # a paused game's clock does not run, and nobody else may move
    assert clock.tick(due + 100 * H).claimed == 0
    other = (late + 1) % 3
    with pytest.raises(Forbidden, match="not your decision"):
        clock.service.submit(uid, other, state["seq"], "end")
    # the late player's own move resumes the game
    text = clock.computer_choice(uid)
    result = clock.service.submit(uid, late, state["seq"], text)
    assert result["applied"] is True and result["game"]["paused"] is False
    moves = clock.moves(uid)
    assert by_actor(moves[:3]) == [(late, "pause", "clock", moves[0].input),
                                   (late, "resume", "player", "resume"),
                                   (late, "move", "player", text)]
    assert clock.game_row(uid).paused_at is None
    assert len(clock.mails(uid, "resumed")) == 3
    # the clock runs again for the rest of the turn
    assert clock.timeout(uid).seat == late
    assert clock.service.verify_all() == {}


def test_owner_resume_gives_a_fresh_deadline(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 24, "on_timeout": "pause"})
    uid = table.uid
    late, _ = clock.acting(uid)
    due = clock.due(uid)
    clock.tick(due + S)
    assert clock.deadlines(uid, open_only=True) == []
    resumed_at = due + 30 * H
    summary = clock.service.resume(uid, table.creator, at=resumed_at)
    assert summary["paused"] is False
    assert by_actor(clock.moves(uid))[-1] == (None, "resume", "owner", "resume")
    row = clock.timeout(uid)
    assert row.seat == late and row.seq == 0
    assert aware(row.opened_at or resumed_at) == resumed_at
    assert clock.due(uid) == resumed_at + 24 * H
    (resumed, *_) = clock.mails(uid, "resumed")
    assert resumed.payload["paused_seconds"] == 30 * 3600 - 1
    # it times out again (and pauses again) only at the fresh deadline
    assert clock.tick(resumed_at + 23 * H).timeouts == 0
    assert clock.tick(resumed_at + 24 * H + S).timeouts == 1
    assert clock.game_row(uid).paused_at is not None
    assert clock.seat(uid, late).missed_deadlines == 2


def test_missed_deadlines_hand_the_seat_to_the_computer(clock: Clock) -> None:
    """max_missed 2: every seat is late twice, is handed over, and the computer plays the
    game to its end."""
    table = clock.new_game({"deadline_hours": 24, "max_missed": 2, "on_timeout": "pass"})
    uid = table.uid
    now = clock.opened(uid)
    for _ in range(20):
        if clock.game_row(uid).status != "active":
            break
        now = clock.due(uid) + S
        report = clock.tick(now)
        assert report.timeouts == 1 and report.failed == 0
    game = clock.game_row(uid)
    assert game.status == "finished" and game.winner
    moves = clock.moves(uid)
    handovers = [m for m in moves if m.kind == "handover"]
    assert sorted((m.seat, m.actor, m.input) for m in handovers) == [
        (p, "clock", "handover computer") for p in range(3)]
    for position in range(3):
        seat = clock.seat(uid, position)
        assert seat.missed_deadlines == 2 and seat.is_bot
        mine = [m for m in moves if m.seat == position and m.kind == "move"]
        handed = next(m.seq for m in handovers if m.seat == position)
        assert {m.actor for m in mine if m.seq < handed} == {"timeout"}
        assert {m.actor for m in mine if m.seq > handed} == {"computer"}
    # seat 2 is late first: the owner (seat 0) is told; then seat 0 itself: the players
    # still playing (seat 1) are told; then seat 1, when no one is left to tell
    notices = clock.mails(uid, "handover")
    told = sorted((m.payload["position"], m.recipient) for m in notices)
    assert [m.seat for m in handovers] == [2, 0, 1]
    assert told == [(0, table.emails[1]), (2, table.emails[0])]
    assert all(m.payload["to"] == "computer" and m.payload["missed"] == 2 for m in notices)
    assert {m.payload["handover"] for m in clock.mails(uid, "deadline")} == {None, "computer"}
    # a finished game leaves no open rows
    assert clock.deadlines(uid, open_only=True) == []
    assert clock.service.verify_all() == {}


def test_after_missed_invite_then_a_new_player_takes_the_seat(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 24, "max_missed": 1, "after_missed": "invite"})
    uid = table.uid
    late, _ = clock.acting(uid)
    clock.tick(clock.due(uid) + S)
    assert clock.seat(uid, late).is_bot
    (note,) = [m for m in clock.moves(uid) if m.kind == "handover"]
    assert (note.seat, note.actor, note.input) == (late, "clock", "handover invite")
    (notice,) = clock.mails(uid, "handover")
    assert notice.recipient == table.emails[0] and notice.payload["to"] == "invite"
    # the owner invites someone new, who takes the seat
    invite = clock.service.replace_seat(uid, table.creator, late, "new@example.com")
    clock.service.accept(invite["invite_token"])
    seat = clock.seat(uid, late)
    assert not seat.is_bot and seat.email == "new@example.com" and seat.missed_deadlines == 0
    assert [m.input for m in clock.moves(uid) if m.kind == "handover"][-1] == "handover player"


# ====================================================================== away dates


def test_away_in_stretch_mode_moves_the_deadline(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 24})
    uid = table.uid
    late, _ = clock.acting(uid)
    opened, due = clock.opened(uid), clock.due(uid)
    email = table.emails[late]
    # two overlapping absences, 2h-8h and 6h-12h after the opening: 10 hours away
    clock.keeper.set_absence(email, opened + 2 * H, opened + 8 * H, "stretch", at=opened)
    clock.keeper.set_absence(email.upper(), opened + 6 * H, opened + 12 * H, "stretch",
                             at=opened)
    assert clock.due(uid) == due + 10 * H
    reminders = {r.kind: aware(r.due_at) for r in clock.deadlines(uid, open_only=True)}
    assert reminders["reminder-1"] == opened + 17 * H  # half of the 34 hours, after the absence
    assert reminders["reminder-2"] == due + 8 * H
    # the co-players are told, each absence once; the absent player is not
    away = clock.mails(uid, "away")
    assert sorted(m.recipient for m in away) == sorted(
        [e for p, e in table.emails.items() if p != late] * 2)
    assert {m.payload["mode"] for m in away} == {"stretch"}
    assert {m.payload["position"] for m in away} == {late}
    assert clock.keeper.absences(email)[0]["from"] == (opened + 2 * H).isoformat()
    # the old deadline passes quietly; the new one fires
    assert clock.tick(due + S).timeouts == 0
    assert clock.tick(due + 10 * H - S).timeouts == 0
    assert clock.tick(due + 10 * H + S).timeouts == 1


def test_cancelled_away_dates_bring_the_deadline_back(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 24})
    uid = table.uid
    late, _ = clock.acting(uid)
    opened, due = clock.opened(uid), clock.due(uid)
    absence = clock.keeper.set_absence(table.emails[late], opened + H, opened + 5 * H,
                                       "stretch", at=opened)
    assert clock.due(uid) == due + 4 * H
    clock.keeper.cancel_absence(table.emails[late], absence["id"])
    assert clock.due(uid) == due
    assert clock.keeper.absences(table.emails[late]) == []


def test_away_in_computer_mode_the_computer_plays_from_the_start(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 24})
    uid = table.uid
    late, _ = clock.acting(uid)
    opened = clock.opened(uid)
    starts = opened + 3 * H
    clock.keeper.set_absence(table.emails[late], starts, opened + 200 * H, "computer",
                             at=opened)
    assert clock.due(uid) == starts
    assert {r.kind for r in clock.deadlines(uid, open_only=True)} == {"timeout"}
    assert {r.result for r in clock.deadlines(uid) if r.kind != "timeout"} == {"dropped"}
    away = clock.mails(uid, "away")
    assert len(away) == 2 and {m.payload["mode"] for m in away} == {"computer"}
    assert clock.tick(starts - S).claimed == 0
    report = clock.tick(starts + S)
    assert report.timeouts == 1
    moves = clock.moves(uid)
    assert moves and {(m.seat, m.actor) for m in moves} == {(late, "away")}
    assert moves[-1].input == "end"
    assert clock.seat(uid, late).missed_deadlines == 0
    assert clock.mails(uid, "deadline") == []
    assert clock.deadlines(uid, seq=0, kind="timeout")[0].result == "played while away"
    # the other players play; the absent player's next turn is played when it comes
    while clock.acting(uid)[0] != late:
        clock.finish_turn(uid)
    assert clock.timeout(uid).seat == late
    # (the others answered in real time, before the absence began: due when it begins)
    assert clock.due(uid) == max(starts, clock.opened(uid))
    later = starts + 2 * H
    assert clock.tick(later).timeouts == 1
    assert clock.acting(uid)[0] != late
    assert {m.actor for m in clock.moves(uid) if m.seat == late} == {"away"}
    assert clock.seat(uid, late).missed_deadlines == 0


def test_away_dates_are_checked(clock: Clock) -> None:
    from app.service import ServiceError

    now = datetime.fromisoformat("2030-01-01T00:00:00+00:00")
    for starts, ends, mode, message in (
        (now, now + H, "holiday", "away mode"),
        (now + H, now, "stretch", "end before"),
        (now, now + 100 * 24 * H, "stretch", "three months"),
        (now - 3 * H, now - H, "stretch", "already over"),
    ):
        with pytest.raises(ServiceError, match=message):
            clock.keeper.set_absence("a@example.com", starts, ends, mode, at=now)


# ====================================================================== quiet hours


def test_quiet_hours_move_a_deadline_out_of_the_night(clock: Clock) -> None:
    from zoneinfo import ZoneInfo

    table = clock.new_game({"deadline_hours": 24, "reminders": ["50%"]})
    uid = table.uid
    late, _ = clock.acting(uid)
    due = clock.due(uid)
    warsaw = ZoneInfo("Europe/Warsaw")
    local = due.astimezone(warsaw)
    # quiet from an hour before the deadline (local time, whole minutes) to three hours after
    start = (local - H).replace(second=0, microsecond=0)
    end = (local + 3 * H).replace(second=0, microsecond=0)
    quiet = f"{start:%H:%M}-{end:%H:%M}"
    prefs = clock.keeper.set_quiet_hours(uid, late, quiet, "Europe/Warsaw")
    assert prefs == {"quiet": quiet, "timezone": "Europe/Warsaw"}
    moved = clock.due(uid)
    assert moved.astimezone(warsaw).strftime("%H:%M") == f"{end:%H:%M}"
    assert timedelta(hours=2) < moved - due <= timedelta(hours=3)
    assert clock.tick(due + S).timeouts == 0
    assert clock.tick(moved + S).timeouts == 1
    # quiet hours given when the game is created work the same way
    other = clock.new_game({"deadline_hours": 24}, prefix="q", quiet=quiet,
                           timezone="Europe/Warsaw")
    assert clock.due(other.uid).astimezone(warsaw).strftime("%H:%M") == f"{end:%H:%M}"
    # and cleared, the deadline comes back
    clock.keeper.set_quiet_hours(other.uid, clock.acting(other.uid)[0], None, None)
    assert clock.due(other.uid) == clock.opened(other.uid) + 24 * H


# ====================================================================== time banks


def test_time_bank_is_used_charged_and_incremented(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 24, "bank_hours": 10, "increment_hours": 1})
    uid = table.uid
    for position in range(3):
        assert clock.seat(uid, position).bank_seconds == 10 * 3600
    first, _ = clock.acting(uid)
    row = clock.timeout(uid)
    assert row.allowance_seconds == 34 * 3600
    opened = clock.opened(uid)
    assert clock.due(uid) == opened + 34 * H
    # a whole turn answered in time: the bank only grows, once for the turn
    clock.finish_turn(uid)
    assert clock.seat(uid, first).bank_seconds == 11 * 3600
    # the next player takes 30 hours (the opening is moved back): 6 hours from the bank
    second, _ = clock.acting(uid)
    game_id = clock.game_row(uid).id
    with clock.service.session(write=True) as s:
        for r in s.exec(select(Deadline).where(Deadline.game_id == game_id,
                                               col(Deadline.done_at).is_(None))).all():
            assert r.opened_at is not None
            r.opened_at = aware(r.opened_at) - 30 * H
            s.add(r)
        s.commit()
    clock.finish_turn(uid)
    charged = clock.seat(uid, second).bank_seconds
    assert charged is not None  # (the turn took the real seconds the test took, too)
    assert (10 - 6 + 1) * 3600 - 60 < charged <= (10 - 6 + 1) * 3600
    # the third player runs out of time, bank and all: nothing is left but the increment
    third, _ = clock.acting(uid)
    assert clock.timeout(uid).allowance_seconds == 34 * 3600
    due = clock.due(uid)
    assert due == clock.opened(uid) + 34 * H
    assert clock.tick(due - 9 * H).timeouts == 0  # past the 24 hours: on the bank
    assert clock.tick(due + S).timeouts == 1
    assert clock.seat(uid, third).bank_seconds == 1 * 3600
    # the first player's next turn gets the bank that is left
    while clock.acting(uid)[0] != first:
        clock.finish_turn(uid)
    assert clock.timeout(uid).allowance_seconds == (24 + 11) * 3600


def test_a_turn_shares_one_clock(clock: Clock) -> None:
    """pick, start, move and end: one deadline, and each reminder once for the turn."""
    uid = clock.new_game({"deadline_hours": 24})
    opened = clock.opened(uid.uid)
    assert clock.tick(opened + 12 * H + S).reminders == 1
    position, _ = clock.acting(uid.uid)
    clock.play(uid.uid)  # the pick
    assert clock.acting(uid.uid)[0] == position
    row = clock.timeout(uid.uid)
    assert row.seq == 1 and clock.opened(uid.uid) == opened
    assert clock.due(uid.uid) == opened + 24 * H
    assert clock.tick(opened + 12 * H + 2 * S).reminders == 0
    assert clock.tick(opened + 22 * H + S).reminders == 1
    clock.play(uid.uid)  # the start
    assert clock.tick(opened + 22 * H + 2 * S).reminders == 0
    assert len(clock.mails(uid.uid, "reminder")) == 2
    assert clock.tick(opened + 24 * H + S).timeouts == 1
    assert [m.actor for m in clock.moves(uid.uid)] == ["player", "player", "timeout", "timeout"]


# ====================================================================== pauses


def test_pause_shifts_the_deadlines(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 24})
    uid = table.uid
    opened, due = clock.opened(uid), clock.due(uid)
    reminders = {r.kind: aware(r.due_at) for r in clock.deadlines(uid, open_only=True)}
    clock.service.pause(uid, table.creator, reason="holidays", at=opened + 2 * H)
    assert clock.game_row(uid).pause_reason == "holidays"
    assert by_actor(clock.moves(uid)) == [(None, "pause", "owner", "pause holidays")]
    assert len(clock.mails(uid, "paused")) == 3
    assert clock.tick(due + S).claimed == 0
    clock.service.resume(uid, table.creator, at=opened + 12 * H)
    assert clock.due(uid) == due + 10 * H
    moved = {r.kind: aware(r.due_at) for r in clock.deadlines(uid, open_only=True)}
    assert moved["reminder-2"] == reminders["reminder-2"] + 10 * H
    assert moved["reminder-1"] == opened + 17 * H
    (resumed, *_) = clock.mails(uid, "resumed")
    assert resumed.payload["paused_seconds"] == 10 * 3600
    assert clock.tick(due + 10 * H - S).timeouts == 0
    assert clock.tick(due + 10 * H + S).timeouts == 1


def test_pause_and_resume_are_checked(clock: Clock) -> None:
    from app.service import BadRequest

    table = clock.new_game({"deadline_hours": 24})
    with pytest.raises(BadRequest, match="not paused"):
        clock.service.resume(table.uid, table.creator)
    with pytest.raises(Forbidden):
        clock.service.pause(table.uid, "wrong token")
    clock.service.pause(table.uid, None, actor="admin")
    with pytest.raises(BadRequest, match="already paused"):
        clock.service.pause(table.uid, table.creator)
    position, seq = clock.acting(table.uid)
    with pytest.raises(NotPlaying, match="paused"):
        clock.service.submit(table.uid, position, seq, clock.computer_choice(table.uid))
    clock.service.resume(table.uid, None, actor="admin")
    assert [m.actor for m in clock.moves(table.uid)] == ["admin", "admin"]


# ====================================================================== races


def test_an_answer_just_before_the_deadline_is_not_timed_out(clock: Clock) -> None:
    uid = clock.new_game({"deadline_hours": 24}).uid
    opened = clock.opened(uid)
    due = clock.due(uid)
    clock.tick(due - S)  # both reminders
    assert len(clock.mails(uid, "reminder")) == 2
    position = clock.finish_turn(uid)
    answered = clock.deadlines(uid, seq=0)
    assert {r.kind: r.result for r in answered} == {
        "timeout": "answered", "reminder-1": "sent", "reminder-2": "sent"}
    # just past the deadline (the next player's clock started a few milliseconds later, and
    # in real time: only their reminders are due)
    report = clock.tick(due + timedelta(microseconds=1))
    assert report.timeouts == 0 and report.failed == 0
    assert {r.result for r in clock.deadlines(uid, seq=0)} == {"answered", "sent"}
    assert len(clock.mails(uid, "reminder")) == 2 + report.reminders
    assert {m.actor for m in clock.moves(uid)} == {"player"}
    assert clock.seat(uid, position).missed_deadlines == 0
    assert clock.mails(uid, "deadline") == []
    assert clock.opened(uid) > opened


def test_a_claimed_row_whose_decision_was_answered_is_closed_as_answered(clock: Clock) -> None:
    """The timeout is claimed, then the player answers before it is acted on."""
    uid = clock.new_game({"deadline_hours": 24}).uid
    due = clock.due(uid)
    keeper = clock.keeper
    claimed = keeper._claim(due + S, "slow-worker", 10)
    assert len(claimed) == 3  # the timeout and both reminders
    position = clock.finish_turn(uid)
    # the turn's rows are closed by the answer; acting on the claims now does nothing
    report = TickReport(due + S)
    for row_id in claimed:
        keeper._process(row_id, due + S, "slow-worker", report)
    assert report.timeouts == report.reminders == report.failed == 0
    assert {m.actor for m in clock.moves(uid)} == {"player"}
    assert clock.seat(uid, position).missed_deadlines == 0
    # act_for on a decision that is no longer pending does nothing
    result = clock.service.act_for(uid, position, 0, mode="bot", actor="timeout", at=due)
    assert result["acted"] is False


@pytest.mark.parametrize("first", ["answer", "timeout"])
def test_an_answer_racing_the_timeout(clock: Clock, first: str) -> None:
    """A move submitted while the timeout is being processed: exactly one lands. The first
    to start holds its transaction open (a listener waits) while the other goes on."""
    # estenggaard, seed 50: seat 1's reaction window, where the player plays dispel and the
    # computer would pass
    uid = clock.new_game({"deadline_hours": 48}, seed=50, circuits=["estenggaard"]).uid
    clock.play(uid, 34)
    position, seq = clock.acting(uid)
    text = "play dispel"
    assert position == 1 and clock.computer_choice(uid) == "pass"
    due = clock.due(uid)
    worker = clock.new_service()  # the scheduler's process
    started, go_on = threading.Event(), threading.Event()

    def hold(_s: Any, event: Any) -> None:
        if event.kind == ("moved" if first == "answer" else "timed_out"):
            started.set()
            go_on.wait(20)

    holder = clock.service if first == "answer" else worker
    holder.listeners.insert(0, hold)  # before the timekeeper touches the deadline rows
    outcome: dict[str, Any] = {}

    def answer() -> None:
        try:
            outcome["answer"] = clock.service.submit(uid, position, seq, text)
        except GameMovedOn as exc:
            outcome["answer"] = exc

    def tick() -> None:
        outcome["tick"] = install(worker).process_due(due + S, worker="w", max_gap=None)

    threads = {"answer": threading.Thread(target=answer), "timeout": threading.Thread(target=tick)}
    second = "timeout" if first == "answer" else "answer"
    try:
        threads[first].start()
        assert started.wait(20)
        threads[second].start()
        threads[second].join(1.5)  # it waits for the first (or has lost already)
        go_on.set()
        for thread in threads.values():
            thread.join(60)
    finally:
        go_on.set()
        holder.listeners.remove(hold)
    report: TickReport = outcome["tick"]
    assert report.failed == 0, report
    (move,) = clock.moves(uid, after=seq)
    (row,) = clock.deadlines(uid, seq=seq, kind="timeout-quick")
    if first == "answer":
        assert outcome["answer"]["applied"] is True
        # (on SQLite the tick waited for the answer's write lock and found the rows closed;
        # on PostgreSQL it claimed them first, and found the decision answered)
        assert report.timeouts == 0
        assert report.answered == (1 if report.claimed else 0)
        assert (move.seat, move.actor, move.input) == (1, "player", text)
        assert row.result == "answered"
        assert clock.seat(uid, position).missed_deadlines == 0
    else:
        assert isinstance(outcome["answer"], GameMovedOn)
        assert "moved on" in outcome["answer"].message
        assert report.timeouts == 1
        assert (move.seat, move.actor, move.input) == (1, "timeout", "pass")
        assert row.result == "timed out"
        assert clock.seat(uid, position).missed_deadlines == 1
    assert clock.service.verify_all() == {}
    worker.engine.dispose()


# ====================================================================== outages


def test_an_outage_extends_the_deadlines(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 8})
    uid = table.uid
    late, _ = clock.acting(uid)
    opened, due = clock.opened(uid), clock.due(uid)
    before = {r.kind: aware(r.due_at) for r in clock.deadlines(uid, open_only=True)}
    t0 = opened + H
    assert "outage" not in clock.cli_tick(t0, max_gap=60)
    out = clock.cli_tick(t0 + 10 * H, max_gap=60)
    assert "outage of 10:00:00 noticed: 3 deadlines extended" in out
    assert "0 timeouts" in out and "0 reminders" in out
    assert clock.moves(uid) == []
    after = {r.kind: aware(r.due_at) for r in clock.deadlines(uid, open_only=True)}
    assert after == {kind: moment + 10 * H for kind, moment in before.items()}
    assert clock.timeout(uid).extra_seconds == 10 * 3600
    (outage,) = clock.mails(uid, "outage")
    assert outage.recipient == table.emails[late]
    assert aware(datetime.fromisoformat(outage.payload["due_at"])) == due + 10 * H
    assert outage.payload["from"] == t0.isoformat()
    assert outage.payload["until"] == (t0 + 10 * H).isoformat()
    # no second outage at the same time; the reminder and the deadline come in their time
    assert "outage" not in clock.cli_tick(t0 + 10 * H, max_gap=60)
    assert "1 reminders" in clock.cli_tick(before["reminder-1"] + 10 * H, max_gap=0)
    assert "1 timeouts" in clock.cli_tick(due + 10 * H + S, max_gap=0)
    assert len(clock.mails(uid, "outage")) == 1


def test_a_tick_at_a_given_time_is_no_outage(clock: Clock) -> None:
    """``admin tick --now <later>``, as the README's tour suggests for trying a clock out, moves
    the clock on: the time skipped is not an outage (unless ``--max-gap`` asks for one), so
    the deadlines are not extended and pass as they would have."""
    table = clock.new_game({"deadline_hours": 8})
    uid = table.uid
    opened, due = clock.opened(uid), clock.due(uid)
    before = {r.kind: aware(r.due_at) for r in clock.deadlines(uid, open_only=True)}
    assert clock.service.settings.max_tick_gap_minutes == 60
    clock.keeper.process_due(opened + H, max_gap=H)  # the scheduler's last tick, in its time
    out = clock.cli_tick(before["reminder-1"] + S, max_gap=None)  # hours later
    assert "outage" not in out and "1 reminders" in out, out
    assert {r.kind: aware(r.due_at) for r in clock.deadlines(uid)} == before
    out = clock.cli_tick(due + S, max_gap=None)
    assert "outage" not in out and "1 timeouts" in out, out
    assert not clock.mails(uid, "outage")


def test_an_outage_does_not_extend_a_paused_game_twice(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 8})
    uid = table.uid
    opened, due = clock.opened(uid), clock.due(uid)
    clock.tick(opened + H, max_gap=H)
    clock.service.pause(uid, table.creator, at=opened + 2 * H)
    clock.tick(opened + 12 * H, max_gap=H)  # an outage of 11 hours, while paused
    clock.service.resume(uid, table.creator, at=opened + 13 * H)
    # paused for 11 hours: the deadline moves by that much, the outage inside it not again
    assert clock.due(uid) == due + 11 * H


def test_a_real_tick_after_a_simulated_future_one_takes_the_clock_back(clock: Clock) -> None:
    future = utcnow() + 1000 * H
    clock.keeper.process_due(future, max_gap=None)
    assert clock.keeper.last_tick() == future
    real = clock.keeper.process_due(max_gap=H)  # as the worker ticks: no time given
    assert real.outage is None
    last = clock.keeper.last_tick()
    assert last is not None and abs(last - utcnow()) < H
    # outages are noticed again from the real last tick
    assert clock.keeper.process_due(last + 3 * H, max_gap=H).outage == 3 * H


# ====================================================================== the clock off


def test_no_clock_no_rows(clock: Clock) -> None:
    uid = clock.new_game({"deadline_hours": 0}).uid
    clock.finish_turn(uid)
    clock.play(uid, 3)
    assert clock.deadlines(uid) == []
    position, _ = clock.acting(uid)
    report = clock.tick(clock.game_row(uid).created_at + 1000 * H)
    assert report.claimed == 0
    assert clock.mails(uid, "reminder") == clock.mails(uid, "deadline") == []
    # nor for a game of computers
    created = clock.service.create_game(seats=[{"bot": True}] * 3, seed=SEED)
    clock.service.start(created["game"], created["creator_token"])
    assert clock.deadlines(created["game"]) == []
    assert position in range(3)


def test_abandoned_and_finished_games_close_their_rows(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 24})
    assert clock.deadlines(table.uid, open_only=True)
    clock.service.abandon(table.uid, table.creator)
    assert clock.deadlines(table.uid, open_only=True) == []
    assert {r.result for r in clock.deadlines(table.uid)} == {"finished"}
    # a seat given to the computer: its rows go, the next human's come
    other = clock.new_game({"deadline_hours": 24}, prefix="r")
    late, _ = clock.acting(other.uid)
    clock.service.replace_seat(other.uid, other.creator, late, None)
    row = clock.timeout(other.uid)
    assert row.seat != late
    assert {r.result for r in clock.deadlines(other.uid) if r.seat == late} == {"answered"}
    assert clock.tick(clock.due(other.uid) - S).timeouts == 0
    assert {m.actor for m in clock.moves(other.uid) if m.kind == "move"} == {"computer"}


# ====================================================================== more edges


def test_pause_on_timeout_with_a_handover_due_hands_over_instead(clock: Clock) -> None:
    """on_timeout pause with max_missed 1: the seat goes to the computer, which plays it; the
    game does not pause waiting for a player who is gone."""
    table = clock.new_game({"deadline_hours": 24, "on_timeout": "pause", "max_missed": 1})
    uid = table.uid
    late, _ = clock.acting(uid)
    report = clock.tick(clock.due(uid) + S)
    assert report.timeouts == 1 and report.failed == 0
    game = clock.game_row(uid)
    assert game.paused_at is None and game.pause_reason is None
    moves = clock.moves(uid)
    assert [(m.kind, m.actor) for m in moves if m.kind != "move"] == [("handover", "clock")]
    assert {m.actor for m in moves if m.kind == "move"} == {"timeout"}
    assert [m.input for m in moves if m.kind == "move"][-1] == "end"
    assert moves[-1].input == "handover computer" and clock.acting(uid)[0] != late
    assert clock.seat(uid, late).is_bot
    (mail,) = clock.mails(uid, "deadline")
    assert mail.payload["handover"] == "computer"
    assert clock.timeout(uid).seat != late


def test_the_service_shows_missed_deadlines_and_banks_after_a_tick(clock: Clock) -> None:
    """The scheduler embedded in the web process shares its game service: what the clock
    changed in a seat shows in the next read."""
    uid = clock.new_game({"deadline_hours": 24, "bank_hours": 2}).uid
    late, _ = clock.acting(uid)
    seats = clock.service.state(uid, None)["game"]["seats"]
    assert seats[late]["missed_deadlines"] == 0 and seats[late]["bank_seconds"] == 7200
    clock.tick(clock.due(uid) + S)
    seats = clock.service.state(uid, None)["game"]["seats"]
    assert seats[late]["missed_deadlines"] == 1 and seats[late]["bank_seconds"] == 0


def test_a_seat_replaced_while_paused_waits_for_the_resume(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 24})
    uid = table.uid
    late, _ = clock.acting(uid)
    clock.service.pause(uid, table.creator)
    clock.service.replace_seat(uid, table.creator, late, None)
    # the computer does not play in a paused game
    assert [m.kind for m in clock.moves(uid)] == ["pause", "handover"]
    clock.service.resume(uid, table.creator)
    moves = clock.moves(uid)
    assert [m.kind for m in moves[:3]] == ["pause", "handover", "resume"]
    assert {m.actor for m in moves[3:]} == {"computer"} and moves[3:]
    assert clock.acting(uid)[0] != late
    assert clock.timeout(uid).seat == clock.acting(uid)[0]
    assert clock.service.verify_all() == {}


def test_resume_after_a_paused_timeout_brings_back_the_reminders(clock: Clock) -> None:
    table = clock.new_game({"deadline_hours": 24, "on_timeout": "pause", "bank_hours": 5})
    uid = table.uid
    late, _ = clock.acting(uid)
    assert clock.timeout(uid).allowance_seconds == 29 * 3600
    due = clock.due(uid)
    clock.tick(due + S)
    assert clock.seat(uid, late).bank_seconds == 0
    resumed_at = due + 2 * H
    clock.service.resume(uid, table.creator, at=resumed_at)
    # a fresh deadline of the time the seat has now (its bank is spent), with its reminders
    assert clock.timeout(uid).allowance_seconds == 24 * 3600
    assert clock.due(uid) == resumed_at + 24 * H
    points = {r.kind: aware(r.due_at) for r in clock.deadlines(uid, open_only=True)}
    assert points == {"timeout": resumed_at + 24 * H, "reminder-1": resumed_at + 12 * H,
                      "reminder-2": resumed_at + 22 * H}
    assert clock.tick(resumed_at + 12 * H).reminders == 1


def test_two_first_ticks_at_once(clock: Clock) -> None:
    """Two schedulers' very first ticks: both find no clock_ticks row; the second to write it
    must not fail."""
    from app.core.models import ClockTick

    now = datetime.fromisoformat("2030-01-01T12:00:00+00:00")
    other = clock.new_service()
    outcome: dict[str, Any] = {}

    def tick() -> None:
        try:
            outcome["report"] = install(other).process_due(now, max_gap=None)
        except Exception as exc:  # the failure this test looks for
            outcome["report"] = exc

    try:
        with clock.service.session(write=True) as s:
            assert s.get(ClockTick, "main", with_for_update=True) is None
            s.add(ClockTick(name="main", last_tick_at=now, worker="first"))
            s.flush()
            thread = threading.Thread(target=tick)
            thread.start()
            thread.join(1)  # it waits for this transaction (or has read no row already)
            s.commit()
        thread.join(30)
    finally:
        other.engine.dispose()
    assert isinstance(outcome["report"], TickReport), outcome["report"]
    assert clock.keeper.last_tick() == now


def test_a_claim_takes_at_most_its_batch(clock: Clock) -> None:
    """One claim takes ``count`` rows, the earliest due first (on PostgreSQL too, where an
    UPDATE ... WHERE id IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED) may take more)."""
    uids = [clock.new_game({"deadline_hours": 24}, prefix=f"b{n}").uid for n in range(4)]
    now = max(clock.due(uid) for uid in uids) + S
    keeper = clock.keeper
    first = keeper._claim(now, "w", 3)
    assert len(first) == 3
    with clock.service.session() as s:
        due = sorted(s.exec(select(Deadline)).all(), key=lambda r: aware(r.due_at))
    assert sorted(first) == sorted(r.id for r in due[:3])
    second = keeper._claim(now, "w", 100)
    assert len(second) == 9 and not set(first) & set(second)
    assert keeper._claim(now, "w", 100) == []
    # a claim left by a process that died is taken again after the lease
    assert len(keeper._claim(now + 6 * 60 * S, "v", 100)) == 12


def test_a_game_paused_between_the_claim_and_the_action_keeps_its_deadline(
        clock: Clock) -> None:
    """A worker claims the due rows, the owner pauses the game before it acts on them: they
    are neither acted on nor closed, and after the resume they come again, moved by the
    pause."""
    table = clock.new_game({"deadline_hours": 24})
    uid = table.uid
    due = clock.due(uid)
    keeper = clock.keeper
    claimed = keeper._claim(due + S, "slow-worker", 10)
    assert len(claimed) == 3
    clock.service.pause(uid, table.creator, at=due + S)
    report = TickReport(due + S)
    for row_id in claimed:
        keeper._process(row_id, due + S, "slow-worker", report)
    assert report.timeouts == report.reminders == report.failed == 0
    assert [m.kind for m in clock.moves(uid)] == ["pause"]
    assert len(clock.deadlines(uid, open_only=True)) == 3
    assert clock.mails(uid, "reminder") == []
    clock.service.resume(uid, table.creator, at=due + 5 * H)
    assert clock.due(uid) == due + 5 * H - S
    report = clock.tick(due + 5 * H)
    assert report.timeouts == 1 and report.reminders == 0  # the timeout closed the points
    report = clock.tick(due + 5 * H)
    assert report.claimed == 0


def test_the_scheduler_jobs(clock: Clock) -> None:
    """What `titanpost worker` and `titanpost serve` schedule: the clock job ticks as of now."""
    from apscheduler.schedulers.background import BackgroundScheduler

    from app.features.clock.scheduler import Jobs, add_jobs

    jobs = Jobs(clock.service)
    assert jobs.keeper is clock.keeper and jobs.sender is None
    scheduler = BackgroundScheduler(timezone="UTC")
    add_jobs(scheduler, jobs)
    assert sorted(job.id for job in scheduler.get_jobs()) == ["bots", "clock", "digest",
                                                               "purge", "push", "replies",
                                                               "webhooks"]
    every = {job.id: job.trigger.interval for job in scheduler.get_jobs()
             if job.id not in ("digest", "purge")}  # (those two are daily, at an hour)
    assert clock.service.settings.mail_seconds == 10  # TITANPOST_MAIL_SECONDS's default
    assert {every[name] for name in ("push", "replies", "webhooks")} == {timedelta(seconds=10)}
    uid = clock.new_game({"deadline_hours": 24}).uid
    late, _ = clock.acting(uid)
    report = jobs.tick()
    assert report.claimed == 0 and report.outage is None
    last = clock.keeper.last_tick()
    assert last is not None and abs((last - report.now).total_seconds()) < 1
    # make the deadline pass: the next tick of the job times the seat out
    game_id = clock.game_row(uid).id
    with clock.service.session(write=True) as s:
        for row in s.exec(select(Deadline).where(Deadline.game_id == game_id)).all():
            row.due_at = aware(row.due_at) - 25 * H
            s.add(row)
        s.commit()
    report = jobs.tick()
    assert report.timeouts == 1 and report.failed == 0
    assert {m.actor for m in clock.moves(uid)} == {"timeout"}
    assert clock.seat(uid, late).missed_deadlines == 1


def test_serve_s_scheduler_logs_no_routine_lines(clock: Clock,
                                               caplog: pytest.LogCaptureFixture) -> None:
    """`titanpost serve` runs the jobs in a thread: their runs ("Running job", "executed
    successfully") are not logged, at INFO, twice a tick; APScheduler's warnings still are."""
    import logging
    import time
    from datetime import UTC, datetime

    from app.features.clock.scheduler import start_in_background

    logger = logging.getLogger("apscheduler")
    logger.setLevel(logging.NOTSET)  # as a fresh process has it
    caplog.set_level(logging.INFO)
    scheduler = start_in_background(clock.service)
    try:
        scheduler.get_job("clock").modify(next_run_time=datetime.now(UTC))
        for _ in range(100):
            if clock.keeper.last_tick() is not None:
                break
            time.sleep(0.05)
        assert clock.keeper.last_tick() is not None  # the job ran
    finally:
        scheduler.shutdown(wait=True)
    routine = [r.getMessage() for r in caplog.records
               if r.name.startswith("apscheduler") and r.levelno < logging.WARNING]
    assert routine == []
    assert logger.isEnabledFor(logging.WARNING)


def test_a_failing_job_logs_one_traceback_then_a_line_a_minute(
        caplog: pytest.LogCaptureFixture) -> None:
    """While the database is away every job fails at every run: the first failure is logged
    with its traceback, then one line a minute, then one line when the job works again."""
    from app.features.clock.scheduler import FailureLog

    now = [0.0]
    guard = FailureLog("clock", every=60, clock=lambda: now[0])
    failing = [True]

    def job() -> None:
        if failing[0]:
            raise ConnectionError("the database is away\nsecond line")

    caplog.set_level(logging.INFO, logger="titanpost.scheduler")
    for second in range(0, 150):  # a run a second for 150 s
        now[0] = float(second)
        guard.run(job)
    records = [r for r in caplog.records if r.name == "titanpost.scheduler"]
    assert [r.exc_info is not None for r in records] == [True, False, False]
    assert "still failing (61 runs): ConnectionError: the database is away" in \
        records[1].getMessage()
    failing[0] = False
    guard.run(job)
    guard.run(job)
    assert caplog.records[-1].getMessage() == "job clock works again after 150 failed run(s)"
    assert len([r for r in caplog.records if r.name == "titanpost.scheduler"]) == 4
