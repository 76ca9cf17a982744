"""Two scheduler processes on one database, processing the same due rows: each row is acted on
once (the claim is ``FOR UPDATE SKIP LOCKED`` on PostgreSQL, a conditional UPDATE under the
write lock on SQLite)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select

from app.core.config import Settings
from app.core.models import ClockTick, Deadline, Game, Move, OutboxMail, Seat
from app.features.clock.arithmetic import aware
from app.listeners import build_service
from app.service import GameService

ROOT = Path(__file__).resolve().parent.parent
GAMES = 40
SEEDS = 4
"""The games are dealt from this many chosen seeds in turn. A chosen seed's secret is scrypt of
it, a third of a second of CPU on purpose (app/features/fairness/dealing.py): forty seeds cost
each test some 20 s. What is tested is each game's rows being acted on once, whatever its deal;
every game here is dealt as one of the first four games of the forty seeds was."""
S = timedelta(seconds=1)

WORKER = """
import json, os, sys, time
from datetime import datetime
from app.core.config import Settings
from app.features.clock.timekeeper import install
from app.listeners import build_service

from tests.conftest import leash_searches

leash_searches(dict.__setitem__)  # each timed-out turn is the computer's (how well: not here)
url, now, worker, go = sys.argv[1:5]
service = build_service(Settings.from_env({"TITANPOST_DATABASE_URL": url,
                                           "TITANPOST_ENV": "test"}))
keeper = install(service)
service.engine.connect().close()  # connected before the start
open(go + "." + worker, "w").close()  # ready
until = time.monotonic() + 60
while not os.path.exists(go) and time.monotonic() < until:
    time.sleep(0.002)
report = keeper.process_due(datetime.fromisoformat(now), worker=worker, max_gap=None, batch=3)
print(json.dumps({"claimed": report.claimed, "timeouts": report.timeouts,
                  "reminders": report.reminders, "answered": report.answered,
                  "failed": report.failed}))
"""


def clean_env(url: str) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TITANPOST_")}
    return environ | {"TITANPOST_DATABASE_URL": url, "TITANPOST_ENV": "test"}


def start_games(service: GameService, count: int) -> list[str]:
    uids = []
    for n in range(count):
        created = service.create_game(
            seats=[{"email": f"g{n}p{i}@example.com"} for i in range(3)], seed=n % SEEDS,
            settings={"deadline_hours": 24})
        for inv in created["invitations"]:
            service.accept(inv["invite_token"])
        service.start(created["game"], created["creator_token"])
        uids.append(created["game"])
    return uids


def rows(service: GameService, model: Any, *where: Any) -> list[Any]:
    with service.session() as s:
        return list(s.exec(select(model).where(*where)).all())


def two_ticks_by_command(titanpost: str, url: str, now: datetime) -> list[str]:
    """Two ``titanpost admin tick`` processes started together; their outputs."""
    command = [titanpost, "admin", "tick", "--now", now.isoformat(), "--max-gap", "0"]
    procs = [subprocess.Popen(command, env=clean_env(url), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outputs.append(out)
    return outputs


def two_workers(url: str, now: datetime, folder: Path) -> list[dict[str, int]]:
    """Two python processes calling process_due (small batches, names w1 and w2), released
    together once both are connected."""
    go = folder / "go"
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, url, now.isoformat(), f"w{i}",
                               str(go)], env=clean_env(url), cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in (1, 2)]
    until = time.monotonic() + 60  # both import and connect
    while not all((folder / f"go.w{i}").exists() for i in (1, 2)):
        assert time.monotonic() < until and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    go.touch()
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


@pytest.fixture
def service(migrated_database_url: str) -> Iterator[GameService]:
    svc = build_service(Settings.from_env({"TITANPOST_DATABASE_URL": migrated_database_url,
                                           "TITANPOST_ENV": "test"}))
    yield svc
    svc.engine.dispose()


def test_two_processes_act_once_on_each_due_row(
        service: GameService, migrated_database_url: str, titanpost: str, tmp_path: Path) -> None:
    uids = start_games(service, GAMES)
    timeouts = rows(service, Deadline, Deadline.kind == "timeout")
    assert len(timeouts) == GAMES
    opened = [aware(r.opened_at) for r in timeouts if r.opened_at is not None]
    last_due = max(aware(r.due_at) for r in timeouts)
    assert rows(service, ClockTick) == []

    # 1. every reminder is due (not yet the deadlines): two `titanpost admin tick` at once,
    #    on a database that has never ticked (both may find no clock_ticks row)
    outputs = two_ticks_by_command(titanpost, migrated_database_url, max(opened) + 22 * 3600 * S)
    assert sum(int(out.split(": ")[1].split(" due")[0]) for out in outputs) == 2 * GAMES
    mails = rows(service, OutboxMail, OutboxMail.kind == "reminder")
    assert len(mails) == 2 * GAMES
    # one mail per (decision, point): <game.seq.seat.reminder.reminder-N@domain>
    sent = Counter((m.game_id, m.seq, m.message_id.split(".")[4].split("@")[0]) for m in mails)
    assert set(sent.values()) == {1}
    assert Counter(point for _, _, point in sent) == {"reminder-1": GAMES, "reminder-2": GAMES}
    points = rows(service, Deadline, col(Deadline.kind).startswith("reminder-"))
    assert len(points) == 2 * GAMES and {p.result for p in points} == {"sent"}

    # 2. every deadline is due: two worker processes with small batches
    now = last_due + S
    reports = two_workers(migrated_database_url, now, tmp_path)
    assert sum(r["failed"] for r in reports) == 0
    assert sum(r["timeouts"] for r in reports) == GAMES
    assert sum(r["claimed"] for r in reports) == GAMES
    fired = rows(service, Deadline, col(Deadline.seq) == 0, Deadline.kind == "timeout")
    assert {r.result for r in fired} == {"timed out"}
    assert all(r.done_at is not None for r in fired)
    workers = {r.claimed_by for r in fired}
    assert workers <= {"w1", "w2"}
    if len(workers) < 2:  # not a failure: one process may have been quicker to start
        print(f"only {workers} claimed rows on {migrated_database_url.split(':')[0]}: {reports}")
    # one timeout per decision: the late seat's turn, once, in every game
    moves = rows(service, Move, Move.actor == "timeout")
    games = {g.id: g for g in rows(service, Game)}
    assert {games[m.game_id].uid for m in moves} == set(uids)
    for game_id in games:
        mine = sorted((m for m in moves if m.game_id == game_id), key=lambda m: m.seq)
        assert [m.seq for m in mine] == list(range(1, len(mine) + 1))
        assert len({m.seat for m in mine}) == 1
        assert mine[0].input.startswith("pick ") and mine[-1].input == "end"
    deadline_mails = rows(service, OutboxMail, OutboxMail.kind == "deadline")
    assert Counter(m.game_id for m in deadline_mails) == Counter(dict.fromkeys(games, 1))
    assert Counter(s.missed_deadlines for s in rows(service, Seat)) == {0: 2 * GAMES, 1: GAMES}
    # the next decisions are open and not due
    still = rows(service, Deadline, col(Deadline.done_at).is_(None))
    assert len(still) == 3 * GAMES
    assert all(aware(r.due_at) > now for r in still)
    assert service.verify_all() == {}
