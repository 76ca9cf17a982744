"""The clock in a Great Race, on SQLite and PostgreSQL: the planning phase gives every crew its
own deadline at once; a sealed plan stops its seat's clock only; a seat out of time gets the pass
plan (every assistant on FUNDING) or the computer's plan sealed, and the reveal is one entry."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from app.features.clock.arithmetic import aware
from app.service import GameService
from tests.test_clock import Clock, S
from tests.test_clock import clock as clock  # the fixture: a server on the test database


def great_race(service: GameService, settings: dict[str, Any], seats: int = 3) -> str:
    created = service.create_game(
        seats=[{"email": f"p{i}@example.com"} for i in range(seats)], seed=4,
        settings=settings, circuits=["alger"], rules_name="great-race")
    for invitation in created["invitations"]:
        service.accept(invitation["invite_token"])
    service.start(created["game"], created["creator_token"])
    return str(created["game"])


def to_planning(clock: Clock, uid: str) -> list[int]:
    """Answer the bivouac as its players, with the computer's choices; the seats that plan."""
    for _ in range(30):
        to_act = clock.service.state(uid, None)["game"]["to_act"]
        if len(to_act) > 1:
            return list(to_act)
        clock.play(uid)
    raise AssertionError("no planning phase")


def seal(clock: Clock, uid: str, position: int, plan: str) -> dict[str, Any]:
    seq = int(clock.service.state(uid, position)["seq"])
    return clock.service.submit(uid, position, seq, plan)


def plan_deadlines(clock: Clock, uid: str, seq: int | None = None) -> dict[int, Any]:
    """The timeout rows of the pending decision (or of decision ``seq``), by seat."""
    if seq is None:
        seq = clock.service.state(uid, None)["decision_seq"]
    return {row.seat: row for row in clock.deadlines(uid, seq=seq)
            if row.kind.startswith("timeout")}


@pytest.mark.parametrize("action", ["pass", "bot"])
def test_a_late_planner_gets_a_plan_when_time_runs_out(clock: Clock, action: str) -> None:
    uid = great_race(clock.service, {"deadline_hours": 24, "on_timeout": action})
    planners = to_planning(clock, uid)
    assert planners == [0, 1, 2]
    rows = plan_deadlines(clock, uid)
    assert sorted(rows) == [0, 1, 2]  # one deadline per seat, all open at once
    assert all(row.done_at is None for row in rows.values())
    before = len(clock.moves(uid))
    assert seal(clock, uid, 0, "plan P1 M3 S1")["sealed"]
    assert seal(clock, uid, 1, "plan M2 F3")["sealed"]
    rows = plan_deadlines(clock, uid)
    assert rows[0].done_at is not None and rows[1].done_at is not None
    assert rows[2].done_at is None  # only the late seat's clock still runs
    assert len(clock.moves(uid)) == before  # sealed plans are not in the log
    due: datetime = aware(rows[2].due_at)
    clock.tick(due - S)
    assert len(clock.moves(uid)) == before
    clock.tick(due + S)
    moves = clock.moves(uid, after=before)
    assert len(moves) == 1  # the reveal: one entry with every plan, in seat order
    plans = moves[0].input.split("; ")
    assert [p.split()[0] for p in plans] == ["plan"] * 3
    assert plans[0].endswith("P1 M3 S1") and plans[1].endswith("M2 F3")
    if action == "pass":
        assert plans[2].endswith(" F5")
    view = clock.service.state(uid, None)["view"]
    assert view["phase"] == "convoy"
    crew = clock.service.state(uid, None)["game"]["seats"][2]["titans"][0]
    assert sum(view["crews"][crew]["assistants"].values()) == 5


def test_a_sealed_plan_does_not_end_the_others_time(clock: Clock) -> None:
    uid = great_race(clock.service, {"deadline_hours": 24, "on_timeout": "pass"}, seats=2)
    to_planning(clock, uid)
    planning = clock.service.state(uid, None)["decision_seq"]
    seal(clock, uid, 1, "plan P2 M3")
    rows = plan_deadlines(clock, uid)
    due = aware(rows[0].due_at)
    clock.tick(due - S)
    assert clock.service.state(uid, None)["game"]["to_act"] == [0]
    seal(clock, uid, 0, "plan M5")
    view = clock.service.state(uid, None)["view"]
    assert view["phase"] == "convoy"
    assert all(row.done_at is not None
               for row in plan_deadlines(clock, uid, planning).values())
